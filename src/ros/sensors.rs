//! Sensor topics filled from MuJoCo sensors in the state snapshot: sensor_msgs/Imu
//! (framequat + gyro + accelerometer), geometry_msgs/WrenchStamped (force + torque) and
//! sensor_msgs/Range (rangefinder). The mapping comes from the robot's `ros` config, or,
//! when that lists none, from the model: the sensors are grouped by the site they sit on.
//! Each message's frame is the sensor's site; where that differs from its body's frame, a
//! static transform body -> site goes to /tf_static.
use super::convert::frame_name;
use crate::config::{
    ImuTopic, LaserScanTopic, Patterns, RangeTopic, RobotRosConfig, RosRates, full_match_regex,
};
use crate::model::RobotMap;
use crate::ros::interfaces::builtin_interfaces::msg::Time;
use crate::ros::interfaces::geometry_msgs::msg::{
    Quaternion as RosQuaternion, Transform, TransformStamped, Vector3 as RosVector3, WrenchStamped,
};
use crate::ros::interfaces::sensor_msgs::msg::{Imu, LaserScan, Range};
use crate::ros::interfaces::std_msgs::msg::Header;
use crate::sim::StateSnapshot;
use mujoco_rs::prelude::*;
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

/// A sensor's values in `sensordata`: (address, dimension).
type Slice = (usize, usize);

/// A sensor's reading in MuJoCo's `sensordata`, and the message it fills.
pub struct Filling<M> {
    /// `sensordata` addresses, in the order the message kind uses them.
    sources: Vec<Option<usize>>,
    message: M,
}

fn vector(data: &[f64], adr: usize) -> RosVector3 {
    RosVector3 {
        x: data[adr],
        y: data[adr + 1],
        z: data[adr + 2],
    }
}

/// A rangefinder value as ROS wants it: MuJoCo reports -1 (or the cutoff) when the ray hits
/// nothing within reach, REP-117 says +Inf.
fn ray(value: f64, reach: f32) -> f32 {
    let range = value as f32;
    if range < 0.0 || range >= reach {
        f32::INFINITY
    } else {
        range
    }
}

/// How far a rangefinder reaches: its cutoff, else infinitely.
fn reach(model: &MjModel, sensor: usize) -> f64 {
    let cutoff = model.sensor_cutoff()[sensor];
    if cutoff > 0.0 { cutoff } else { f64::INFINITY }
}

impl Filling<Imu> {
    /// Sources: orientation (framequat), angular velocity (gyro), linear acceleration.
    fn fill(&mut self, data: &[f64], stamp: &Time) -> &Imu {
        let m = &mut self.message;
        m.header.stamp = stamp.clone();
        if let Some(adr) = self.sources[0] {
            // MuJoCo w x y z -> ROS x y z w.
            m.orientation = RosQuaternion {
                x: data[adr + 1],
                y: data[adr + 2],
                z: data[adr + 3],
                w: data[adr],
            };
        }
        if let Some(adr) = self.sources[1] {
            m.angular_velocity = vector(data, adr);
        }
        if let Some(adr) = self.sources[2] {
            m.linear_acceleration = vector(data, adr);
        }
        m
    }
}

impl Filling<WrenchStamped> {
    /// Sources: force, torque.
    fn fill(&mut self, data: &[f64], stamp: &Time) -> &WrenchStamped {
        let m = &mut self.message;
        m.header.stamp = stamp.clone();
        if let Some(adr) = self.sources[0] {
            m.wrench.force = vector(data, adr);
        }
        if let Some(adr) = self.sources[1] {
            m.wrench.torque = vector(data, adr);
        }
        m
    }
}

impl Filling<Range> {
    /// Source: the rangefinder.
    fn fill(&mut self, data: &[f64], stamp: &Time) -> &Range {
        let m = &mut self.message;
        m.header.stamp = stamp.clone();
        if let Some(adr) = self.sources[0] {
            m.range = ray(data[adr], m.max_range);
        }
        m
    }
}

