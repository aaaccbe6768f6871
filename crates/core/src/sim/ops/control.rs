//! Control: commands, twists, the control source and mode, gains, gravity compensation,
//! trajectories and the legacy action keys, and what each robot's control is doing.
use crate::config::{ControlMode, ControlSource};
use crate::control::{ControlStatus, PdGains, Trajectory};
use crate::sim::SimHandle;
use crate::sim::api::GainsUpdate;
use crate::sim::commands::{Bounded, Command, Operation, OperationError, OperationResult, Trash};
use crate::sim::physics::Physics;
use std::sync::atomic::Ordering;

impl SimHandle {
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

    /// Stops robot `robot`'s base at once, past its ramps.
    pub fn stop_base(&self, robot: usize) -> Result<(), OperationError> {
        let world = self.world();
        self.robot(&world, robot)?;
        self.send_in(
            world.number,
            0,
            Command::StopBase {
                robot: robot as u16,
            },
        );
        Ok(())
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
}

impl Physics {
    /// The PD gains of every actuator of `robot`.
    pub(in crate::sim) fn set_gains(
        &mut self,
        robot: usize,
        gains: Box<[PdGains]>,
        enable_pd: bool,
    ) -> Result<(), OperationError> {
        let check = self.robot_index(robot).and_then(|r| {
            let controller = &self.controllers.robots[r];
            if gains.len() != controller.gains.len() {
                return Err(OperationError::GainCount {
                    given: gains.len(),
                    actuators: controller.gains.len(),
                });
            }
            if gains.iter().any(|g| !g.is_valid()) {
                return Err(OperationError::BadGains);
            }
            Ok(r)
        });
        if let Ok(r) = check {
            let controller = &mut self.controllers.robots[r];
            controller.gains.copy_from_slice(&gains);
            if enable_pd {
                controller.mode = ControlMode::Pd;
            }
        }
        self.trash(Trash::Gains(gains));
        check?;
        Ok(())
    }

    /// `robot` follows `trajectory` from the current state.
    pub(in crate::sim) fn follow_trajectory(
        &mut self,
        robot: usize,
        trajectory: Box<Trajectory>,
    ) -> Result<(), OperationError> {
        let check = self.robot_index(robot).and_then(|r| {
            let n = self.controllers.robots[r].actuators.len();
            if trajectory.actuators.iter().any(|i| *i >= n) {
                return Err(OperationError::TrajectoryActuator);
            }
            trajectory.validate().map_err(OperationError::Trajectory)?;
            Ok(r)
        });
        match check {
            Ok(r) => {
                let time = self.data.time();
                let qpos = self.data.qpos();
                let old = self.controllers.robots[r].follow(trajectory, time, qpos);
                self.trash_trajectory(old);
            }
            Err(e) => {
                self.trash(Trash::Trajectory(trajectory));
                return Err(e);
            }
        }
        Ok(())
    }
}
