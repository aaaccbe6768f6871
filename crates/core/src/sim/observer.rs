//! A narrow handle for the adapters that only watch the simulation (the sampler that
//! publishes the topics): the world, the newest state, the live figures and the following of
//! each world. It can neither command nor pause, so such an adapter cannot reach the physics
//! thread's queues.
use super::{
    Following, PlanContext, SimHandle, SimStats, StateSnapshot, WorldGeneration, priority,
};
use crate::error::InputResult;
use crate::model::World;
use std::sync::Arc;

#[derive(Clone)]
pub struct Observer(SimHandle);

impl SimHandle {
    /// This simulation, to watch only.
    pub fn observer(&self) -> Observer {
        Observer(self.clone())
    }
}

impl Observer {
    /// The world as it is now (see `SimHandle::world`).
    pub fn world(&self) -> Arc<WorldGeneration> {
        self.0.world()
    }

    /// A buffer for the latest state of the current world.
    pub fn latest_state_buffer(&self) -> StateSnapshot {
        self.0.latest_state_buffer()
    }

    /// The mode the physics thread runs in, and why it last paused.
    pub fn mode(&self) -> (crate::config::SimMode, super::PauseCause) {
        (self.0.mode(), self.0.pause_cause())
    }

    /// Whether a step request runs (the state moves though the mode is paused).
    pub fn stepping(&self) -> bool {
        self.0
            .shared
            .stepping
            .load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn stats(&self) -> SimStats {
        self.0.stats()
    }

    /// What the kernel granted the physics thread (None until it runs).
    pub fn granted_priority(&self) -> Option<priority::Granted> {
        self.0.granted_priority()
    }

    /// Follows the world with `planner` (see `SimHandle::follow`).
    pub fn follow<P, F>(&self, planner: F) -> InputResult<Following<P>>
    where
        P: Send + 'static,
        F: Fn(&World, &PlanContext) -> InputResult<P> + Send + Sync + 'static,
    {
        self.0.follow(planner)
    }
}
