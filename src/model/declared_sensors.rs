//! Sensor topics that a robot's controllers file gives: each imu, force-torque or range
//! sensor broadcaster it declares stands for a topic of the robot config's (`ros.imu`,
//! `ros.force_torque`, `ros.range`) under the broadcaster's name, read from the MuJoCo
//! sensors its `sensor_name` prefixes (`config::broadcasters`).
use super::RobotMap;
use crate::config::Config;
use crate::config::broadcasters::{Broadcaster, SensorKind};
use crate::config::controllers::ControllersFile;
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// The MuJoCo sensor type a name suffix of `kind` stands for.
fn sensor_type(kind: SensorKind, k: usize) -> MjtSensor {
    match (kind, k) {
        (SensorKind::Imu, 0) => MjtSensor::mjSENS_FRAMEQUAT,
        (SensorKind::Imu, 1) => MjtSensor::mjSENS_GYRO,
        (SensorKind::Imu, _) => MjtSensor::mjSENS_ACCELEROMETER,
        (SensorKind::ForceTorque, 0) => MjtSensor::mjSENS_FORCE,
        (SensorKind::ForceTorque, _) => MjtSensor::mjSENS_TORQUE,
        (SensorKind::Range, _) => MjtSensor::mjSENS_RANGEFINDER,
    }
}

/// Adds to each robot's config the sensor topics its broadcasters stand for. One whose
/// parameters or sensors do not fit is left out with a warning (the controller manager
/// refuses to configure it, saying why).
pub fn apply(
    config: &mut Config,
    model: &MjModel,
    robots: &[RobotMap],
    declared: &[Option<Arc<ControllersFile>>],
) {
    for (index, file) in declared.iter().enumerate() {
        let robot = &mut config.robots[index];
        // A world made from this one's config (a spawn, a delete) derives them again.
        robot.ros.imu.retain(|t| t.controller.is_none());
        robot.ros.force_torque.retain(|t| t.controller.is_none());
        robot.ros.range.retain(|t| t.controller.is_none());
        let Some(file) = file else { continue };
        let map = &robots[index];
        for (name, controller) in &file.controllers {
            let Some(kind) = SensorKind::of(&controller.type_name) else {
                continue;
            };
            let sensors = Broadcaster::parse(kind, &controller.params).and_then(|broadcaster| {
                let sensors = broadcaster.sensors(|sensor| {
                    let suffix = kind.suffixes().iter().position(|s| sensor.ends_with(s));
                    map.sensors.iter().any(|s| {
                        s.name == sensor
                            && suffix
                                .is_some_and(|k| model.sensor_type()[s.id] == sensor_type(kind, k))
                    })
                })?;
                Ok((broadcaster, sensors))
            });
            let (broadcaster, sensors) = match sensors {
                Ok(found) => found,
                Err(reason) => {
                    log::warn!(
                        "robot '{}': {}'s broadcaster '{name}' publishes nothing: {reason}",
                        robot.name,
                        file.origin
                    );
                    continue;
                }
            };
            match kind {
                SensorKind::Imu => robot.ros.imu.push(broadcaster.imu(name, &sensors)),
                SensorKind::ForceTorque => robot
                    .ros
                    .force_torque
                    .push(broadcaster.force_torque(name, &sensors)),
                SensorKind::Range => {
                    let sensor = sensors[0].clone().unwrap_or_default();
                    robot.ros.range.push(broadcaster.range(name, &sensor));
                }
            }
        }
    }
}
