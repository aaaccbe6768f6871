//! Pacing: the mode (realtime, fast, paused), the speed and stepping N while paused.
use crate::config::SimMode;
use crate::sim::SimHandle;
use crate::sim::commands::{Operation, OperationError, OperationResult};
use crate::sim::physics::Physics;

impl SimHandle {
    pub fn pause(&self) -> OperationResult {
        self.request(Operation::SetMode(SimMode::Paused))
    }

    pub fn set_mode(&self, mode: SimMode) -> OperationResult {
        self.request(Operation::SetMode(mode))
    }

    /// Steps `n` times while paused and returns when done.
    pub fn step(&self, n: u64) -> OperationResult {
        self.request(Operation::Step(n))
    }

    pub fn set_speed(&self, speed: f64) -> OperationResult {
        self.request(Operation::SetSpeed(speed))
    }
}

impl Physics {
    /// Switches realtime / fast / paused; a running step request ends.
    pub(in crate::sim) fn set_mode(&mut self, mode: SimMode) -> Result<(), OperationError> {
        self.interrupt_steps();
        if mode == SimMode::Realtime && self.mode != SimMode::Realtime {
            self.deadline_ns = crate::sim::clock::now_ns();
        }
        self.mode = mode;
        if mode == SimMode::Paused {
            self.pause_for(crate::sim::physics::PauseCause::Requested);
        } else {
            self.publish_mode();
        }
        Ok(())
    }

    /// The real-time factor target of realtime mode.
    pub(in crate::sim) fn set_speed(&mut self, speed: f64) -> Result<(), OperationError> {
        if !crate::config::SPEED_RANGE.contains(&speed) {
            return Err(OperationError::BadSpeed(speed));
        }
        self.speed = speed;
        self.deadline_ns = crate::sim::clock::now_ns();
        self.publish_mode();
        Ok(())
    }
}
