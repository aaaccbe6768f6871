//! Sensor topics that a robot's controllers file gives: each imu, force-torque or range
//! sensor broadcaster it declares stands for a topic of the robot config's (`ros.imu`,
//! `ros.force_torque`, `ros.range`) under the broadcaster's name, read from the MuJoCo
//! sensors its `sensor_name` names, through the URDF's `<ros2_control>` sensor of that name
//! where there is one (`config::broadcasters`).
use super::RobotMap;
use crate::config::Config;
use crate::config::broadcasters::{Broadcaster, SensorKind};
use crate::config::controller_params::ControllerError;
use crate::config::controllers::ControllersFile;
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether each sensor broadcaster of a world is active: its topic publishes only then, as
/// upstream's does. The controller manager sets them; the topics read them.
#[derive(Debug, Default)]
pub struct BroadcasterGates(Vec<(String, Arc<AtomicBool>)>);

impl BroadcasterGates {
    /// A closed gate per broadcaster that a topic of `config` stands for.
    pub fn of(config: &Config) -> Self {
        let names = config.robots.iter().flat_map(|robot| {
            let ros = &robot.ros;
            let imu = ros.imu.iter().map(|t| &t.controller);
            let wrench = ros.force_torque.iter().map(|t| &t.controller);
            let range = ros.range.iter().map(|t| &t.controller);
            imu.chain(wrench).chain(range).flatten()
        });
        Self(
            names
                .map(|name| (name.clone(), Arc::new(AtomicBool::new(false))))
                .collect(),
        )
    }

    /// The gate of broadcaster `controller`.
    pub fn gate(&self, controller: &str) -> Option<Arc<AtomicBool>> {
        self.0
            .iter()
            .find(|(name, _)| name == controller)
            .map(|(_, gate)| gate.clone())
    }

    /// Opens each gate whose broadcaster `active` says is active, and closes the others.
    pub fn set(&self, active: impl Fn(&str) -> bool) {
        for (name, gate) in &self.0 {
            gate.store(active(name), Ordering::Relaxed);
        }
    }
}

/// The MuJoCo sensor type the `k`th sensor of `kind` must be.
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
            let parsed =
                Broadcaster::parse(kind, &controller.params).map_err(ControllerError::from);
            let sensors = parsed.and_then(|broadcaster| {
                let wanted = broadcaster.wanted(&map.hardware_sensors);
                let sensors = broadcaster.sensors(wanted, |k, sensor| {
                    map.sensors.iter().any(|s| {
                        s.name == sensor && model.sensor_type()[s.id] == sensor_type(kind, k)
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