impl Filling<LaserScan> {
    /// Sources: the rays in increasing angle order.
    fn fill(&mut self, data: &[f64], stamp: &Time) -> &LaserScan {
        let m = &mut self.message;
        m.header.stamp = stamp.clone();
        for (out, adr) in m.ranges.iter_mut().zip(self.sources.iter().flatten()) {
            *out = ray(data[*adr], m.range_max);
        }
        m
    }
}

pub enum Reading {
    // Boxed: an Imu message with its three covariances is several times larger than the rest.
    Imu(Box<Filling<Imu>>),
    Wrench(Filling<WrenchStamped>),
    Range(Filling<Range>),
    Scan(Filling<LaserScan>),
}

/// One sensor topic of one robot.
pub struct SensorTopic {
    /// Relative to the robot's namespace.
    pub topic: String,
    pub rate: f64,
    pub reading: Reading,
}

/// A sensor topic with its publisher.
pub enum Output {
    Imu(Box<Filling<Imu>>, super::backend::Publisher<Imu>),
    Wrench(
        Filling<WrenchStamped>,
        super::backend::Publisher<WrenchStamped>,
    ),
    Range(Filling<Range>, super::backend::Publisher<Range>),
    Scan(Filling<LaserScan>, super::backend::Publisher<LaserScan>),
}

impl SensorTopic {
    /// Creates the publisher of this topic under `name`.
    pub fn advertise(
        self,
        node: &mut super::backend::Node,
        name: &str,
        qos: super::Qos,
    ) -> Result<Output, super::Error> {
        Ok(match self.reading {
            Reading::Imu(f) => Output::Imu(f, node.publisher(name, qos)?),
            Reading::Wrench(f) => Output::Wrench(f, node.publisher(name, qos)?),
            Reading::Range(f) => Output::Range(f, node.publisher(name, qos)?),
            Reading::Scan(f) => Output::Scan(f, node.publisher(name, qos)?),
        })
    }
}

impl Output {
    /// Publishes the reading in `state`.
    pub fn publish(&mut self, state: &StateSnapshot, stamp: &Time) {
        let data = &state.sensordata;
        let _ = match self {
            Output::Imu(f, p) => p.publish(f.fill(data, stamp)),
            Output::Wrench(f, p) => p.publish(f.fill(data, stamp)),
            Output::Range(f, p) => p.publish(f.fill(data, stamp)),
            Output::Scan(f, p) => p.publish(f.fill(data, stamp)),
        };
    }
}

/// The sensor topics of one robot and the static transforms of their frames.
pub struct Plan {
    pub topics: Vec<SensorTopic>,
    pub frames: Vec<TransformStamped>,
}

/// Finds the sensor `name` of `robot` and checks its type.
fn sensor(
    model: &MjModel,
    robot: &RobotMap,
    field: &str,
    name: &str,
    wanted: MjtSensor,
    what: &str,
) -> Result<(usize, Slice), String> {
    let id = robot
        .sensor(name)
        .ok_or_else(|| format!("{field}: robot '{}' has no sensor '{name}'", robot.name))?
        .id;
    if model.sensor_type()[id] != wanted {
        return Err(format!("{field}: sensor '{name}' is not a {what} sensor"));
    }
    Ok((
        id,
        (
            model.sensor_adr()[id] as usize,
            model.sensor_dim()[id] as usize,
        ),
    ))
}

/// The site a sensor is attached to, if any.
fn sensor_site(model: &MjModel, sensor: usize) -> Option<usize> {
    (model.sensor_objtype()[sensor] == MjtObjBase::mjOBJ_SITE)
        .then(|| model.sensor_objid()[sensor] as usize)
}

struct Frames<'a> {
    model: &'a MjModel,
    robot: &'a RobotMap,
    prefixed: bool,
    transforms: Vec<TransformStamped>,
}

