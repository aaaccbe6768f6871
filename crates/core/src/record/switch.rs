//! An MCAP recording started and stopped on request. The streams record; the ROS node's
//! `~/record` service and the console ask. Both reach the recorder through this trait, so
//! neither adapter depends on the other.
use std::path::{Path, PathBuf};

/// Why a recording did not start or stop, in the recorder's words.
pub type SwitchError = Box<dyn std::error::Error + Send + Sync>;

/// What one recording wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingReport {
    pub path: PathBuf,
    pub steps_written: u64,
    pub steps_dropped: u64,
}

/// Starts and stops the run's one MCAP recording.
pub trait RecordingSwitch: Send + Sync {
    /// Starts recording to `path`, with the step records when `every_step`.
    fn start(&self, path: &Path, every_step: bool) -> Result<(), SwitchError>;

    /// Ends the recording in progress and says what it wrote.
    fn stop(&self) -> Result<RecordingReport, SwitchError>;

    /// Whether a recording started without saying otherwise keeps every step.
    fn every_step(&self) -> bool;
}
