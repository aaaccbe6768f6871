//! Each robot's `gps:` receivers: sensor_msgs/NavSatFix on `{name}/fix` (latitude and
//! longitude in degrees, height above the WGS84 ellipsoid, from the world's `origin`) and
//! the velocity in east, north, up as geometry_msgs/TwistWithCovarianceStamped on
//! `{name}/vel`, framed at the receiver's site. MuJoCo measures the site's position and
//! velocity (`framepos`, `framelinvel`) with the state; noise, per Gazebo's NavSat channels,
//! is added in metres east, north and up (Gazebo adds its horizontal noise to degrees).
use super::geodesy::Earth;
use super::imu::{covariances, read3};
use super::noise::{self, SensorNoise};
use super::sensors::{self, Sensor};
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::Qos;
use crate::config::PointSensorConfig;
use crate::convert::{given_frame, vector};
use crate::messages::geometry_msgs::msg::TwistWithCovarianceStamped;
use crate::messages::sensor_msgs::msg::NavSatFix;
use crate::model::point_sensors::{position_sensor, velocity_sensor};
use mujoco_rs::prelude::MjtSensor;

/// sensor_msgs/NavSatStatus: a fix, from GPS; NavSatFix: the covariance's kind.
const STATUS_FIX: i8 = 0;
const SERVICE_GPS: u16 = 1;
const COVARIANCE_UNKNOWN: u8 = 0;
const COVARIANCE_DIAGONAL_KNOWN: u8 = 2;

pub struct Fix {
    topic: Topic,
    position: Sensor,
    earth: Earth,
    noise: Option<SensorNoise>,
    timing: Timing,
    message: NavSatFix,
}

pub struct Velocity {
    topic: Topic,
    velocity: Sensor,
    earth: Earth,
    noise: Option<SensorNoise>,
    timing: Timing,
    message: TwistWithCovarianceStamped,
}

/// A point sensor's MuJoCo sensors and frame, found in the model (`point_sensors` added them).
pub struct Point {
    pub position: Sensor,
    pub velocity: Sensor,
    pub frame_id: String,
    pub timing: Timing,
}

/// The sensors robot `robot`'s point sensor `config` (listed under `key`, at `k`) reads.
pub fn point(plan: &mut Plan, robot: usize, key: &str, k: usize, config: &PointSensorConfig) -> Result<Point, PlanError> {
    let field = format!("robots[{robot}].{key}[{k}]");
    let find = |plan: &Plan, name: String, kind, what| sensors::find(plan, robot, field.clone(), &name, kind, what);
    let position = find(plan, position_sensor(&config.name), MjtSensor::mjSENS_FRAMEPOS, "framepos")?;
    let velocity = find(plan, velocity_sensor(&config.name), MjtSensor::mjSENS_FRAMELINVEL, "framelinvel")?;
    let frame_id = match (&config.frame_id, sensors::site(plan.model, position.id)) {
        (Some(frame), _) => given_frame(frame, &plan.robots[robot], plan.prefixed(robot)),
        (None, Some(site)) => sensors::site_frame(plan, robot, site, false),
        (None, None) => config.name.clone(),
    };
    let latency = plan.config.robots[robot].latency.get(&config.name).copied().unwrap_or(0.0);
    Ok(Point {
        position,
        velocity,
        frame_id,
        timing: Timing { delay: 0.0, latency },
    })
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    let earth = Earth::new(&plan.config.world.origin);
    for robot in 0..plan.robots.len() {
        for (k, config) in plan.config.robots[robot].gps.clone().iter().enumerate() {
            let point = point(plan, robot, "gps", k, config)?;
            let topic = |plan: &Plan, name: String| Topic {
                name: plan.robot_topic(robot, &name),
                schedule: plan.rate("gps", Some(config.rate)),
                qos: Qos::STATE,
            };
            let mut fix = NavSatFix::default();
            fix.header.frame_id = point.frame_id.clone();
            fix.status.status = STATUS_FIX;
            fix.status.service = SERVICE_GPS;
            let noise = noise::horizontal_vertical(plan, robot, &config.name, "position");
            covariances(&mut fix.position_covariance, &noise);
            fix.position_covariance_type = if noise.is_some() {
                COVARIANCE_DIAGONAL_KNOWN
            } else {
                COVARIANCE_UNKNOWN
            };
            plan.add(Fix {
                topic: topic(plan, config.topic_or(format!("{}/fix", config.name))),
                position: point.position,
                earth: earth.clone(),
                noise,
                timing: point.timing,
                message: fix,
            });
            let mut twist = TwistWithCovarianceStamped::default();
            twist.header.frame_id = point.frame_id.clone();
            let noise = noise::horizontal_vertical(plan, robot, &config.name, "velocity");
            if let Some(noise) = &noise {
                for axis in 0..3 {
                    twist.twist.covariance.0[7 * axis] = noise.variance(axis);
                }
            }
            plan.add(Velocity {
                topic: topic(plan, format!("{}/vel", config.name)),
                velocity: point.velocity,
                earth: earth.clone(),
                noise,
                timing: point.timing,
                message: twist,
            });
        }
    }
    Ok(())
}

/// The world vector `sensor` measures, in east, north, up, with its noise.
fn measured_enu(
    earth: &Earth,
    tick: &Tick,
    sensor: Sensor,
    noise: &mut Option<SensorNoise>,
) -> [f64; 3] {
    let world = read3(&tick.state.sensordata, sensor.adr, &mut None, 0.0);
    let mut enu = earth.enu(world);
    if let Some(noise) = noise {
        noise.apply(&mut enu, tick.state.time);
    }
    enu
}

impl Output for Fix {
    type Message = NavSatFix;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&NavSatFix> {
        let enu = measured_enu(&self.earth, tick, self.position, &mut self.noise);
        let [latitude, longitude, altitude] = self.earth.geodetic(enu);
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        (m.latitude, m.longitude, m.altitude) = (latitude, longitude, altitude);
        Some(m)
    }
}

impl Output for Velocity {
    type Message = TwistWithCovarianceStamped;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&TwistWithCovarianceStamped> {
        let enu = measured_enu(&self.earth, tick, self.velocity, &mut self.noise);
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        m.twist.twist.linear = vector(&enu);
        Some(m)
    }
}
