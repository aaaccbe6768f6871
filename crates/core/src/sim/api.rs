//! What the handle's operations share (their families are in `ops`): robot, actuator and
//! keyframe names resolved, values checked against bounds, and mistakes turned into errors
//! that name what was wrong (counted, and logged at a limited rate).
use super::SimHandle;
use super::commands::{Bounded, OperationError};
use super::world::WorldGeneration;
use crate::model::RobotMap;
use std::sync::atomic::Ordering;

/// Partial gains of one actuator, as the legacy `set_gains` message sends them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GainsUpdate {
    pub kp: Option<f64>,
    pub kv: Option<f64>,
    pub torque_limit: Option<f64>,
}

pub(in crate::sim) fn rejected(message: impl Into<String>) -> OperationError {
    OperationError::Invalid(message.into())
}

impl SimHandle {
    /// The control settings a robot was configured with.
    pub fn configured_control(&self, robot: usize) -> Option<crate::config::ControlConfig> {
        self.world().controls.get(robot).cloned()
    }

    /// The robot whose own names (keyframes, bodies) commands may use unprefixed: the
    /// config's only robot, while the world holds it.
    pub fn lone_robot(&self) -> Option<usize> {
        let world = self.world();
        match &world.config.unprefixed_robot {
            Some(name) => world.robot_index(name),
            None => (world.robots.len() == 1).then_some(0),
        }
    }

    /// The robots of the current world (a view that keeps that world).
    pub fn robots(&self) -> Robots {
        Robots(self.world())
    }

    /// Counts and logs (rate-limited) a bad command, and returns it as an error. Adapters
    /// call it for what they refuse before anything reaches the handle.
    pub fn bad_command(&self, key: &str, message: String) -> OperationError {
        self.shared
            .stats
            .rejected_commands
            .fetch_add(1, Ordering::Relaxed);
        self.shared.log_limiter.warn(key, &message);
        rejected(message)
    }

    /// Counts and logs (rate-limited) an operation refused on the handle side (an unknown
    /// robot, keyframe, body, preset, snapshot, a file that cannot be read), and returns it.
    pub(in crate::sim) fn refuse(&self, message: impl Into<String>) -> OperationError {
        let message = message.into();
        self.note_refusal(&message);
        rejected(message)
    }

    pub fn robot_index(&self, name: &str) -> Result<usize, OperationError> {
        let world = self.world();
        world.robot_index(name).ok_or_else(|| {
            let known: Vec<&str> = world.robots.iter().map(|r| r.name.as_str()).collect();
            self.refuse(format!("unknown robot '{name}'; robots: {known:?}"))
        })
    }

    pub(in crate::sim) fn robot<'w>(
        &self,
        world: &'w WorldGeneration,
        robot: usize,
    ) -> Result<&'w RobotMap, OperationError> {
        world
            .robots
            .get(robot)
            .ok_or_else(|| self.refuse(format!("no robot with index {robot}")))
    }

    /// Index within the robot of the actuator named `name` (its own name or the name of the
    /// joint it drives).
    pub fn actuator_index(&self, robot: usize, name: &str) -> Result<usize, OperationError> {
        self.actuator_index_in(&self.world(), robot, name)
    }

    /// `actuator_index` in world `world` (a task planning in the world it holds).
    pub fn actuator_index_in(
        &self,
        world: &WorldGeneration,
        robot: usize,
        name: &str,
    ) -> Result<usize, OperationError> {
        let map = self.robot(world, robot)?;
        if let Some(i) = map.actuators.iter().position(|a| a.name == name) {
            return Ok(i);
        }
        // Else the actuator that drives the joint of that name (a joint transmission: a
        // tendon's or site's id could equal the joint's).
        let joint = map.joint(name).map(|j| j.id);
        let model = &world.model;
        map.actuators
            .iter()
            .position(|a| {
                model.actuator_trntype()[a.id] == mujoco_rs::prelude::MjtTrn::mjTRN_JOINT
                    && Some(model.actuator_trnid()[a.id][0] as usize) == joint
            })
            .ok_or_else(|| {
                self.bad_command(
                    "unknown actuator",
                    format!(
                        "robot '{}' has no actuator or actuated joint '{name}'",
                        map.name
                    ),
                )
            })
    }

    pub(in crate::sim) fn keyframe_index_in(
        &self,
        world: &WorldGeneration,
        robot: Option<usize>,
        name: &str,
    ) -> Result<usize, OperationError> {
        if let Some(r) = robot
            && let Some(key) = self.robot(world, r)?.keyframe(name)
        {
            return Ok(key.id);
        }
        let model = &world.model;
        model
            .name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_KEY, name)
            .ok_or_else(|| {
                let known: Vec<String> = (0..model.ffi().nkey as usize)
                    .filter_map(|k| {
                        model
                            .id_to_name(mujoco_rs::prelude::MjtObjBase::mjOBJ_KEY, k)
                            .map(str::to_string)
                    })
                    .collect();
                self.refuse(format!("unknown keyframe '{name}'; keyframes: {known:?}"))
            })
    }

    /// A preset refusal of the physics thread (which knows robots by index), with the
    /// robot's name.
    pub(in crate::sim) fn name_robot(&self, error: OperationError) -> OperationError {
        match error {
            OperationError::Preset { robot, error } => match self.robots().get(robot) {
                Some(map) => OperationError::Invalid(format!("robot '{}': {error}", map.name)),
                None => OperationError::Preset { robot, error },
            },
            other => other,
        }
    }
}

/// The robots of one world generation, as a slice (the view keeps that world alive).
pub struct Robots(std::sync::Arc<WorldGeneration>);

impl std::ops::Deref for Robots {
    type Target = [RobotMap];
    fn deref(&self) -> &[RobotMap] {
        &self.0.robots
    }
}

/// The length of a vector (NaN stays NaN: the physics thread refuses it by name).
pub(in crate::sim) fn norm(v: &[f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Refuses a value beyond the bound `limits` sets for `what` (a NaN passes here and is
/// refused as not finite by the operation).
pub(in crate::sim) fn within(
    what: Bounded,
    value: f64,
    limits: &crate::config::LimitsConfig,
) -> Result<(), OperationError> {
    let bound = what.of(limits);
    if value > bound {
        return Err(OperationError::Beyond { what, value, bound });
    }
    Ok(())
}
