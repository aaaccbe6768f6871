//! The sensors a robot's URDF declares in `<gazebo>` blocks, given to the robot: its IMUs
//! mounted on the robot's spec (a site and its three MuJoCo sensors), and its lidars,
//! cameras and IMU topics added to the robot's config where the config does not name a
//! sensor of the same name (the config wins), before the config's sensors are mounted.
use super::notes;
use super::pose::wxyz;
use super::urdf::{GazeboDrive, GazeboImu, GazeboSensors, PointKind};
use crate::config::{
    BaseConfig, BaseKind, ImuTopic, NoiseConfig, OdometryConfig, OdometrySource, RobotConfig,
};
use mujoco_rs::prelude::*;
use nalgebra::UnitQuaternion;

/// Notes each sensor taken and warns of each left out, with the file `origin` that
/// declares them.
pub fn report(found: &GazeboSensors, origin: &str) {
    let plugins = &found.plugins;
    for taken in found.taken.iter().chain(&plugins.taken) {
        notes::note(&format!("{origin}: <gazebo> {taken}"));
    }
    for left_out in found.left_out.iter().chain(&plugins.left_out) {
        notes::warn(&format!("{origin}: <gazebo> {left_out}: left out"));
    }
}

/// Mounts each IMU of `found` on `spec` (names without the robot prefix, which attaching
/// adds); the IMUs mounted. One whose link is missing or whose name a site already has is
/// left out with a warning.
pub fn mount_imus<'a>(
    found: &'a GazeboSensors,
    spec: &mut MjSpec,
    origin: &str,
) -> Vec<&'a GazeboImu> {
    let mut mounted = Vec::new();
    for imu in &found.imus {
        match mount_imu(imu, spec) {
            Ok(()) => mounted.push(imu),
            Err(why) => notes::warn(&format!(
                "{origin}: <gazebo> sensor '{}': {why}: left out",
                imu.name
            )),
        }
    }
    mounted
}

fn mount_imu(imu: &GazeboImu, spec: &mut MjSpec) -> Result<(), String> {
    if spec.site(&imu.name).is_some() {
        return Err(format!("the model already has a site '{}'", imu.name));
    }
    let body = spec
        .body_mut(&imu.link)
        .ok_or_else(|| format!("the model has no body '{}'", imu.link))?;
    let [roll, pitch, yaw] = imu.rpy;
    let turn = UnitQuaternion::from_euler_angles(roll, pitch, yaw);
    // Group 5: a site the viewer and cameras do not draw by default.
    let site = body
        .add_site()
        .with_pos(imu.xyz)
        .with_quat(wxyz(&turn))
        .with_size([0.005; 3]);
    site.set_group(5);
    site.set_name(&imu.name)
        .map_err(|e| format!("cannot name its site: {e}"))?;
    let sensors = [
        (MjtSensor::mjSENS_FRAMEQUAT, imu.orientation_sensor()),
        (MjtSensor::mjSENS_GYRO, imu.gyro_sensor()),
        (MjtSensor::mjSENS_ACCELEROMETER, imu.accelerometer_sensor()),
    ];
    for (kind, name) in sensors {
        let added = spec.add_sensor().with_type(kind);
        added.set_objtype(MjtObjBase::mjOBJ_SITE);
        added.set_objname(&imu.name);
        added
            .set_name(&name)
            .map_err(|e| format!("cannot name its sensor {name}: {e}"))?;
    }
    Ok(())
}

/// `robot` with the lidars and cameras of `found` and the topics of the IMUs `mounted`.
pub fn with_sensors(
    robot: &RobotConfig,
    found: &GazeboSensors,
    mounted: &[&GazeboImu],
    origin: &str,
) -> RobotConfig {
    let mut robot = robot.clone();
    if let Some(drive) = &found.plugins.drive {
        add_drive(&mut robot, drive, origin);
    }
    add_lidars(&mut robot, found, origin);
    add_cameras(&mut robot, found, origin);
    add_points(&mut robot, found, origin);
    for imu in mounted {
        add_imu(&mut robot, imu);
    }
    robot
}

fn add_noise(robot: &mut RobotConfig, name: String, noise: &Option<NoiseConfig>) {
    if let Some(noise) = noise {
        robot.noise.entry(name).or_insert_with(|| noise.clone());
    }
}

fn add_lidars(robot: &mut RobotConfig, found: &GazeboSensors, origin: &str) {
    for gazebo in &found.lidars {
        let lidar = &gazebo.lidar;
        if robot.lidars.iter().any(|l| l.name == lidar.name) {
            continue;
        }
        if let Some((field, why)) = lidar.problem() {
            notes::warn(&format!(
                "{origin}: <gazebo> sensor '{}': {field} {why}: left out",
                lidar.name
            ));
            continue;
        }
        add_noise(robot, lidar.name.clone(), &gazebo.noise);
        robot.lidars.push(lidar.clone());
    }
}

