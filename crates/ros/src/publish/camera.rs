//! A camera's ROS publishers: the frames the renderer made on request, as Image, depth
//! Image, CameraInfo and PointCloud2, on the topics the camera was planned with.
use super::on_request::{OnRequest, RequestedWire};
use crate::backend;
use crate::messages::sensor_msgs::msg::{CameraInfo, Image, PointCloud2};
use crate::render::{Cameras, Frame, PlannedCamera, Slot};
use crate::topics::{
    Camera, PublishCounters, Tick, Topic, fill_depth, fill_depth_points, fill_info, fill_rgb,
};
use std::sync::Arc;

/// What a camera publishes with: its publishers, the frame and the messages.
pub struct CameraWire {
    image: backend::Publisher<Image>,
    depth: Option<backend::Publisher<Image>>,
    points: Option<backend::Publisher<PointCloud2>>,
    info: backend::Publisher<CameraInfo>,
    frame_id: String,
    frame: Frame,
    seen: u64,
    image_message: Image,
    depth_message: Image,
    info_message: CameraInfo,
    cloud: PointCloud2,
}

/// Which of a camera's topics are read.
#[derive(Clone, Copy, Default)]
pub struct Watched {
    image: bool,
    depth: bool,
    points: bool,
    info: bool,
}

pub fn start(
    camera: Camera,
    node: &mut backend::Node,
) -> Result<OnRequest<CameraWire>, crate::Error> {
    let wire = CameraWire {
        image: node.publisher(&camera.image.name, camera.image.qos)?,
        depth: optional(node, &camera.depth)?,
        points: optional(node, &camera.points)?,
        info: node.publisher(&camera.info.name, camera.info.qos)?,
        frame_id: camera.frame_id,
        frame: Frame::default(),
        seen: 0,
        image_message: Image::default(),
        depth_message: Image::default(),
        info_message: CameraInfo::default(),
        cloud: PointCloud2::default(),
    };
    Ok(OnRequest::new(camera.index, camera.rate, wire))
}

/// The publisher of a topic the config may leave out.
fn optional<M: crate::messages::Message>(
    node: &mut backend::Node,
    topic: &Option<Topic>,
) -> Result<Option<backend::Publisher<M>>, crate::Error> {
    match topic {
        Some(topic) => Ok(Some(node.publisher(&topic.name, topic.qos)?)),
        None => Ok(None),
    }
}

impl RequestedWire for CameraWire {
    type Spec = PlannedCamera;
    type Item = Frame;
    type Watched = Watched;

    fn sources<'a>(tick: &Tick<'a>) -> Option<&'a Arc<Cameras>> {
        tick.cameras
    }

    fn watched(&self, node: &backend::Node) -> Watched {
        Watched {
            image: node.subscribers(&self.image) > 0,
            depth: self.depth.as_ref().is_some_and(|d| node.subscribers(d) > 0),
            points: self
                .points
                .as_ref()
                .is_some_and(|p| node.subscribers(p) > 0),
            info: node.subscribers(&self.info) > 0,
        }
    }

    fn any(watched: Watched) -> bool {
        watched.image || watched.depth || watched.points || watched.info
    }

    fn publish(&mut self, slot: &Slot<Frame>, watched: Watched, counts: &PublishCounters) {
        slot.read(&mut self.frame, &mut self.seen);
        let (frame, frame_id) = (&self.frame, &self.frame_id);
        if watched.image {
            fill_rgb(&mut self.image_message, frame, frame_id);
            counts.count(self.image.publish(&self.image_message).is_ok());
        }
        if let Some(depth) = &self.depth
            && !frame.depth.is_empty()
            && watched.depth
        {
            fill_depth(&mut self.depth_message, frame, frame_id);
            counts.count(depth.publish(&self.depth_message).is_ok());
        }
        if let Some(points) = &self.points
            && !frame.depth.is_empty()
            && watched.points
        {
            fill_depth_points(&mut self.cloud, frame, frame_id);
            counts.count(points.publish(&self.cloud).is_ok());
        }
        fill_info(&mut self.info_message, frame, frame_id);
        counts.count(self.info.publish(&self.info_message).is_ok());
    }

    fn retire(self, node: &mut backend::Node) {
        node.retire(self.image);
        node.retire(self.info);
        if let Some(depth) = self.depth {
            node.retire(depth);
        }
        if let Some(points) = self.points {
            node.retire(points);
        }
    }
}
