//! The sensors a robot's URDF declares in `<gazebo>` blocks, given to the robot: its IMUs and
//! magnetometers and force-torque sensors mounted on the robot's spec (a site and its MuJoCo sensors), and its lidars,
//! cameras, point and contact sensors and its IMU, magnetometer and wrench topics added to the
//! robot's config where the config does not name a sensor of the same name (the config
//! wins), before the config's sensors are mounted.
use super::notes;
use super::pose::wxyz;
use super::urdf::{
    GazeboDrive, GazeboForceTorque, GazeboImu, GazeboMagnetometer, GazeboSensors, PointKind,
};
use crate::config::{
    BaseConfig, BaseKind, ForceTorqueTopic, ImuTopic, MagnetometerTopic, NoiseConfig,
    OdometryConfig, OdometrySource, RobotConfig,
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

/// The `<gazebo>` sensors that became sites and MuJoCo sensors on the robot's spec.
pub struct Mounted<'a> {
    pub imus: Vec<&'a GazeboImu>,
    pub magnetometers: Vec<&'a GazeboMagnetometer>,
    pub force_torques: Vec<&'a GazeboForceTorque>,
}

/// Mounts each IMU, magnetometer and force-torque sensor of `found` on `spec` (names without
/// the robot prefix, which attaching adds). One whose link is missing or whose name a site
/// already has is left out with a warning.
pub fn mount<'a>(found: &'a GazeboSensors, spec: &mut MjSpec, origin: &str) -> Mounted<'a> {
    Mounted {
        imus: mount_each(&found.imus, spec, origin),
        magnetometers: mount_each(&found.magnetometers, spec, origin),
        force_torques: mount_each(&found.force_torques, spec, origin),
    }
}

/// A `<gazebo>` sensor that becomes a site with MuJoCo sensors on it.
trait OnSite {
    fn site(&self) -> Site<'_>;
    /// The kind and name of each MuJoCo sensor on its site.
    fn sensors(&self) -> Vec<(MjtSensor, String)>;
}

impl OnSite for GazeboImu {
    fn site(&self) -> Site<'_> {
        Site::new(&self.name, &self.link, self.xyz, self.rpy)
    }

    fn sensors(&self) -> Vec<(MjtSensor, String)> {
        vec![
            (MjtSensor::mjSENS_FRAMEQUAT, self.orientation_sensor()),
            (MjtSensor::mjSENS_GYRO, self.gyro_sensor()),
            (MjtSensor::mjSENS_ACCELEROMETER, self.accelerometer_sensor()),
        ]
    }
}

impl OnSite for GazeboMagnetometer {
    fn site(&self) -> Site<'_> {
        Site::new(&self.name, &self.link, self.xyz, self.rpy)
    }

    fn sensors(&self) -> Vec<(MjtSensor, String)> {
        vec![(MjtSensor::mjSENS_MAGNETOMETER, self.sensor())]
    }
}

impl OnSite for GazeboForceTorque {
    fn site(&self) -> Site<'_> {
        Site::new(&self.name, &self.link, self.xyz, self.rpy)
    }

    fn sensors(&self) -> Vec<(MjtSensor, String)> {
        vec![
            (MjtSensor::mjSENS_FORCE, self.force_sensor()),
            (MjtSensor::mjSENS_TORQUE, self.torque_sensor()),
        ]
    }
}

/// Mounts each of `sensors`; those mounted.
fn mount_each<'a, T: OnSite>(sensors: &'a [T], spec: &mut MjSpec, origin: &str) -> Vec<&'a T> {
    let mut mounted = Vec::new();
    for sensor in sensors {
        let site = sensor.site();
        match mount_site(spec, &site, &sensor.sensors()) {
            Ok(()) => mounted.push(sensor),
            Err(why) => notes::warn(&format!(
                "{origin}: <gazebo> sensor '{}': {why}: left out",
                site.name
            )),
        }
    }
    mounted
}

/// Where a sensor's site goes: its name, link and pose on the link.
struct Site<'a> {
    name: &'a str,
    link: &'a str,
    xyz: [f64; 3],
    rpy: [f64; 3],
}

impl<'a> Site<'a> {
    fn new(name: &'a str, link: &'a str, xyz: [f64; 3], rpy: [f64; 3]) -> Self {
        Self {
            name,
            link,
            xyz,
            rpy,
        }
    }
}

