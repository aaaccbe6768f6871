//! A lidar on the streams: its point cloud (3D) or laser scan (planar) channel. A scan is
//! asked of the caster only while a sink takes it, at most at the lidar's rate, as for ROS (a
//! scan asked by both goes to both: the caster's slot is shared).
use super::{StreamCounters, log_time, send};
use crate::messages::sensor_msgs::msg::{LaserScan, PointCloud2};
use crate::render::{LidarSources, Scan};
use crate::topics::asking::Asking;
use crate::topics::{Lidar, fill_points, fill_scan};
use foxglove::RawChannel;
use std::sync::Arc;
use std::time::Instant;

/// The message a lidar fills, by its kind.
enum Message {
    Points(PointCloud2),
    Scan(LaserScan),
}

pub struct LidarStream {
    lidar: Lidar,
    asking: Asking,
    channel: Arc<RawChannel>,
    scan: Scan,
    seen: u64,
    message: Message,
}

impl LidarStream {
    pub fn new(lidar: Lidar, channel: Arc<RawChannel>) -> Self {
        let message = if lidar.planned.channels == 1 {
            Message::Scan(LaserScan::default())
        } else {
            Message::Points(PointCloud2::default())
        };
        Self {
            asking: Asking::new(lidar.planned.rate),
            lidar,
            channel,
            scan: Scan::default(),
            seen: 0,
            message,
        }
    }

    /// Whether it sends laser scans (a planar lidar) rather than point clouds.
    pub fn planar(lidar: &Lidar) -> bool {
        lidar.planned.channels == 1
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.asking.deadline()
    }

    pub fn channel(&self) -> &Arc<RawChannel> {
        &self.channel
    }

    /// Sends the scan that came, and asks for the next when due.
    pub fn run(
        &mut self,
        lidars: &LidarSources,
        now: Instant,
        counters: &StreamCounters,
        bytes: &mut Vec<u8>,
    ) {
        let index = self.lidar.index;
        if index >= lidars.len() {
            return;
        }
        let slot = lidars.slot(index);
        if self.asking.came(slot, now) && slot.read(&mut self.scan, &mut self.seen) {
            let (planned, frame_id) = (&self.lidar.planned, self.lidar.frame_id.as_str());
            let time = log_time(self.scan.time);
            match &mut self.message {
                Message::Points(cloud) => {
                    fill_points(cloud, &self.scan, planned, frame_id);
                    send(&self.channel, cloud, time, counters, bytes);
                }
                Message::Scan(message) => {
                    fill_scan(message, &self.scan, planned, frame_id);
                    send(&self.channel, message, time, counters, bytes);
                }
            }
        }
        let watched = self.channel.has_sinks();
        if self.asking.ask(now, || watched) {
            lidars.request(index);
        }
    }
}