impl Frames<'_> {
    /// Adds the fixed transform `parent -> child` (once per child).
    fn add(&mut self, parent: String, child: &str, at: [f64; 3], rotation: UnitQuaternion<f64>) {
        if self.transforms.iter().any(|t| t.child_frame_id == child) {
            return;
        }
        self.transforms.push(TransformStamped {
            header: Header {
                stamp: Time::default(),
                frame_id: parent,
            },
            child_frame_id: child.to_string(),
            transform: Transform {
                translation: RosVector3 {
                    x: at[0],
                    y: at[1],
                    z: at[2],
                },
                rotation: RosQuaternion {
                    x: rotation.i,
                    y: rotation.j,
                    z: rotation.k,
                    w: rotation.w,
                },
            },
        });
    }

    /// A frame at `point` of `body`, with the body's orientation: the body's own frame at
    /// its origin, else `<body>_scan` on /tf_static.
    fn of_point(&mut self, body: usize, point: [f64; 3]) -> String {
        let body_frame = frame_name("world", self.robot, body, self.prefixed);
        if point.iter().all(|v| v.abs() < 1e-9) {
            return body_frame;
        }
        let frame = format!("{body_frame}_scan");
        self.add(body_frame, &frame, point, UnitQuaternion::identity());
        frame
    }

    /// The frame of a site: its body's frame when the site has the body's name and sits at
    /// its origin (the link sites of a URDF robot), else a frame of its own named after the
    /// site, published static. `x_along_z` turns that frame so that x points along the
    /// site's z axis, the direction a MuJoCo rangefinder measures in (sensor_msgs/Range
    /// measures along x).
    fn of_site(&mut self, site: usize, x_along_z: bool) -> String {
        let body = self.model.site_bodyid()[site] as usize;
        let body_frame = frame_name("world", self.robot, body, self.prefixed);
        let p = self.model.site_pos()[site];
        let q = self.model.site_quat()[site];
        let mut rotation = UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]));
        if x_along_z {
            // x along the ray; z as close to the body's z as the ray allows, so a planar fan
            // of rays gives frames that differ by yaw alone.
            let x = rotation * Vector3::z();
            let up = if x.z.abs() > 0.999 {
                rotation * Vector3::x()
            } else {
                Vector3::z()
            };
            let y = up.cross(&x).normalize();
            let z = x.cross(&y);
            rotation = UnitQuaternion::from_rotation_matrix(
                &nalgebra::Rotation3::from_basis_unchecked(&[x, y, z]),
            );
        }
        let name = self
            .robot
            .sites
            .iter()
            .find(|s| s.id == site)
            .map(|s| s.name.clone())
            .unwrap_or_else(|| format!("site_{site}"));
        let body_name = self.robot.bodies.iter().find(|b| b.id == body);
        let at_origin = p.iter().all(|v| v.abs() < 1e-9) && rotation.angle() < 1e-9;
        if at_origin && body_name.is_some_and(|b| b.name == name) {
            return body_frame;
        }
        let frame = if self.prefixed {
            format!("{}/{name}", self.robot.name)
        } else {
            name
        };
        self.add(body_frame, &frame, p, rotation);
        frame
    }
}

/// The IMU, force-torque and range topics a robot's sensors map to when the config names
/// none: sensors grouped by their site.
fn automatic(model: &MjModel, robot: &RobotMap) -> RobotRosConfig {
    use std::collections::BTreeMap;
    let mut imus: BTreeMap<usize, ImuTopic> = BTreeMap::new();
    let mut wrenches: BTreeMap<usize, crate::config::ForceTorqueTopic> = BTreeMap::new();
    let mut ranges = Vec::new();
    for s in &robot.sensors {
        let Some(site) = sensor_site(model, s.id) else {
            continue;
        };
        let name = Some(s.name.clone());
        match model.sensor_type()[s.id] {
            MjtSensor::mjSENS_FRAMEQUAT => imus.entry(site).or_default().orientation = name,
            MjtSensor::mjSENS_GYRO => imus.entry(site).or_default().angular_velocity = name,
            MjtSensor::mjSENS_ACCELEROMETER => {
                imus.entry(site).or_default().linear_acceleration = name
            }
            MjtSensor::mjSENS_FORCE => wrenches.entry(site).or_default().force = name,
            MjtSensor::mjSENS_TORQUE => wrenches.entry(site).or_default().torque = name,
            MjtSensor::mjSENS_RANGEFINDER => ranges.push(RangeTopic {
                topic: format!("range/{}", s.name),
                sensor: s.name.clone(),
                ..Default::default()
            }),
            _ => {}
        }
    }
    // A frame orientation alone is not an IMU (it may track any body).
    imus.retain(|_, imu| imu.angular_velocity.is_some() || imu.linear_acceleration.is_some());
    let site_name = |site: usize| {
        robot
            .sites
            .iter()
            .find(|s| s.id == site)
            .map_or_else(|| format!("site_{site}"), |s| s.name.clone())
    };
    let single_imu = imus.len() == 1;
    let single_wrench = wrenches.len() == 1;
    RobotRosConfig {
        imu: imus
            .into_iter()
            .map(|(site, mut imu)| {
                imu.topic = if single_imu {
                    "imu".into()
                } else {
                    format!("imu/{}", site_name(site))
                };
                imu
            })
            .collect(),
        force_torque: wrenches
            .into_iter()
            .map(|(site, mut ft)| {
                ft.topic = if single_wrench {
                    "force_torque".into()
                } else {
                    format!("force_torque/{}", site_name(site))
                };
                ft
            })
            .collect(),
        laser_scans: automatic_scans(model, robot),
        range: ranges,
        ..Default::default()
    }
}

