//! Bases that a robot's controllers file gives: a diff_drive_controller stands for the
//! robot config's `control.base` (and its odometry) when the config has none, so that the
//! physics thread's one base controller drives the robot either way.
use super::RobotMap;
use crate::config::Config;
use crate::config::controller_params::ControllerError;
use crate::config::controllers::ControllersFile;

use mujoco_rs::prelude::*;
use std::sync::Arc;

/// Whether some actuator of `map` drives joint `joint` other than as a position servo.
fn drives_wheel(model: &MjModel, map: &RobotMap, joint: &str) -> Result<(), ControllerError> {
    let id = map
        .joint(joint)
        .ok_or_else(|| ControllerError::NoJoint {
            robot: map.name.clone(),
            joint: joint.to_string(),
        })?
        .id;
    let actuator = map
        .actuators
        .iter()
        .find(|a| {
            model.actuator_trntype()[a.id] == MjtTrn::mjTRN_JOINT
                && model.actuator_trnid()[a.id][0] as usize == id
        })
        .ok_or_else(|| ControllerError::NoActuator(joint.to_string()))?;
    if super::position_servo_joint(model, actuator.id).is_some() {
        return Err(ControllerError::PositionServoWheel(joint.to_string()));
    }
    Ok(())
}

/// Gives each robot without `control.base` the base its controllers file's
/// diff_drive_controller stands for. One whose parameters do not fit is left without (the
/// controller manager refuses to configure it, saying why).
pub fn apply(
    config: &mut Config,
    model: &MjModel,
    robots: &[RobotMap],
    declared: &[Option<Arc<ControllersFile>>],
) {
    for (index, file) in declared.iter().enumerate() {
        let Some(file) = file else { continue };
        let robot = &mut config.robots[index];
        for (name, controller) in &file.controllers {
            let Some(parsed) = &controller.diff_drive else {
                continue;
            };
            if let Some(base) = &robot.control.base {
                if base.controller.as_deref() != Some(name.as_str()) {
                    log::warn!(
                        "robot '{}': its config's control.base drives the base; {}'s '{name}' gives none",
                        robot.name,
                        file.origin
                    );
                }
                continue;
            }
            let parsed = parsed.clone().map_err(ControllerError::from);
            let drive = parsed.and_then(|drive| {
                for wheel in drive.left_wheels.iter().chain(&drive.right_wheels) {
                    drives_wheel(model, &robots[index], wheel)?;
                }
                Ok(drive)
            });
            match drive {
                Ok(drive) => {
                    let mut base = drive.base();
                    base.controller = Some(name.clone());
                    robot.control.base = Some(base);
                    robot.ros.odometry = drive.odometry(name, &robot.ros.odometry);
                    log::info!(
                        "robot '{}': base from {}'s diff_drive_controller '{name}'",
                        robot.name,
                        file.origin
                    );
                }
                Err(reason) => log::warn!(
                    "robot '{}': {}'s diff_drive_controller '{name}' gives no base: {reason}",
                    robot.name,
                    file.origin
                ),
            }
        }
    }
}
