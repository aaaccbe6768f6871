//! What the sensor outputs (imu, wrench, range, scan) share: a sensor found by name and
//! type, the frames of their sites, and, for a kind the config lists none of, the topics
//! found in the model (sensors grouped by the site they sit on).
use super::{Plan, PlanError};
use crate::config::{ForceTorqueTopic, ImuTopic, LaserScanTopic, Patterns, RangeTopic};
use crate::convert::{frame_name, transform_stamped};
use crate::model::{RobotMap, pose};
use mujoco_rs::prelude::*;
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use std::collections::BTreeMap;

/// A sensor of the model and where its values start in `sensordata`.
#[derive(Clone, Copy, Debug)]
pub struct Sensor {
    pub id: usize,
    pub adr: usize,
}

/// The sensor `name` of robot `robot`, checked to be of type `wanted` (`what` names it).
pub fn find(
    plan: &Plan,
    robot: usize,
    field: String,
    name: &str,
    wanted: MjtSensor,
    what: &'static str,
) -> Result<Sensor, PlanError> {
    let map = &plan.robots[robot];
    let Some(sensor) = map.sensor(name) else {
        return Err(PlanError::NoSensor {
            field,
            robot: map.name.clone(),
            name: name.to_string(),
        });
    };
    if plan.model.sensor_type()[sensor.id] != wanted {
        return Err(PlanError::WrongSensorType {
            field,
            name: name.to_string(),
            wanted: what,
        });
    }
    Ok(Sensor {
        id: sensor.id,
        adr: plan.model.sensor_adr()[sensor.id] as usize,
    })
}

/// How the messages of robot `robot`'s `sensors` lag: the longest MuJoCo `delay` among them
/// (one with a history to delay by) and the longest `latency` the config gives them.
pub fn timing(plan: &Plan, robot: usize, sensors: &[Option<Sensor>]) -> super::Timing {
    let model = plan.model;
    let map = &plan.robots[robot];
    let latencies = &plan.config.robots[robot].latency;
    let mut timing = super::Timing::default();
    for sensor in sensors.iter().flatten() {
        if model.sensor_history()[sensor.id][0] > 0 {
            timing.delay = timing.delay.max(model.sensor_delay()[sensor.id]);
        }
        let name = map.sensors.iter().find(|s| s.id == sensor.id);
        if let Some(latency) = name.and_then(|s| latencies.get(&s.name)) {
            timing.latency = timing.latency.max(*latency);
        }
    }
    timing
}

/// The rate MuJoCo's `interval` gives robot sensors (the slowest period among them), for a
/// topic whose config gives none: a sensor that updates every period is sent as often.
pub fn interval_rate(plan: &Plan, sensors: &[Option<Sensor>]) -> Option<f64> {
    let period = sensors
        .iter()
        .flatten()
        .map(|s| plan.model.sensor_interval()[s.id][0])
        .fold(0.0, f64::max);
    (period > 0.0).then(|| 1.0 / period)
}

/// The sensor named under `key` of a config entry at `field`, if one is named.
pub fn find_optional(
    plan: &Plan,
    robot: usize,
    field: &str,
    key: &str,
    name: &Option<String>,
    wanted: MjtSensor,
    what: &'static str,
) -> Result<Option<Sensor>, PlanError> {
    name.as_deref()
        .map(|name| find(plan, robot, format!("{field}.{key}"), name, wanted, what))
        .transpose()
}

/// The site a sensor is attached to, if any.
pub fn site(model: &MjModel, sensor: usize) -> Option<usize> {
    (model.sensor_objtype()[sensor] == MjtObjBase::mjOBJ_SITE)
        .then(|| model.sensor_objid()[sensor] as usize)
}

/// How far a rangefinder reaches: its cutoff, else infinitely.
pub fn reach(model: &MjModel, sensor: usize) -> f64 {
    let cutoff = model.sensor_cutoff()[sensor];
    if cutoff > 0.0 { cutoff } else { f64::INFINITY }
}