/// A LaserScan for each body that carries a fan of three or more rangefinders.
fn automatic_scans(model: &MjModel, robot: &RobotMap) -> Vec<LaserScanTopic> {
    use std::collections::BTreeMap;
    let mut by_body: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for s in &robot.sensors {
        if model.sensor_type()[s.id] == MjtSensor::mjSENS_RANGEFINDER
            && let Some(site) = sensor_site(model, s.id)
        {
            let body = model.site_bodyid()[site] as usize;
            by_body.entry(body).or_default().push(s.id);
        }
    }
    by_body.retain(|_, rays| rays.len() >= 3 && fan(model, rays).is_ok());
    let single = by_body.len() == 1;
    by_body
        .into_iter()
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

/// A planar fan of rays: one origin on one body, directions in the body's xy plane at
/// evenly spaced angles.
struct Fan {
    body: usize,
    origin: [f64; 3],
    /// (angle, sensor id), by increasing angle.
    rays: Vec<(f64, usize)>,
}

fn fan(model: &MjModel, sensors: &[usize]) -> Result<Fan, String> {
    let sites: Vec<usize> = sensors
        .iter()
        .map(|&id| sensor_site(model, id).ok_or("a rangefinder without a site"))
        .collect::<Result<_, _>>()?;
    let body = model.site_bodyid()[sites[0]] as usize;
    let origin = model.site_pos()[sites[0]];
    let mut rays = Vec::with_capacity(sites.len());
    for (&site, &sensor) in sites.iter().zip(sensors) {
        let p = model.site_pos()[site];
        if model.site_bodyid()[site] as usize != body
            || p.iter().zip(&origin).any(|(a, b)| (a - b).abs() > 1e-6)
        {
            return Err("the rays must start at one point of one body".into());
        }
        let q = model.site_quat()[site];
        let direction =
            UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3])) * Vector3::z();
        if direction.z.abs() > 1e-6 {
            return Err("the rays must lie in their body's xy plane".into());
        }
        rays.push((direction.y.atan2(direction.x), sensor));
    }
    rays.sort_by(|a, b| a.0.total_cmp(&b.0));
    let step = (rays[rays.len() - 1].0 - rays[0].0) / (rays.len() - 1) as f64;
    let even = rays
        .windows(2)
        .all(|w| (w[1].0 - w[0].0 - step).abs() < 1e-4);
    if !(even && step > 0.0) {
        return Err("the rays' angles must be evenly spaced".into());
    }
    Ok(Fan { body, origin, rays })
}

/// The sensors of one IMU or force-torque topic: checks each named sensor's type and
/// remembers the site of the first one (the message's frame).
struct Group<'a> {
    model: &'a MjModel,
    robot: &'a RobotMap,
    field: &'a str,
    site: Option<usize>,
}

impl<'a> Group<'a> {
    fn new(model: &'a MjModel, robot: &'a RobotMap, field: &'a str) -> Self {
        Self {
            model,
            robot,
            field,
            site: None,
        }
    }

