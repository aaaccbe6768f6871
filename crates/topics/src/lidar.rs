//! Ray-cast lidars: a 3D one (several channels) as sensor_msgs/PointCloud2 on
//! `{name}/points` (x, y, z float32 in the lidar's frame, only rays that hit within range), a
//! planar one as sensor_msgs/LaserScan on `{name}/scan`; framed at `{name}_frame`, which
//! /tf_static places on the lidar's body. A scan is asked of the caster only while someone
//! subscribes, at the lidar's rate in sim time, cast from that sample's state and stamped
//! with its time. A robot's `noise:` entry for the lidar's name is each beam's noise (one
//! channel for all of them, as Gazebo's lidar has).
use super::noise::{self, SensorNoise};
use super::{Plan, PlanError, Planned, Schedule, Topic};
use crate::model::pose;
use crate::render::{PlannedLidar, Scan};
use crate::Qos;
use crate::convert::{frame_name, given_frame, transform_stamped};
use crate::messages::sensor_msgs::msg::{LaserScan, PointCloud2};

pub struct Lidar {
    /// The lidar's index at the caster.
    pub index: usize,
    pub topic: Topic,
    pub frame_id: String,
    pub planned: PlannedLidar,
    pub noise: Option<SensorNoise>,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for (index, lidar) in plan.sensors.lidars.iter().cloned().enumerate() {
        let (map, prefixed) = (&plan.robots[lidar.robot], plan.prefixed(lidar.robot));
        let parent = frame_name("world", map, lidar.spec.body, prefixed);
        let frame_id = match &lidar.frame_id {
            Some(frame) => given_frame(frame, map, prefixed),
            None => {
                let frame_id = if prefixed {
                    format!("{}/{}_frame", map.name, lidar.name)
                } else {
                    format!("{}_frame", lidar.name)
                };
                let at = pose::isometry(&lidar.spec.xyz, &lidar.spec.quat_wxyz);
                plan.add_static_frame(transform_stamped(parent, frame_id.clone(), &at));
                frame_id
            }
        };
        let planar = lidar.channels == 1;
        let name = lidar.topic.clone().unwrap_or_else(|| {
            format!("{}/{}", lidar.name, if planar { "scan" } else { "points" })
        });
        let topic = Topic {
            name: plan.robot_topic(lidar.robot, &name),
            schedule: Schedule::Rate {
                hz: lidar.rate,
                follows: None,
            },
            qos: if planar { Qos::STATE } else { Qos::IMAGES },
        };
        let noise = noise::named(plan, lidar.robot, &lidar.name, 1, 0.0);
        plan.add_planned(Box::new(Lidar {
            index,
            topic,
            frame_id,
            planned: lidar,
            noise,
        }));
    }
    Ok(())
}

impl Planned for Lidar {
    fn topic(&self) -> &Topic {
        &self.topic
    }

    #[cfg(test)]
    fn fill_json(&mut self, _tick: &super::Tick) -> Option<serde_json::Value> {
        // Scans come from the caster, not from the state.
        None
    }

    fn into_output(self: Box<Self>) -> super::TopicOutput {
        super::TopicOutput::Lidar(self)
    }
}

/// Each beam's range as the lidar reads it: a hit with `noise`, in steps of the lidar's
/// resolution, within its range (as Gazebo clamps it); a miss stays a miss.
pub fn add_noise(scan: &mut Scan, lidar: &PlannedLidar, noise: &mut Option<SensorNoise>) {
    let step = lidar.resolution;
    if noise.is_none() && step == 0.0 {
        return;
    }
    let (near, far) = (lidar.spec.range_min, lidar.spec.range_max);
    for range in scan.ranges.iter_mut().filter(|r| r.is_finite()) {
        let mut read = noise::range(*range as f64, noise, 0, scan.time);
        if step > 0.0 {
            read = (read / step).round() * step;
        }
        *range = read.clamp(near, far) as f32;
    }
}

/// The rays that hit within range, as x, y, z float32 points in the lidar's frame.
pub fn fill_points(cloud: &mut PointCloud2, scan: &Scan, lidar: &PlannedLidar, frame_id: &str) {
    super::cloud::begin(cloud, scan.time, frame_id, &["x", "y", "z"]);
    for (range, ray) in scan.ranges.iter().zip(&lidar.spec.rays) {
        if !range.is_finite() {
            continue;
        }
        for axis in ray {
            let value = (*axis as f32) * range;
            cloud.data.extend_from_slice(&value.to_le_bytes());
        }
    }
    let points = cloud.data.len() / 12;
    super::cloud::finish(cloud, points, 1, true);
}

/// A planar lidar's scan as a LaserScan.
pub fn fill_scan(message: &mut LaserScan, scan: &Scan, lidar: &PlannedLidar, frame_id: &str) {
    message.header.stamp = crate::convert::time(scan.time);
    if message.header.frame_id != frame_id {
        message.header.frame_id = frame_id.to_string();
    }
    let (first, step) = lidar.azimuth;
    let count = scan.ranges.len().max(1);
    message.angle_min = first as f32;
    message.angle_increment = step as f32;
    message.angle_max = (first + step * (count - 1) as f64) as f32;
    message.time_increment = 0.0;
    message.scan_time = (1.0 / lidar.rate) as f32;
    message.range_min = lidar.spec.range_min as f32;
    message.range_max = lidar.spec.range_max as f32;
    message.ranges.clone_from(&scan.ranges);
}
