//! Mobile-base controllers driven by a twist (vx, vy, wz in the base frame): differential
//! drive turns it into wheel speeds, the planar base sets the floating base's planar
//! velocity directly. A twist older than the timeout stops the base.
use super::twist_limiter::{LimitError, TwistLimiter};
use super::{ActuatorInfo, ActuatorKind, PdGains};
use crate::config::{BaseConfig, BaseKind};
use crate::model::RobotMap;
use mujoco_rs::prelude::*;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TwistCommand {
    pub linear_x: f64,
    pub linear_y: f64,
    pub angular_z: f64,
    /// Sim time at which it arrived.
    pub stamp: f64,
}

impl TwistCommand {
    pub const LEN: usize = 4;

    pub fn write(&self, out: &mut [f64]) {
        out[..4].copy_from_slice(&[self.linear_x, self.linear_y, self.angular_z, self.stamp]);
    }

    pub fn read(values: &[f64]) -> Self {
        Self {
            linear_x: values[0],
            linear_y: values[1],
            angular_z: values[2],
            stamp: values[3],
        }
    }
}

#[derive(Debug, Clone)]
enum Drive {
    DiffDrive {
        /// Each side's wheels, as indices of the robot's actuators.
        left: Vec<usize>,
        right: Vec<usize>,
        radius: f64,
        separation: f64,
        /// The most a wheel's rim speed changes in one step, m/s.
        max_step: Option<f64>,
    },
    Planar {
        qpos_adr: usize,
        dof_adr: usize,
    },
}

#[derive(Debug, Clone)]
pub struct BaseController {
    drive: Drive,
    /// Seconds (sim time) after which a twist no longer drives the base; 0: never.
    pub timeout: f64,
    /// The left and right wheels' rim speeds last commanded, m/s (where a ramp starts).
    rim_speeds: [f64; 2],
    /// The twist's velocity, acceleration and jerk limits, and the step they act over.
    limiter: TwistLimiter,
    timestep: f64,
}