/// A rangefinder value as ROS wants it: MuJoCo reports -1 (or the cutoff) when the ray hits
/// nothing within reach, REP-117 says +Inf.
pub fn ray(value: f64, reach: f32) -> f32 {
    let range = value as f32;
    if range < 0.0 || range >= reach {
        f32::INFINITY
    } else {
        range
    }
}

fn site_name(robot: &RobotMap, site: usize) -> String {
    robot
        .sites
        .iter()
        .find(|s| s.id == site)
        .map_or_else(|| format!("site_{site}"), |s| s.name.clone())
}

/// The frame of a site: its body's frame when the site has the body's name and sits at its
/// origin (the link sites of a URDF robot), else a frame of its own named after the site,
/// fixed to the body on /tf_static. `x_along_z` turns that frame so that x points along the
/// site's z axis, the direction a MuJoCo rangefinder measures in (sensor_msgs/Range
/// measures along x).
pub fn site_frame(plan: &mut Plan, robot: usize, site: usize, x_along_z: bool) -> String {
    let (model, map, prefixed) = (plan.model, &plan.robots[robot], plan.prefixed(robot));
    let body = model.site_bodyid()[site] as usize;
    let body_frame = frame_name("world", map, body, prefixed);
    let p = model.site_pos()[site];
    let mut rotation = pose::quaternion(&model.site_quat()[site]);
    if x_along_z {
        // x along the ray; z as close to the body's z as the ray allows, so a planar fan of
        // rays gives frames that differ by yaw alone.
        let x = rotation * Vector3::z();
        let up = if x.z.abs() > 0.999 {
            rotation * Vector3::x()
        } else {
            Vector3::z()
        };
        let y = up.cross(&x).normalize();
        let z = x.cross(&y);
        rotation =
            UnitQuaternion::from_rotation_matrix(&nalgebra::Rotation3::from_basis_unchecked(&[
                x, y, z,
            ]));
    }
    let name = site_name(map, site);
    let at_origin = p.iter().all(|v| v.abs() < 1e-9) && rotation.angle() < 1e-9;
    if at_origin && map.bodies.iter().any(|b| b.id == body && b.name == name) {
        return body_frame;
    }
    let frame = if prefixed {
        format!("{}/{name}", map.name)
    } else {
        name
    };
    let at = Isometry3::from_parts(Translation3::new(p[0], p[1], p[2]), rotation);
    plan.add_static_frame(transform_stamped(body_frame, frame.clone(), &at));
    frame
}

/// A frame at `point` of `body`, with the body's orientation: the body's own frame at its
/// origin, else `<body>_scan`, fixed to the body on /tf_static.
pub fn point_frame(plan: &mut Plan, robot: usize, body: usize, point: [f64; 3]) -> String {
    let body_frame = frame_name("world", &plan.robots[robot], body, plan.prefixed(robot));
    if point.iter().all(|v| v.abs() < 1e-9) {
        return body_frame;
    }
    let frame = format!("{body_frame}_scan");
    let at = Isometry3::translation(point[0], point[1], point[2]);
    plan.add_static_frame(transform_stamped(body_frame, frame.clone(), &at));
    frame
}

/// One topic per site, named `single` when there is one, else `{many}/{site}`.
fn by_site<T: Default>(
    robot: &RobotMap,
    groups: BTreeMap<usize, T>,
    single: &str,
    many: &str,
    mut named: impl FnMut(&mut T, String),
) -> Vec<T> {
    let alone = groups.len() == 1;
    groups
        .into_iter()
        .map(|(site, mut topic)| {
            named(
                &mut topic,
                if alone {
                    single.to_string()
                } else {
                    format!("{many}/{}", site_name(robot, site))
                },
            );
            topic
        })
        .collect()
}

