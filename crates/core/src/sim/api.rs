//! The handle's name-based operations, the ones adapters (ROS, ZMQ, CLI) call: they resolve
//! robot, joint, actuator, body and keyframe names, check lengths and values, and turn
//! mistakes into errors that name what was wrong (counted, and logged at a limited rate).
use super::SimHandle;
use super::commands::{
    Bounded, Command, Operation, OperationDone, OperationError, OperationResult,
};
use super::snapshot::Snapshot;
use super::tap::TapLayout;
use super::world::WorldGeneration;
use crate::config::{ControlMode, ControlSource};
use crate::control::{ControlStatus, PdGains, Trajectory, find_preset};
use crate::model::RobotMap;
use crate::record::{self, Recording, RecordingSummary};
use std::path::Path;
use std::sync::atomic::Ordering;

/// Partial gains of one actuator, as the legacy `set_gains` message sends them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GainsUpdate {
    pub kp: Option<f64>,
    pub kv: Option<f64>,
    pub torque_limit: Option<f64>,
}

fn rejected(message: impl Into<String>) -> OperationError {
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
    fn refuse(&self, message: impl Into<String>) -> OperationError {
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

    fn robot<'w>(
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

    /// Sets the sticky command of named actuators (or actuated joints): `names` and
    /// `values` must have the same length; NaN and infinite values are rejected.
    pub fn command_actuators(
        &self,
        source: ControlSource,
        robot: usize,
        names: &[&str],
        values: &[f64],
    ) -> Result<(), OperationError> {
        if names.len() != values.len() {
            return Err(self.bad_command(
                "length",
                format!("{} names but {} values", names.len(), values.len()),
            ));
        }
        if let Some((name, v)) = names.iter().zip(values).find(|(_, v)| !v.is_finite()) {
            return Err(self.bad_command("nan", format!("value {v} for '{name}' is not finite")));
        }
        let world = self.world();
        let mut ids = Vec::with_capacity(names.len());
        for name in names {
            ids.push(
                self.robot(&world, robot)?.actuators
                    [self.actuator_index_in(&world, robot, name)?]
                .id,
            );
        }
        for (id, value) in ids.into_iter().zip(values) {
            self.send_in(
                world.number,
                0,
                Command::Actuator {
                    source,
                    actuator: id as u32,
                    value: *value,
                },
            );
        }
        Ok(())
    }

    /// Sets the sticky command of every actuator of the robot, in its actuator order
    /// (ros2_control-style forward command).
    pub fn command_all(
        &self,
        source: ControlSource,
        robot: usize,
        values: &[f64],
    ) -> Result<(), OperationError> {
        let world = self.world();
        let map = self.robot(&world, robot)?;
        if values.len() != map.actuators.len() {
            return Err(self.bad_command(
                "length",
                format!(
                    "robot '{}' has {} actuators, the command has {} values",
                    map.name,
                    map.actuators.len(),
                    values.len()
                ),
            ));
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(self.bad_command("nan", "NaN or infinite value in a command".into()));
        }
        for (a, value) in map.actuators.iter().zip(values) {
            self.send_in(
                world.number,
                0,
                Command::Actuator {
                    source,
                    actuator: a.id as u32,
                    value: *value,
                },
            );
        }
        Ok(())
    }

    pub fn command_twist(
        &self,
        source: ControlSource,
        robot: usize,
        linear_x: f64,
        linear_y: f64,
        angular_z: f64,
    ) -> Result<(), OperationError> {
        let world = self.world();
        self.robot(&world, robot)?;
        if ![linear_x, linear_y, angular_z]
            .iter()
            .all(|v| v.is_finite())
        {
            return Err(self.bad_command("nan", "NaN or infinite value in a twist".into()));
        }
        let fastest = [linear_x, linear_y, angular_z]
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        let bound = Bounded::Speed.of(&world.config.limits);
        if fastest > bound {
            let refusal = OperationError::Beyond {
                what: Bounded::Speed,
                value: fastest,
                bound,
            };
            return Err(self.bad_command("twist bound", format!("twist: {refusal}")));
        }
        self.send_in(
            world.number,
            0,
            Command::Twist {
                source,
                robot: robot as u16,
                linear_x,
                linear_y,
                angular_z,
            },
        );
        Ok(())
    }

    /// A keyframe of the robot by its own name, or of the world by its full name.
    pub fn keyframe_index(
        &self,
        robot: Option<usize>,
        name: &str,
    ) -> Result<usize, OperationError> {
        self.keyframe_index_in(&self.world(), robot, name)
    }

    fn keyframe_index_in(
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

    /// A body of the robot by its own name, or of the world by its full name.
    pub fn body_index(&self, robot: Option<usize>, name: &str) -> Result<usize, OperationError> {
        let world = self.world();
        if let Some(r) = robot
            && let Some(body) = self.robot(&world, r)?.body(name)
        {
            return Ok(body.id);
        }
        world
            .model
            .name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_BODY, name)
            .ok_or_else(|| self.refuse(format!("unknown body '{name}'")))
    }

    pub fn apply_wrench(
        &self,
        robot: Option<usize>,
        body: &str,
        force: [f64; 3],
        torque: [f64; 3],
        duration: f64,
    ) -> OperationResult {
        let body = self.body_index(robot, body)?;
        self.apply_body_wrench(body, force, torque, duration)
    }

    /// A wrench in the world frame on body `body` (a model index), at its centre of mass,
    /// for `duration` seconds of sim time.
    pub fn apply_body_wrench(
        &self,
        body: usize,
        force: [f64; 3],
        torque: [f64; 3],
        duration: f64,
    ) -> OperationResult {
        self.apply_body_wrench_in(self.generation(), body, force, torque, duration)
    }

    /// `apply_body_wrench` with a body index of world generation `generation`: refused
    /// (`OtherWorld`) once the world has changed.
    pub fn apply_body_wrench_in(
        &self,
        generation: u64,
        body: usize,
        force: [f64; 3],
        torque: [f64; 3],
        duration: f64,
    ) -> OperationResult {
        let wrench = [
            force[0], force[1], force[2], torque[0], torque[1], torque[2],
        ];
        let limits = &self.world().config.limits;
        within(Bounded::Force, norm(&force).max(norm(&torque)), limits)?;
        self.request_in(
            generation,
            Operation::ApplyWrench {
                body,
                wrench,
                duration,
            },
        )
    }

    pub fn set_body_pose(
        &self,
        robot: Option<usize>,
        body: &str,
        position: [f64; 3],
        quaternion_wxyz: [f64; 4],
    ) -> OperationResult {
        let body = self.body_index(robot, body)?;
        self.set_body_state(body, position, quaternion_wxyz, [0.0; 6])
    }

    /// Places the free body `body` (a model index) and sets its velocity: linear then
    /// angular, both in the world frame.
    pub fn set_body_state(
        &self,
        body: usize,
        position: [f64; 3],
        quaternion_wxyz: [f64; 4],
        velocity_world: [f64; 6],
    ) -> OperationResult {
        let limits = &self.world().config.limits;
        within(Bounded::Position, norm(&position), limits)?;
        let [vx, vy, vz, wx, wy, wz] = velocity_world;
        within(
            Bounded::Speed,
            norm(&[vx, vy, vz]).max(norm(&[wx, wy, wz])),
            limits,
        )?;
        self.request(Operation::SetBodyPose {
            body,
            position,
            quaternion_wxyz,
            velocity_world,
        })
    }

    pub fn set_source(&self, robot: usize, source: ControlSource) -> OperationResult {
        self.request(Operation::SetSource { robot, source })
    }

    pub fn set_control_mode(&self, robot: usize, mode: ControlMode) -> OperationResult {
        self.request(Operation::SetControlMode { robot, mode })
    }

    pub fn set_gravity_compensation(&self, robot: usize, enabled: bool) -> OperationResult {
        self.request(Operation::SetGravityCompensation { robot, enabled })
    }

    /// The legacy `set_gains`: actuators named (own name or full name) get the given gains
    /// (a missing one takes its default), every other actuator of the robot gets the
    /// defaults, and the robot switches to PD control.
    pub fn set_gains(&self, robot: usize, updates: &[(String, GainsUpdate)]) -> OperationResult {
        let world = self.world();
        let map = self.robot(&world, robot)?;
        let mut gains = vec![PdGains::DEFAULT; map.actuators.len()].into_boxed_slice();
        for (name, update) in updates {
            let index = map
                .actuators
                .iter()
                .position(|a| a.name == *name || a.full_name == *name)
                .ok_or_else(|| {
                    self.bad_command(
                        "unknown actuator",
                        format!("robot '{}' has no actuator '{name}'", map.name),
                    )
                })?;
            let d = PdGains::DEFAULT;
            gains[index] = PdGains {
                kp: update.kp.unwrap_or(d.kp),
                kv: update.kv.unwrap_or(d.kv),
                torque_limit: update.torque_limit.unwrap_or(d.torque_limit),
            };
        }
        self.request_in(
            world.number,
            Operation::SetGains {
                robot,
                gains,
                enable_pd: true,
            },
        )
    }

    /// Gives every actuator of `robot` the same PD gains (its `control.gains`); whether PD
    /// is on stays as it is.
    pub fn set_robot_gains(&self, robot: usize, gains: PdGains) -> OperationResult {
        let world = self.world();
        let map = self.robot(&world, robot)?;
        self.request_in(
            world.number,
            Operation::SetGains {
                robot,
                gains: vec![gains; map.actuators.len()].into_boxed_slice(),
                enable_pd: false,
            },
        )
    }

    /// Follows `trajectory` on joints (or actuators) named `joints`, in its order; its
    /// actuator indices are found here.
    pub fn follow_trajectory(
        &self,
        robot: usize,
        joints: &[&str],
        mut trajectory: Trajectory,
    ) -> OperationResult {
        let world = self.world();
        trajectory.actuators.clear();
        for joint in joints {
            trajectory
                .actuators
                .push(self.actuator_index_in(&world, robot, joint)?);
        }
        trajectory
            .validate()
            .map_err(|m| self.bad_command("trajectory", format!("trajectory: {m}")))?;
        self.request_in(
            world.number,
            Operation::FollowTrajectory {
                robot,
                trajectory: Box::new(trajectory),
            },
        )
    }

    pub fn cancel_trajectory(&self, robot: usize) -> OperationResult {
        self.request(Operation::CancelTrajectory { robot })
    }

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

    /// A preset refusal of the physics thread (which knows robots by index), with the
    /// robot's name.
    fn name_robot(&self, error: OperationError) -> OperationError {
        match error {
            OperationError::Preset { robot, error } => match self.robots().get(robot) {
                Some(map) => OperationError::Invalid(format!("robot '{}': {error}", map.name)),
                None => OperationError::Preset { robot, error },
            },
            other => other,
        }
    }

    pub fn stop_preset(&self, robot: usize) -> OperationResult {
        self.request(Operation::StopPreset { robot })
    }

    /// The legacy action-key bitmask of a robot (bit i: action key i held).
    pub fn actions(&self, robot: usize) -> i32 {
        self.world()
            .actions
            .get(robot)
            .map(|a| a.load(Ordering::Relaxed))
            .unwrap_or(0)
    }

    /// Sets the legacy action-key bitmask (from ROS, a console, or any other source).
    pub fn set_actions(&self, robot: usize, mask: i32) -> Result<(), OperationError> {
        let world = self.world();
        let slot = world
            .actions
            .get(robot)
            .ok_or_else(|| self.refuse(format!("no robot with index {robot}")))?;
        slot.store(mask, Ordering::Relaxed);
        Ok(())
    }

    /// The controller settings and sticky commands of a robot, read from a snapshot.
    pub fn control_status(&self, robot: usize) -> Result<ControlStatus, OperationError> {
        let world = self.world();
        self.robot(&world, robot)?;
        let snapshot = self.capture()?;
        if snapshot.generation != world.number {
            return Err(OperationError::WorldChanged {
                now: snapshot.generation,
            });
        }
        let len = |r: usize| {
            crate::control::RobotController::state_len_for(world.robots[r].actuators.len())
        };
        let at = world.model.ffi().nv as usize + (0..robot).map(len).sum::<usize>();
        let n = world.robots[robot].actuators.len();
        Ok(ControlStatus::decode(
            n,
            &snapshot.controllers[at..at + len(robot)],
        ))
    }

    /// Keeps a snapshot of the current state in memory under `name`.
    pub fn save_named_snapshot(&self, name: &str) -> Result<u64, OperationError> {
        let snapshot = self.capture()?;
        let step = snapshot.step;
        if let Ok(mut named) = self.shared.named_snapshots.lock() {
            named.insert(name.to_string(), snapshot);
        }
        Ok(step)
    }

    pub fn restore_named_snapshot(&self, name: &str) -> OperationResult {
        let snapshot = self
            .shared
            .named_snapshots
            .lock()
            .ok()
            .and_then(|named| named.get(name).cloned())
            .ok_or_else(|| self.refuse(format!("no snapshot named '{name}'")))?;
        self.restore(snapshot)
    }

    pub fn snapshot_names(&self) -> Vec<String> {
        self.shared
            .named_snapshots
            .lock()
            .map(|n| n.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Captures the state and writes it to `path` atomically.
    pub fn save_snapshot_file(&self, path: &Path) -> Result<OperationDone, OperationError> {
        let snapshot = self.capture()?;
        snapshot
            .save(path)
            .map_err(|e| self.refuse(format!("{}: {e}", path.display())))?;
        Ok(OperationDone {
            step: snapshot.step,
            time: 0.0,
            snapshot: None,
        })
    }

    /// Loads a snapshot file and restores it; a file from another model is refused.
    pub fn load_snapshot_file(&self, path: &Path) -> OperationResult {
        let snapshot =
            Snapshot::load(path).map_err(|e| rejected(format!("{}: {e}", path.display())))?;
        self.restore(Box::new(snapshot)).map_err(|e| match e {
            OperationError::Stopped => e,
            refused => OperationError::Invalid(format!("{}: {refused}", path.display())),
        })
    }

    /// Starts recording qpos and qvel of every step to a CSV file.
    pub fn start_recording(&self, path: &Path) -> OperationResult {
        let world = self.world();
        let recording = Recording::start(path, record::column_names(&world.model))
            .map_err(|e| self.refuse(format!("{}: {e}", path.display())))?;
        let ring = recording.ring.clone();
        let mut slot = self
            .shared
            .recording
            .lock()
            .map_err(|_| self.refuse("recorder state poisoned"))?;
        if slot.is_some() {
            return Err(self.refuse("a recording is already running"));
        }
        let done = self.request_in(
            world.number,
            Operation::Tap {
                ring,
                layout: TapLayout::Recording,
            },
        )?;
        *slot = Some(recording);
        Ok(done)
    }

    /// Stops the recording and waits until every row is in the file.
    pub fn stop_recording(&self) -> Result<RecordingSummary, OperationError> {
        let recording = self
            .shared
            .recording
            .lock()
            .map_err(|_| self.refuse("recorder state poisoned"))?
            .take()
            .ok_or_else(|| self.refuse("no recording is running"))?;
        self.request(Operation::Untap(recording.ring.clone()))?;
        let path = recording.path.display().to_string();
        recording
            .finish()
            .map_err(|e| self.refuse(format!("{path}: {e}")))
    }

    /// Loads a CSV trajectory (recorded, or external with joint names with or without the
    /// robot prefix) and plays it back kinematically; the simulation pauses at its end.
    pub fn play_csv(&self, path: &Path) -> OperationResult {
        let text = std::fs::read_to_string(path)
            .map_err(|e| self.refuse(format!("{}: {e}", path.display())))?;
        let world = self.world();
        let rows = record::parse(&text, &world.model, &world.robots)
            .map_err(|m| self.refuse(format!("{}: {m}", path.display())))?;
        self.request_in(world.number, Operation::Playback(Box::new(rows)))
    }

    /// Plays `rows` back kinematically (made for the current world's model).
    pub fn play(&self, rows: record::Playback) -> OperationResult {
        self.request_in(self.world().number, Operation::Playback(Box::new(rows)))
    }

    pub fn stop_playback(&self) -> OperationResult {
        self.request(Operation::StopPlayback)
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
fn norm(v: &[f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Refuses a value beyond the bound `limits` sets for `what` (a NaN passes here and is
/// refused as not finite by the operation).
fn within(
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
