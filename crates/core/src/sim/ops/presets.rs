//! Presets: a robot's named sequence of poses, loaded, played from a pose and stopped.
use crate::control::{Preset, find_preset};
use crate::sim::SimHandle;
use crate::sim::commands::{Operation, OperationError, OperationResult, Trash};
use crate::sim::physics::Physics;

impl SimHandle {
    /// Loads a built-in or user preset by name (stopped).
    pub fn load_preset(&self, robot: usize, name: &str) -> OperationResult {
        let world = self.world();
        let control = world
            .controls
            .get(robot)
            .ok_or_else(|| self.refuse(format!("no robot with index {robot}")))?;
        let preset = find_preset(control, name)
            .ok_or_else(|| self.refuse(format!("unknown preset '{name}'")))?;
        preset
            .validate()
            .map_err(|e| self.refuse(e.describe(&preset)))?;
        self.request_in(
            world.number,
            Operation::LoadPreset {
                robot,
                preset: Box::new(preset),
            },
        )
    }

    pub fn play_preset(&self, robot: usize, pose: usize) -> OperationResult {
        self.request(Operation::PlayPreset {
            robot,
            pose,
            delay: crate::control::START_DELAY,
        })
        .map_err(|e| self.name_robot(e))
    }

    pub fn go_to_pose(&self, robot: usize, pose: usize) -> OperationResult {
        self.request(Operation::PlayPreset {
            robot,
            pose,
            delay: 0.0,
        })
        .map_err(|e| self.name_robot(e))
    }

    pub fn stop_preset(&self, robot: usize) -> OperationResult {
        self.request(Operation::StopPreset { robot })
    }
}

impl Physics {
    /// Installs `preset` (stopped) for `robot`.
    pub(in crate::sim) fn load_preset(
        &mut self,
        robot: usize,
        preset: Box<Preset>,
    ) -> Result<(), OperationError> {
        let check = self.robot_index(robot).and_then(|r| {
            preset
                .validate()
                .map(|_| r)
                .map_err(|error| OperationError::Preset { robot, error })
        });
        match check {
            Ok(r) => {
                if let Some(old) = self.controllers.robots[r].sequencer.load(preset) {
                    self.trash(Trash::Preset(old));
                }
            }
            Err(e) => {
                self.trash(Trash::Preset(preset));
                return Err(e);
            }
        }
        Ok(())
    }

    /// Plays the loaded preset of `robot` from pose `pose` after `delay` seconds.
    pub(in crate::sim) fn play_preset(
        &mut self,
        robot: usize,
        pose: usize,
        delay: f64,
    ) -> Result<(), OperationError> {
        let r = self.robot_index(robot)?;
        if !(delay.is_finite() && delay >= 0.0) {
            return Err(OperationError::BadDelay);
        }
        let time = self.data.time();
        let qpos = self.data.qpos();
        let old = self.controllers.robots[r]
            .play_preset(pose, time, qpos, delay)
            .map_err(|error| OperationError::Preset { robot, error })?;
        self.trash_trajectory(old);
        Ok(())
    }
}
