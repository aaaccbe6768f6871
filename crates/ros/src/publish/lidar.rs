//! A lidar's ROS publisher: the scans the caster made on request, as LaserScan (one
//! channel) or PointCloud2, on the topic the lidar was planned with.
use super::on_request::{OnRequest, RequestedWire};
use crate::backend;
use crate::messages::sensor_msgs::msg::{LaserScan, PointCloud2};
use crate::render::{LidarSources, PlannedLidar, Scan, Slot};
use crate::topics::{Lidar, PublishCounters, Tick, fill_points, fill_scan};
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

pub fn start(lidar: Lidar, node: &mut backend::Node) -> Result<OnRequest<LidarWire>, crate::Error> {
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
