//! A lidar's messages: the scans the caster made on request, as LaserScan (one channel) or
//! PointCloud2, on the topic the lidar was planned with.
use super::requested::{Made, OnRequest, Requested, add, encoded};
use super::{Routes, TopicSpec};
use crate::messages::sensor_msgs::msg::{LaserScan, PointCloud2};
use crate::render::{LidarSources, PlannedLidar, Scan, Slot};
use crate::{Lidar, Tick, add_lidar_noise, fill_points, fill_scan};
use std::sync::Arc;

/// The message a lidar fills, by its kind.
enum Message {
    Points(PointCloud2),
    Scan(LaserScan),
}

/// A lidar's topic (index in the world's list) and message, and its scan.
struct LidarMessages {
    topic: usize,
    lidar: Lidar,
    scan: Scan,
    seen: u64,
    message: Message,
    bytes: Vec<u8>,
}

/// The running output of `lidar`, its topic added to `topics`.
pub fn start(lidar: Lidar, topics: &mut Vec<TopicSpec>) -> Box<dyn Requested> {
    let (topic, message) = if lidar.planned.channels == 1 {
        let topic = add::<LaserScan>(topics, &lidar.topic);
        (topic, Message::Scan(LaserScan::default()))
    } else {
        let topic = add::<PointCloud2>(topics, &lidar.topic);
        (topic, Message::Points(PointCloud2::default()))
    };
    let (index, rate, name) = (lidar.index, lidar.planned.rate, lidar.topic.name.clone());
    let messages = LidarMessages {
        topic,
        lidar,
        scan: Scan::default(),
        seen: 0,
        message,
        bytes: Vec::new(),
    };
    Box::new(OnRequest::new(index, name, vec![topic], rate, messages))
}

impl Made for LidarMessages {
    type Spec = PlannedLidar;
    type Item = Scan;

    fn sources<'a>(tick: &Tick<'a>) -> Option<&'a Arc<LidarSources>> {
        tick.lidars
    }

    fn send(&mut self, slot: &Slot<Scan>, routes: &Routes) {
        slot.read(&mut self.scan, &mut self.seen);
        add_lidar_noise(&mut self.scan, &self.lidar.planned, &mut self.lidar.noise);
        let (planned, frame_id) = (&self.lidar.planned, self.lidar.frame_id.as_str());
        let (time, bytes) = (self.scan.time, &mut self.bytes);
        let sent = match &mut self.message {
            Message::Points(cloud) => {
                fill_points(cloud, &self.scan, planned, frame_id);
                routes.encode_and_send(self.topic, cloud, time, bytes)
            }
            Message::Scan(message) => {
                fill_scan(message, &self.scan, planned, frame_id);
                routes.encode_and_send(self.topic, message, time, bytes)
            }
        };
        encoded(sent);
    }
}