/// A site at `at` with a MuJoCo sensor of each kind and name of `sensors` on it.
fn mount_site(spec: &mut MjSpec, at: &Site, sensors: &[(MjtSensor, String)]) -> Result<(), String> {
    if spec.site(at.name).is_some() {
        return Err(format!("the model already has a site '{}'", at.name));
    }
    let body = spec
        .body_mut(at.link)
        .ok_or_else(|| format!("the model has no body '{}'", at.link))?;
    let [roll, pitch, yaw] = at.rpy;
    let turn = UnitQuaternion::from_euler_angles(roll, pitch, yaw);
    // Group 5: a site the viewer and cameras do not draw by default.
    let site = body
        .add_site()
        .with_pos(at.xyz)
        .with_quat(wxyz(&turn))
        .with_size([0.005; 3]);
    site.set_group(5);
    site.set_name(at.name)
        .map_err(|e| format!("cannot name its site: {e}"))?;
    for (kind, name) in sensors {
        let added = spec.add_sensor().with_type(*kind);
        added.set_objtype(MjtObjBase::mjOBJ_SITE);
        added.set_objname(at.name);
        added
            .set_name(name)
            .map_err(|e| format!("cannot name its sensor {name}: {e}"))?;
    }
    Ok(())
}

/// `robot` with the lidars, cameras, point and contact sensors of `found` and the topics of
/// the IMUs, magnetometers and force-torque sensors `mounted`.
pub fn with_sensors(
    robot: &RobotConfig,
    found: &GazeboSensors,
    mounted: &Mounted,
    origin: &str,
) -> RobotConfig {
    let mut robot = robot.clone();
    if let Some(drive) = &found.plugins.drive {
        add_drive(&mut robot, drive, origin);
    }
    add_lidars(&mut robot, found, origin);
    add_cameras(&mut robot, found, origin);
    add_points(&mut robot, found, origin);
    add_contacts(&mut robot, found, origin);
    for imu in &mounted.imus {
        add_imu(&mut robot, imu);
    }
    for mag in &mounted.magnetometers {
        add_magnetometer(&mut robot, mag);
    }
    for ft in &mounted.force_torques {
        add_force_torque(&mut robot, ft);
    }
    robot
}

fn add_noise(robot: &mut RobotConfig, name: String, noise: Option<&NoiseConfig>) {
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
        add_noise(robot, lidar.name.clone(), gazebo.noise.as_ref());
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
            add_noise(robot, key.clone(), Some(noise));
        }
        let list = match gazebo.kind {
            PointKind::Gps => &mut robot.gps,
            PointKind::Barometer => &mut robot.barometers,
            PointKind::Altimeter => &mut robot.altimeters,
        };
        list.push(sensor.clone());
    }
}

/// Contact sensors join the config's, its own winning by name.
fn add_contacts(robot: &mut RobotConfig, found: &GazeboSensors, origin: &str) {
    for gazebo in &found.contacts {
        let sensor = &gazebo.sensor;
        if robot.contacts.iter().any(|s| s.name == sensor.name) {
            continue;
        }
        if let Some((field, why)) = sensor.problem() {
            notes::warn(&format!(
                "{origin}: <gazebo> sensor '{}': {field} {why}: left out",
                sensor.name
            ));
            continue;
        }
        robot.contacts.push(sensor.clone());
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
        add_noise(robot, camera.name().to_string(), gazebo.noise.as_ref());
        add_noise(
            robot,
            format!("{}/depth", camera.name()),
            gazebo.depth_noise.as_ref(),
        );
        listed.push(camera.clone());
    }
    robot.cameras = Some(listed);
}

fn add_imu(robot: &mut RobotConfig, imu: &GazeboImu) {
    if robot.ros.imu.iter().any(|t| t.topic == imu.topic) {
        return;
    }
    add_noise(robot, imu.gyro_sensor(), imu.gyro_noise.as_ref());
    add_noise(robot, imu.accelerometer_sensor(), imu.accel_noise.as_ref());
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

fn add_magnetometer(robot: &mut RobotConfig, mag: &GazeboMagnetometer) {
    let listed = &robot.ros.magnetometers;
    if listed
        .iter()
        .any(|t| t.topic == mag.topic || t.sensor == mag.sensor())
    {
        return;
    }
    add_noise(robot, mag.sensor(), mag.noise.as_ref());
    robot.ros.magnetometers.push(MagnetometerTopic {
        topic: mag.topic.clone(),
        sensor: mag.sensor(),
        frame_id: Some(mag.frame_id.clone()),
        rate: Some(mag.rate),
    });
}

fn add_force_torque(robot: &mut RobotConfig, ft: &GazeboForceTorque) {
    if robot.ros.force_torque.iter().any(|t| t.topic == ft.topic) {
        return;
    }
    add_noise(robot, ft.force_sensor(), ft.force_noise.as_ref());
    add_noise(robot, ft.torque_sensor(), ft.torque_noise.as_ref());
    robot.ros.force_torque.push(ForceTorqueTopic {
        topic: ft.topic.clone(),
        force: Some(ft.force_sensor()),
        torque: Some(ft.torque_sensor()),
        frame_id: ft.frame_id.clone(),
        rate: Some(ft.rate),
        measure_direction: ft.measure_direction,
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
        limits: drive.limits,
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