    /// The `sensordata` address of the sensor named under `key`, if one is named.
    fn pick(
        &mut self,
        key: &str,
        name: &Option<String>,
        kind: MjtSensor,
        what: &str,
    ) -> Result<Option<usize>, String> {
        let Some(name) = name else {
            return Ok(None);
        };
        let field = format!("{}.{key}", self.field);
        let (id, (adr, _)) = sensor(self.model, self.robot, &field, name, kind, what)?;
        self.site = self.site.or(sensor_site(self.model, id));
        Ok(Some(adr))
    }
}

/// Resolves the sensor topics of robot `index`. Errors name the config field.
pub fn plan(
    model: &MjModel,
    robot: &RobotMap,
    index: usize,
    config: &RobotRosConfig,
    rates: &RosRates,
    prefixed: bool,
) -> Result<Plan, String> {
    let found;
    let config = if config.lists_no_sensors() {
        found = automatic(model, robot);
        &found
    } else {
        config
    };
    let mut frames = Frames {
        model,
        robot,
        prefixed,
        transforms: Vec::new(),
    };
    let mut topics = Vec::new();
    for (k, imu) in config.imu.iter().enumerate() {
        let field = format!("robots[{index}].ros.imu[{k}]");
        let mut sensors = Group::new(model, robot, &field);
        let orientation = sensors.pick(
            "orientation",
            &imu.orientation,
            MjtSensor::mjSENS_FRAMEQUAT,
            "framequat",
        )?;
        let angular_velocity = sensors.pick(
            "angular_velocity",
            &imu.angular_velocity,
            MjtSensor::mjSENS_GYRO,
            "gyro",
        )?;
        let linear_acceleration = sensors.pick(
            "linear_acceleration",
            &imu.linear_acceleration,
            MjtSensor::mjSENS_ACCELEROMETER,
            "accelerometer",
        )?;
        if orientation.is_none() && angular_velocity.is_none() && linear_acceleration.is_none() {
            return Err(format!(
                "{field}: name at least one of orientation, angular_velocity, linear_acceleration"
            ));
        }
        let frame_id = match (&imu.frame_id, sensors.site) {
            (Some(f), _) => f.clone(),
            (None, Some(site)) => frames.of_site(site, false),
            (None, None) => frame_name("world", robot, robot.root_body.unwrap_or(0), prefixed),
        };
        let mut message = Imu {
            header: Header {
                stamp: Time::default(),
                frame_id,
            },
            ..Default::default()
        };
        // sensor_msgs/Imu: -1 in a covariance's first element marks a quantity not given.
        for (given, covariance) in [
            (orientation.is_some(), &mut message.orientation_covariance),
            (
                angular_velocity.is_some(),
                &mut message.angular_velocity_covariance,
            ),
            (
                linear_acceleration.is_some(),
                &mut message.linear_acceleration_covariance,
            ),
        ] {
            *covariance = [0.0; 9];
            if !given {
                covariance[0] = -1.0;
            }
        }
        message.orientation.w = 1.0;
        topics.push(SensorTopic {
            topic: imu.topic.clone(),
            rate: imu.rate.unwrap_or(rates.imu),
            reading: Reading::Imu(Box::new(Filling {
                sources: vec![orientation, angular_velocity, linear_acceleration],
                message,
            })),
        });
    }
    for (k, ft) in config.force_torque.iter().enumerate() {
        let field = format!("robots[{index}].ros.force_torque[{k}]");
        let mut sensors = Group::new(model, robot, &field);
        let force = sensors.pick("force", &ft.force, MjtSensor::mjSENS_FORCE, "force")?;
        let torque = sensors.pick("torque", &ft.torque, MjtSensor::mjSENS_TORQUE, "torque")?;
        if force.is_none() && torque.is_none() {
            return Err(format!(
                "{field}: name a force sensor, a torque sensor or both"
            ));
        }
        let frame_id = match (&ft.frame_id, sensors.site) {
            (Some(f), _) => f.clone(),
            (None, Some(site)) => frames.of_site(site, false),
            (None, None) => String::new(),
        };
        topics.push(SensorTopic {
            topic: ft.topic.clone(),
            rate: ft.rate.unwrap_or(rates.force_torque),
            reading: Reading::Wrench(Filling {
                sources: vec![force, torque],
                message: WrenchStamped {
                    header: Header {
                        stamp: Time::default(),
                        frame_id,
                    },
                    ..Default::default()
                },
            }),
        });
    }
    for (k, range) in config.range.iter().enumerate() {
        let field = format!("robots[{index}].ros.range[{k}]");
        let (id, (adr, _)) = sensor(
            model,
            robot,
            &format!("{field}.sensor"),
            &range.sensor,
            MjtSensor::mjSENS_RANGEFINDER,
            "rangefinder",
        )?;
        let max_range = range.max_range.unwrap_or(reach(model, id));
        if !(range.min_range >= 0.0 && max_range > range.min_range && range.field_of_view >= 0.0) {
            return Err(format!(
                "{field}: needs 0 <= min_range < max_range and field_of_view >= 0"
            ));
        }
        let frame_id = match (&range.frame_id, sensor_site(model, id)) {
            (Some(f), _) => f.clone(),
            (None, Some(site)) => frames.of_site(site, true),
            (None, None) => String::new(),
        };
        topics.push(SensorTopic {
            topic: range.topic.clone(),
            rate: range.rate.unwrap_or(rates.range),
            reading: Reading::Range(Filling {
                sources: vec![Some(adr)],
                message: Range {
                    header: Header {
                        stamp: Time::default(),
                        frame_id,
                    },
                    radiation_type: Range::INFRARED,
                    field_of_view: range.field_of_view as f32,
                    min_range: range.min_range as f32,
                    max_range: max_range as f32,
                    range: 0.0,
                    ..Default::default()
                },
            }),
        });
    }
    for (k, scan) in config.laser_scans.iter().enumerate() {
        let field = format!("robots[{index}].ros.laser_scans[{k}].sensors");
        let mut ids = Vec::new();
        for pattern in scan.sensors.as_slice() {
            let regex = full_match_regex(pattern).map_err(|e| format!("{field}: {e}"))?;
            let before = ids.len();
            ids.extend(
                robot
                    .sensors
                    .iter()
                    .filter(|s| {
                        regex.is_match(&s.name)
                            && model.sensor_type()[s.id] == MjtSensor::mjSENS_RANGEFINDER
                    })
                    .map(|s| s.id),
            );
            if ids.len() == before {
                return Err(format!("{field}: '{pattern}' matches no rangefinder"));
            }
        }
        if ids.len() < 2 {
            return Err(format!("{field}: a scan needs at least two rays"));
        }
        let fan = fan(model, &ids).map_err(|e| format!("{field}: {e}"))?;
        let range_max = ids
            .iter()
            .map(|&id| reach(model, id))
            .fold(f64::INFINITY, f64::min);
        let frame_id = frames.of_point(fan.body, fan.origin);
        let rate = scan.rate.unwrap_or(rates.scan);
        let (first, last) = (fan.rays[0].0, fan.rays[fan.rays.len() - 1].0);
        let count = fan.rays.len();
        topics.push(SensorTopic {
            topic: scan.topic.clone(),
            rate,
            reading: Reading::Scan(Filling {
                sources: fan
                    .rays
                    .iter()
                    .map(|(_, id)| Some(model.sensor_adr()[*id] as usize))
                    .collect(),
                message: LaserScan {
                    header: Header {
                        stamp: Time::default(),
                        frame_id,
                    },
                    angle_min: first as f32,
                    angle_max: last as f32,
                    angle_increment: ((last - first) / (count - 1) as f64) as f32,
                    time_increment: 0.0,
                    scan_time: if rate > 0.0 { (1.0 / rate) as f32 } else { 0.0 },
                    range_min: scan.range_min as f32,
                    range_max: range_max as f32,
                    ranges: vec![0.0; count],
                    intensities: vec![],
                },
            }),
        });
    }
    Ok(Plan {
        topics,
        frames: frames.transforms,
    })
}
