//! Commands and operations sent to the physics thread.
//!
//! Commands (fire and forget, e.g. an actuator value) go through a preallocated lock-free
//! queue that the physics thread drains at the start of each step. Operations (pause, step N,
//! speed) go through a bounded channel and may carry a reply channel.
use crate::config::SimMode;

/// A value for the physics thread; applied at the start of the next step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    /// `ctrl[actuator] = value` (sticky until overwritten).
    SetCtrl { actuator: u32, value: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operation {
    SetMode(SimMode),
    SetSpeed(f64),
    /// Steps N times as fast as possible; only while paused. Replies when done.
    Step(u64),
    /// Ends the physics thread.
    Shutdown,
}

#[derive(Debug, Clone, PartialEq)]
pub enum OperationError {
    Rejected(String),
    /// The physics thread has ended.
    Stopped,
}

impl std::fmt::Display for OperationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OperationError::Rejected(m) => f.write_str(m),
            OperationError::Stopped => f.write_str("the physics thread has stopped"),
        }
    }
}

impl std::error::Error for OperationError {}

/// The reply to an operation: the step counter and sim time once it is done.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OperationDone {
    pub step: u64,
    pub time: f64,
}

pub type OperationResult = Result<OperationDone, OperationError>;

pub struct Request {
    pub operation: Operation,
    pub reply: Option<crossbeam_channel::Sender<OperationResult>>,
}