/// The robot's sensors of the given types on sites, with their site.
fn on_sites<'a>(
    model: &'a MjModel,
    robot: &'a RobotMap,
) -> impl Iterator<Item = (usize, MjtSensor, &'a str, usize)> + 'a {
    robot.sensors.iter().filter_map(move |s| {
        site(model, s.id).map(|site| (s.id, model.sensor_type()[s.id], s.name.as_str(), site))
    })
}

/// IMU topics found in the model: a gyro or accelerometer (and a framequat) on one site.
pub fn automatic_imus(model: &MjModel, robot: &RobotMap) -> Vec<ImuTopic> {
    let mut imus: BTreeMap<usize, ImuTopic> = BTreeMap::new();
    for (_, kind, name, site) in on_sites(model, robot) {
        let name = Some(name.to_string());
        match kind {
            MjtSensor::mjSENS_FRAMEQUAT => imus.entry(site).or_default().orientation = name,
            MjtSensor::mjSENS_GYRO => imus.entry(site).or_default().angular_velocity = name,
            MjtSensor::mjSENS_ACCELEROMETER => {
                imus.entry(site).or_default().linear_acceleration = name
            }
            _ => {}
        }
    }
    // A frame orientation alone is not an IMU (it may track any body).
    imus.retain(|_, imu| imu.angular_velocity.is_some() || imu.linear_acceleration.is_some());
    by_site(robot, imus, "imu", "imu", |imu, topic| imu.topic = topic)
}

/// Magnetometers found in the model, each on its site: `magnetic_field` when the robot has
/// one, `magnetic_field/<site>` for each when it has more.
pub fn automatic_magnetometers(model: &MjModel, robot: &RobotMap) -> Vec<(String, String)> {
    let found: BTreeMap<usize, (String, String)> = on_sites(model, robot)
        .filter(|(_, kind, ..)| *kind == MjtSensor::mjSENS_MAGNETOMETER)
        .map(|(_, _, name, site)| (site, (String::new(), name.to_string())))
        .collect();
    by_site(
        robot,
        found,
        "magnetic_field",
        "magnetic_field",
        |m, topic| m.0 = topic,
    )
}

/// Force-torque topics found in the model: a force and a torque sensor on one site.
pub fn automatic_wrenches(model: &MjModel, robot: &RobotMap) -> Vec<ForceTorqueTopic> {
    let mut wrenches: BTreeMap<usize, ForceTorqueTopic> = BTreeMap::new();
    for (_, kind, name, site) in on_sites(model, robot) {
        let name = Some(name.to_string());
        match kind {
            MjtSensor::mjSENS_FORCE => wrenches.entry(site).or_default().force = name,
            MjtSensor::mjSENS_TORQUE => wrenches.entry(site).or_default().torque = name,
            _ => {}
        }
    }
    by_site(
        robot,
        wrenches,
        "force_torque",
        "force_torque",
        |ft, topic| ft.topic = topic,
    )
}

/// Range topics found in the model: one per rangefinder that is not a ray of a scan (the
/// scans `listed` in the config, else the fans found in the model), which carries it already.
pub fn automatic_ranges(
    model: &MjModel,
    robot: &RobotMap,
    listed: &[LaserScanTopic],
) -> Vec<RangeTopic> {
    let in_scans: Vec<usize> = if listed.is_empty() {
        fans(model, robot).into_values().flatten().collect()
    } else {
        let patterns: Vec<regex::Regex> = listed
            .iter()
            .flat_map(|scan| scan.sensors.as_slice())
            .filter_map(|p| crate::config::full_match_regex(p).ok())
            .collect();
        robot
            .sensors
            .iter()
            .filter(|s| patterns.iter().any(|p| p.is_match(&s.name)))
            .map(|s| s.id)
            .collect()
    };
    on_sites(model, robot)
        .filter(|(id, kind, _, _)| *kind == MjtSensor::mjSENS_RANGEFINDER && !in_scans.contains(id))
        .map(|(_, _, name, _)| RangeTopic {
            topic: format!("range/{name}"),
            sensor: name.to_string(),
            ..Default::default()
        })
        .collect()
}

/// The rangefinders of each body that carries a planar fan of three or more.
fn fans(model: &MjModel, robot: &RobotMap) -> BTreeMap<usize, Vec<usize>> {
    let mut by_body: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (id, kind, _, site) in on_sites(model, robot) {
        if kind == MjtSensor::mjSENS_RANGEFINDER {
            let body = model.site_bodyid()[site] as usize;
            by_body.entry(body).or_default().push(id);
        }
    }
    by_body.retain(|_, rays| rays.len() >= 3 && fan(model, rays).is_ok());
    by_body
}

/// A LaserScan topic for each body that carries a fan of rangefinders.
pub fn automatic_scans(model: &MjModel, robot: &RobotMap) -> Vec<LaserScanTopic> {
    let fans = fans(model, robot);
    let single = fans.len() == 1;
    fans.into_iter()
        .map(|(body, rays)| {
            let body_name = robot
                .bodies
                .iter()
                .find(|b| b.id == body)
                .map_or_else(|| format!("body_{body}"), |b| b.name.clone());
            let names = rays
                .iter()
                .filter_map(|id| robot.sensors.iter().find(|s| s.id == *id))
                .map(|s| regex::escape(&s.name))
                .collect();
            LaserScanTopic {
                topic: if single {
                    "scan".into()
                } else {
                    format!("scan/{body_name}")
                },
                sensors: Patterns::Many(names),
                range_min: 0.0,
                rate: None,
            }
        })
        .collect()
}

/// Why rangefinders are not a laser fan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FanError {
    #[error("a rangefinder without a site")]
    NoSite,
    #[error("the rays must start at one point of one body")]
    Apart,
    #[error("the rays must lie in their body's xy plane")]
    OutOfPlane,
    #[error("the rays' angles must be evenly spaced")]
    Uneven,
}

