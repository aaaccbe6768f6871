//! Ray-cast lidars: a 3D one (several channels) as sensor_msgs/PointCloud2 on
//! `{name}/points` (x, y, z float32 in the lidar's frame, only rays that hit within range), a
//! planar one as sensor_msgs/LaserScan on `{name}/scan`; framed at `{name}_frame`, which
//! /tf_static places on the lidar's body. A scan is asked of the caster only while someone
//! subscribes, at most at the lidar's rate, and stamped with the sim time it was cast in.
// Without a ROS backend only the planning runs (the load-time check of the config).
#![cfg_attr(not(any(feature = "ros", feature = "dds")), allow(dead_code))]
use super::{Plan, PlanError, Planned, Schedule, Topic};
use crate::model::pose;
use crate::render::{PlannedLidar, Scan};
use crate::ros::Qos;
use crate::ros::convert::{frame_name, transform_stamped};
use crate::ros::interfaces::sensor_msgs::msg::{LaserScan, PointCloud2};

pub struct Lidar {
    /// The lidar's index at the caster.
    pub index: usize,
    pub topic: Topic,
    pub frame_id: String,
    pub planned: PlannedLidar,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for (index, lidar) in plan.sensors.lidars.iter().cloned().enumerate() {
        let (map, prefixed) = (&plan.robots[lidar.robot], plan.prefixed(lidar.robot));
        let parent = frame_name("world", map, lidar.spec.body, prefixed);
        let frame_id = if prefixed {
            format!("{}/{}_frame", map.name, lidar.name)
        } else {
            format!("{}_frame", lidar.name)
        };
        let at = pose::isometry(&lidar.spec.xyz, &lidar.spec.quat_wxyz);
        plan.add_static_frame(transform_stamped(parent, frame_id.clone(), &at));
        let planar = lidar.channels == 1;
        let name = format!("{}/{}", lidar.name, if planar { "scan" } else { "points" });
        let topic = Topic {
            name: plan.robot_topic(lidar.robot, &name),
            schedule: Schedule::Rate {
                hz: lidar.rate,
                follows: None,
            },
            qos: if planar { Qos::STATE } else { Qos::IMAGES },
        };
        plan.add_planned(Box::new(Lidar {
            index,
            topic,
            frame_id,
            planned: lidar,
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

    #[cfg(any(feature = "ros", feature = "dds"))]
    fn advertise(
        self: Box<Self>,
        node: &mut crate::ros::backend::Node,
    ) -> Result<Box<dyn crate::ros::outputs::publishing::Running>, crate::ros::Error> {
        Ok(Box::new(running::start(*self, node)?))
    }

    fn streamed(self: Box<Self>) -> Option<super::Streamed> {
        Some(super::Streamed::Lidar(self))
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
    message.header.stamp = crate::ros::convert::time(scan.time);
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

#[cfg(any(feature = "ros", feature = "dds"))]
mod running {
    use super::*;
    use crate::render::{LidarSources, Slot};
    use crate::ros::backend;
    use crate::ros::outputs::on_request::{OnRequest, RequestedWire};
    use crate::ros::outputs::{PublishCounters, Tick};
    use std::sync::Arc;

    enum Publisher {
        Points(backend::Publisher<PointCloud2>, PointCloud2),
        Scan(backend::Publisher<LaserScan>, LaserScan),
    }

    /// What a lidar publishes with: its publisher and message, and the scan.
    pub struct LidarWire {
        lidar: Lidar,
        publisher: Publisher,
        scan: Scan,
        seen: u64,
    }

    pub fn start(
        lidar: Lidar,
        node: &mut backend::Node,
    ) -> Result<OnRequest<LidarWire>, crate::ros::Error> {
        let (name, qos) = (&lidar.topic.name, lidar.topic.qos);
        let publisher = if lidar.planned.channels == 1 {
            Publisher::Scan(node.publisher(name, qos)?, LaserScan::default())
        } else {
            Publisher::Points(node.publisher(name, qos)?, PointCloud2::default())
        };
        let (index, rate) = (lidar.index, lidar.planned.rate);
        let wire = LidarWire {
            lidar,
            publisher,
            scan: Scan::default(),
            seen: 0,
        };
        Ok(OnRequest::new(index, rate, wire))
    }

    impl RequestedWire for LidarWire {
        type Spec = PlannedLidar;
        type Item = Scan;
        type Watched = bool;

        fn sources<'a>(tick: &Tick<'a>) -> Option<&'a Arc<LidarSources>> {
            tick.lidars
        }

        fn watched(&self, node: &backend::Node) -> bool {
            let subscribers = match &self.publisher {
                Publisher::Points(p, _) => node.subscribers(p),
                Publisher::Scan(p, _) => node.subscribers(p),
            };
            subscribers > 0
        }

        fn any(watched: bool) -> bool {
            watched
        }

        fn publish(&mut self, slot: &Slot<Scan>, _watched: bool, counts: &PublishCounters) {
            slot.read(&mut self.scan, &mut self.seen);
            let (planned, frame_id) = (&self.lidar.planned, &self.lidar.frame_id);
            let sent = match &mut self.publisher {
                Publisher::Points(publisher, cloud) => {
                    fill_points(cloud, &self.scan, planned, frame_id);
                    publisher.publish(cloud)
                }
                Publisher::Scan(publisher, message) => {
                    fill_scan(message, &self.scan, planned, frame_id);
                    publisher.publish(message)
                }
            };
            counts.count(sent.is_ok());
        }

        fn retire(self, node: &mut backend::Node) {
            match self.publisher {
                Publisher::Points(publisher, _) => node.retire(publisher),
                Publisher::Scan(publisher, _) => node.retire(publisher),
            }
        }
    }
}