/// A base config that does not fit the robot; the text names the `control.base` field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BaseError {
    #[error("{field} must be a positive number, got {value}")]
    NotPositive { field: &'static str, value: f64 },
    #[error("{0} is required for a diff_drive base")]
    Missing(&'static str),
    #[error("cmd_vel_timeout must be >= 0, got {0}")]
    Timeout(f64),
    #[error("max_wheel_acceleration must be a positive number, got {0}")]
    Acceleration(f64),
    #[error("{field}: the robot has no joint '{joint}'")]
    NoJoint { field: &'static str, joint: String },
    #[error("{field}: no actuator drives joint '{joint}'")]
    NoActuator { field: &'static str, joint: String },
    #[error(
        "{field}: joint '{joint}' has a position servo; a wheel needs a velocity servo or a motor"
    )]
    PositionServo { field: &'static str, joint: String },
    #[error("a planar base needs a floating base (free joint)")]
    NotFloating,
    #[error(transparent)]
    Limits(#[from] LimitError),
}

fn positive(value: Option<f64>, field: &'static str) -> Result<f64, BaseError> {
    match value {
        Some(v) if v.is_finite() && v > 0.0 => Ok(v),
        Some(value) => Err(BaseError::NotPositive { field, value }),
        None => Err(BaseError::Missing(field)),
    }
}

impl BaseController {
    pub fn new(
        model: &MjModel,
        robot: &RobotMap,
        actuators: &[ActuatorInfo],
        config: &BaseConfig,
    ) -> Result<Self, BaseError> {
        if !(config.cmd_vel_timeout.is_finite() && config.cmd_vel_timeout >= 0.0) {
            return Err(BaseError::Timeout(config.cmd_vel_timeout));
        }
        let drive = match config.kind {
            BaseKind::DiffDrive => {
                let wheel = |field: &'static str, name: &String| {
                    let joint = robot.joint(name).ok_or_else(|| BaseError::NoJoint {
                        field,
                        joint: name.to_string(),
                    })?;
                    let index = actuators
                        .iter()
                        .position(|a| a.joint.is_some_and(|(j, _, _)| j == joint.id))
                        .ok_or_else(|| BaseError::NoActuator {
                            field,
                            joint: name.to_string(),
                        })?;
                    if actuators[index].kind == ActuatorKind::PositionServo {
                        return Err(BaseError::PositionServo {
                            field,
                            joint: name.to_string(),
                        });
                    }
                    Ok(index)
                };
                let side = |field: &'static str, names: &[String]| {
                    if names.is_empty() {
                        return Err(BaseError::Missing(field));
                    }
                    names
                        .iter()
                        .map(|name| wheel(field, name))
                        .collect::<Result<Vec<_>, _>>()
                };
                let max_step = match config.max_wheel_acceleration {
                    Some(a) if a.is_finite() && a > 0.0 => Some(a * model.opt().timestep),
                    Some(a) => return Err(BaseError::Acceleration(a)),
                    None => None,
                };
                Drive::DiffDrive {
                    left: side("left_wheel", &config.left_wheel)?,
                    right: side("right_wheel", &config.right_wheel)?,
                    radius: positive(config.wheel_radius, "wheel_radius")?,
                    separation: positive(config.wheel_separation, "wheel_separation")?,
                    max_step,
                }
            }
            BaseKind::Planar => {
                let free = robot.floating_joint.ok_or(BaseError::NotFloating)?;
                Drive::Planar {
                    qpos_adr: model.jnt_qposadr()[free] as usize,
                    dof_adr: model.jnt_dofadr()[free] as usize,
                }
            }
        };
        Ok(Self {
            drive,
            timeout: config.cmd_vel_timeout,
            rim_speeds: [0.0; 2],
            limiter: TwistLimiter::new(&config.limits)?,
            timestep: model.opt().timestep,
        })
    }

    /// Stops at once, past every ramp (a controller deactivated, a reset): the next step
    /// starts from rest.
    pub fn halt(&mut self) {
        self.rim_speeds = [0.0; 2];
        self.limiter.halt();
    }

    /// Drives the base with `twist` (already checked against the timeout).
    pub fn apply(
        &mut self,
        twist: &TwistCommand,
        actuators: &[ActuatorInfo],
        gains: &[PdGains],
        qpos: &[f64],
        qvel: &mut [f64],
        ctrl: &mut [f64],
    ) {
        let (linear_x, angular_z) =
            self.limiter
                .limit(twist.linear_x, twist.angular_z, self.timestep);
        match &self.drive {
            Drive::DiffDrive {
                left,
                right,
                radius,
                separation,
                max_step,
            } => {
                let (radius, separation, max_step) = (*radius, *separation, *max_step);
                let half = separation / 2.0;
                let wanted = [linear_x - angular_z * half, linear_x + angular_z * half];
                for (rim, wanted) in self.rim_speeds.iter_mut().zip(wanted) {
                    *rim = match max_step {
                        Some(step) => *rim + (wanted - *rim).clamp(-step, step),
                        None => wanted,
                    };
                }
                let sides = [
                    (left, self.rim_speeds[0] / radius),
                    (right, self.rim_speeds[1] / radius),
                ];
                let wheels = sides
                    .into_iter()
                    .flat_map(|(wheels, speed)| wheels.iter().map(move |&w| (w, speed)));
                for (index, speed) in wheels {
                    let info = &actuators[index];
                    let value = match (info.kind, info.joint) {
                        (ActuatorKind::Force, Some((_, _, dof))) => {
                            let g = &gains[index];
                            super::bounded(
                                g.kv * (speed - qvel[dof]),
                                -g.torque_limit,
                                g.torque_limit,
                            )
                        }
                        _ => speed,
                    };
                    ctrl[info.id] = info.clamp_ctrl(value);
                }
            }
            &Drive::Planar { qpos_adr, dof_adr } => {
                // Heading from the base quaternion (w, x, y, z): yaw about world z.
                let q = &qpos[qpos_adr + 3..qpos_adr + 7];
                let yaw = (2.0 * (q[0] * q[3] + q[1] * q[2]))
                    .atan2(1.0 - 2.0 * (q[2] * q[2] + q[3] * q[3]));
                let (sin, cos) = yaw.sin_cos();
                qvel[dof_adr] = cos * linear_x - sin * twist.linear_y;
                qvel[dof_adr + 1] = sin * linear_x + cos * twist.linear_y;
                qvel[dof_adr + 5] = angular_z;
            }
        }
    }
}
