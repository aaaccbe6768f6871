//! Resets and keyframes: back to the start, to a keyframe, or holding one's pose.
use crate::sim::SimHandle;
use crate::sim::commands::{Operation, OperationError, OperationResult, Trash};
use crate::sim::physics::Physics;

impl SimHandle {
    pub fn reset(&self) -> OperationResult {
        self.request(Operation::Reset)
    }

    /// A keyframe of the robot by its own name, or of the world by its full name.
    pub fn keyframe_index(
        &self,
        robot: Option<usize>,
        name: &str,
    ) -> Result<usize, OperationError> {
        self.keyframe_index_in(&self.world(), robot, name)
    }

    pub fn reset_to_keyframe(&self, robot: Option<usize>, name: &str) -> OperationResult {
        let world = self.world();
        let key = self.keyframe_index_in(&world, robot, name)?;
        self.request_in(world.number, Operation::ResetToKeyframe(key))
    }

    pub fn hold_keyframe(&self, robot: Option<usize>, name: &str) -> OperationResult {
        let world = self.world();
        let key = self.keyframe_index_in(&world, robot, name)?;
        self.request_in(world.number, Operation::HoldKeyframe(key))
    }
}

impl Physics {
    /// mj_resetData; the controllers go back to their configured state.
    pub(in crate::sim) fn reset_all(&mut self) -> Result<(), OperationError> {
        self.reset_to_initial(None)
    }

    /// mj_resetData, at sim time `time` (None: 0); the controllers go back to their
    /// configured state; the good state kept for a divergence is forgotten.
    pub(in crate::sim) fn reset_to_initial(
        &mut self,
        time: Option<f64>,
    ) -> Result<(), OperationError> {
        self.data.reset();
        if let Some(time) = time {
            self.data.set_time(time);
        }
        self.guard.forget();
        let shared = &self.shared;
        for robot in &mut self.controllers.robots {
            if let Some(old) = robot.reset() {
                let _ = shared.trash.push(Trash::Trajectory(old));
            }
        }
        crate::sim::initial::apply(
            &self.world.model,
            &self.world.robots,
            &mut self.data,
            &mut self.controllers,
            |_| true,
            |old| {
                let _ = shared.trash.push(Trash::Trajectory(old));
            },
        );
        self.clear_transients();
        self.republish();
        Ok(())
    }

    /// Resets to keyframe `key`; the controllers hold its pose.
    pub(in crate::sim) fn reset_to_keyframe(&mut self, key: usize) -> Result<(), OperationError> {
        let key = self.key_index(key)?;
        self.guard.forget();
        if let Err(e) = self.data.reset_keyframe(key) {
            return Err(OperationError::Mujoco(e));
        }
        let model = self.world.model.clone();
        let (nq, nu) = (model.ffi().nq as usize, model.ffi().nu as usize);
        let qpos = &model.key_qpos()[key * nq..(key + 1) * nq];
        let ctrl = &model.key_ctrl()[key * nu..(key + 1) * nu];
        self.hold(qpos, Some(ctrl));
        self.clear_transients();
        self.republish();
        Ok(())
    }

    /// Keeps the state; the controllers drive the robots to keyframe `key`.
    pub(in crate::sim) fn hold_keyframe(&mut self, key: usize) -> Result<(), OperationError> {
        let key = self.key_index(key)?;
        let model = self.world.model.clone();
        let (nq, nu) = (model.ffi().nq as usize, model.ffi().nu as usize);
        self.hold(
            &model.key_qpos()[key * nq..(key + 1) * nq],
            Some(&model.key_ctrl()[key * nu..(key + 1) * nu]),
        );
        Ok(())
    }

    pub(in crate::sim) fn key_index(&self, key: usize) -> Result<usize, OperationError> {
        if key < self.data.model().ffi().nkey as usize {
            Ok(key)
        } else {
            Err(OperationError::NoKeyframe(key))
        }
    }

    /// Every controller holds the pose of `qpos` (with `key_ctrl` for the rest).
    pub(in crate::sim) fn hold(&mut self, qpos: &[f64], key_ctrl: Option<&[f64]>) {
        let shared = &self.shared;
        for robot in &mut self.controllers.robots {
            if let Some(old) = robot.hold_pose(qpos, key_ctrl) {
                let _ = shared.trash.push(Trash::Trajectory(old));
            }
        }
    }
}