/// GPS receivers, barometers and altimeters join the config's lists, its own winning by name.
fn add_points(robot: &mut RobotConfig, found: &GazeboSensors, origin: &str) {
    for gazebo in &found.points {
        let sensor = &gazebo.sensor;
        let taken = robot
            .point_sensors()
            .iter()
            .any(|(_, list)| list.iter().any(|s| s.name == sensor.name));
        if taken {
            continue;
        }
        if let Some((field, why)) = sensor.problem() {
            notes::warn(&format!(
                "{origin}: <gazebo> sensor '{}': {field} {why}: left out",
                sensor.name
            ));
            continue;
        }
        for (key, noise) in &gazebo.noise {
            add_noise(robot, key.clone(), &Some(noise.clone()));
        }
        let list = match gazebo.kind {
            PointKind::Gps => &mut robot.gps,
            PointKind::Barometer => &mut robot.barometers,
            PointKind::Altimeter => &mut robot.altimeters,
        };
        list.push(sensor.clone());
    }
}

/// The cameras join those the config lists; a config with `cameras: []` (every camera off)
/// keeps them off.
fn add_cameras(robot: &mut RobotConfig, found: &GazeboSensors, origin: &str) {
    if robot.cameras.as_ref().is_some_and(Vec::is_empty) || found.cameras.is_empty() {
        return;
    }
    let mut listed = robot.cameras.take().unwrap_or_default();
    for gazebo in &found.cameras {
        let camera = &gazebo.camera;
        if listed.iter().any(|c| c.camera == camera.camera) {
            continue;
        }
        if let Some((field, why)) = camera.problem() {
            notes::warn(&format!(
                "{origin}: <gazebo> sensor '{}': {field} {why}: left out",
                camera.camera
            ));
            continue;
        }
        add_noise(robot, camera.name().to_string(), &gazebo.noise);
        add_noise(
            robot,
            format!("{}/depth", camera.name()),
            &gazebo.depth_noise,
        );
        listed.push(camera.clone());
    }
    robot.cameras = Some(listed);
}

fn add_imu(robot: &mut RobotConfig, imu: &GazeboImu) {
    if robot.ros.imu.iter().any(|t| t.topic == imu.topic) {
        return;
    }
    add_noise(robot, imu.gyro_sensor(), &imu.gyro_noise);
    add_noise(robot, imu.accelerometer_sensor(), &imu.accel_noise);
    robot.ros.imu.push(ImuTopic {
        topic: imu.topic.clone(),
        orientation: Some(imu.orientation_sensor()),
        angular_velocity: Some(imu.gyro_sensor()),
        linear_acceleration: Some(imu.accelerometer_sensor()),
        frame_id: Some(imu.frame_id.clone()),
        rate: Some(imu.rate),
        controller: None,
    });
}

/// The drive plugin's base and wheel odometry, unless the config gives the robot a base or
/// its odometry. Gazebo's drives keep the last twist until the next: no timeout.
fn add_drive(robot: &mut RobotConfig, drive: &GazeboDrive, origin: &str) {
    if robot.control.base.is_some() {
        return;
    }
    let warn = |what: String| notes::warn(&format!("{origin}: <gazebo> diff drive: {what}"));
    if drive.cmd_vel.trim_start_matches('/') != "cmd_vel" {
        warn(format!(
            "its twist comes on the robot's cmd_vel, not '{}'",
            drive.cmd_vel
        ));
    }
    robot.control.base = Some(BaseConfig {
        kind: drive.kind,
        left_wheel: drive.left.clone(),
        right_wheel: drive.right.clone(),
        wheel_radius: Some(drive.radius),
        wheel_separation: Some(drive.separation),
        cmd_vel_timeout: 0.0,
        max_wheel_acceleration: drive.wheel_acceleration,
        controller: None,
    });
    if robot.ros.odometry != OdometryConfig::default() {
        return;
    }
    robot.ros.odometry = OdometryConfig {
        enabled: drive.odometry.is_some(),
        frame_id: drive.odom_frame.clone(),
        // A planar move's odometry is the model's own pose.
        source: match drive.kind {
            BaseKind::DiffDrive => OdometrySource::Wheels,
            BaseKind::Planar => OdometrySource::GroundTruth,
        },
        topic: drive.odometry.clone().unwrap_or_else(|| "odom".into()),
        tf: drive.odom_tf,
        ..OdometryConfig::default()
    };
}