/// A planar fan of rays: one origin on one body, directions in the body's xy plane at
/// evenly spaced angles.
pub struct Fan {
    pub body: usize,
    pub origin: [f64; 3],
    /// (angle, sensor id), by increasing angle.
    pub rays: Vec<(f64, usize)>,
}

pub fn fan(model: &MjModel, sensors: &[usize]) -> Result<Fan, FanError> {
    let sites: Vec<usize> = sensors
        .iter()
        .map(|&id| site(model, id).ok_or(FanError::NoSite))
        .collect::<Result<_, _>>()?;
    let body = model.site_bodyid()[sites[0]] as usize;
    let origin = model.site_pos()[sites[0]];
    let mut rays = Vec::with_capacity(sites.len());
    for (&site, &sensor) in sites.iter().zip(sensors) {
        let p = model.site_pos()[site];
        if model.site_bodyid()[site] as usize != body
            || p.iter().zip(&origin).any(|(a, b)| (a - b).abs() > 1e-6)
        {
            return Err(FanError::Apart);
        }
        let direction = pose::quaternion(&model.site_quat()[site]) * Vector3::z();
        if direction.z.abs() > 1e-6 {
            return Err(FanError::OutOfPlane);
        }
        rays.push((direction.y.atan2(direction.x), sensor));
    }
    rays.sort_by(|a, b| a.0.total_cmp(&b.0));
    let step = (rays[rays.len() - 1].0 - rays[0].0) / (rays.len() - 1) as f64;
    let even = rays
        .windows(2)
        .all(|w| (w[1].0 - w[0].0 - step).abs() < 1e-4);
    if !(even && step > 0.0) {
        return Err(FanError::Uneven);
    }
    Ok(Fan { body, origin, rays })
}

/// A robot's topics of one sensor kind: the config's own, else the automatic ones, and
/// then those its controllers file's broadcasters stand for (`from_broadcaster`).
pub fn listed_or_automatic<T: Clone>(
    listed: &[T],
    from_broadcaster: impl Fn(&T) -> bool,
    automatic: impl FnOnce() -> Vec<T>,
) -> Vec<T> {
    let (broadcast, own): (Vec<T>, Vec<T>) =
        listed.iter().cloned().partition(|t| from_broadcaster(t));
    let mut topics = if own.is_empty() { automatic() } else { own };
    topics.extend(broadcast);
    topics
}
