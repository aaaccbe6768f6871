//! A camera's messages: the frames the renderer made on request, as Image, depth Image,
//! PointCloud2 and CameraInfo on the topics the camera was planned with, and a segmentation
//! camera's maps, label maps and boxes.
use super::requested::{Made, OnRequest, Requested, add, encoded};
use super::segmentation::SegmentationMessages;
use super::{Routes, TopicSpec};
use crate::lens::Lens;
use crate::messages::sensor_msgs::msg::{CameraInfo, Image, PointCloud2};
use crate::noise::SensorNoise;
use crate::render::{Cameras, Frame, PlannedCamera, Slot};
use crate::{Camera, Tick, add_camera_noise, fill_depth, fill_depth_points, fill_info, fill_rgb};
use std::sync::Arc;

/// A camera's topics (indices in the world's list) and message buffers, and its frame.
struct CameraMessages {
    image: Option<usize>,
    depth: Option<usize>,
    points: Option<usize>,
    info: usize,
    frame_id: String,
    pixel_noise: Option<SensorNoise>,
    depth_noise: Option<SensorNoise>,
    frame: Frame,
    seen: u64,
    image_message: Image,
    depth_message: Image,
    info_message: CameraInfo,
    cloud: PointCloud2,
    bytes: Vec<u8>,
    segmentation: Option<SegmentationMessages>,
    lens: Option<Lens>,
}

/// The running output of `camera`, its topics added to `topics`.
pub fn start(camera: Camera, topics: &mut Vec<TopicSpec>) -> Box<dyn Requested> {
    let first = crate::Planned::topic(&camera).name.clone();
    let image = camera.image.as_ref().map(|t| add::<Image>(topics, t));
    let depth = camera.depth.as_ref().map(|t| add::<Image>(topics, t));
    let points = camera
        .points
        .as_ref()
        .map(|t| add::<PointCloud2>(topics, t));
    let info = add::<CameraInfo>(topics, &camera.info);
    let segmentation = camera
        .segmentation
        .map(|s| SegmentationMessages::start(s, topics));
    let segmentation_topics: Vec<usize> = segmentation.iter().flat_map(|s| s.topics()).collect();
    let messages = CameraMessages {
        image,
        depth,
        points,
        info,
        frame_id: camera.frame_id,
        pixel_noise: camera.pixel_noise,
        depth_noise: camera.depth_noise,
        frame: Frame::default(),
        seen: 0,
        image_message: Image::default(),
        depth_message: Image::default(),
        info_message: CameraInfo::default(),
        cloud: PointCloud2::default(),
        bytes: Vec::new(),
        segmentation,
        lens: camera.lens,
    };
    let all = [image, depth, points, Some(info)]
        .into_iter()
        .flatten()
        .chain(segmentation_topics);
    Box::new(OnRequest::new(
        camera.index,
        first,
        all.collect(),
        camera.rate,
        messages,
    ))
}

impl Made for CameraMessages {
    type Spec = PlannedCamera;
    type Item = Frame;

    fn sources<'a>(tick: &Tick<'a>) -> Option<&'a Arc<Cameras>> {
        tick.cameras
    }

    fn send(&mut self, slot: &Slot<Frame>, routes: &Routes) {
        slot.read(&mut self.frame, &mut self.seen);
        if let Some(lens) = &mut self.lens {
            lens.apply(&mut self.frame);
        }
        add_camera_noise(
            &mut self.frame,
            &mut self.pixel_noise,
            &mut self.depth_noise,
        );
        let (frame, frame_id, time) = (&self.frame, self.frame_id.as_str(), self.frame.time);
        let bytes = &mut self.bytes;
        if let Some(image) = self.image.filter(|&t| routes.wanted(t)) {
            fill_rgb(&mut self.image_message, frame, frame_id);
            encoded(routes.encode_and_send(image, &self.image_message, time, bytes));
        }
        let with_depth =
            |topic: &Option<usize>| topic.filter(|&t| !frame.depth.is_empty() && routes.wanted(t));
        if let Some(depth) = with_depth(&self.depth) {
            fill_depth(&mut self.depth_message, frame, frame_id);
            encoded(routes.encode_and_send(depth, &self.depth_message, time, bytes));
        }
        if let Some(points) = with_depth(&self.points) {
            let rays = self.lens.as_ref().map(Lens::sources);
            fill_depth_points(&mut self.cloud, frame, frame_id, rays);
            encoded(routes.encode_and_send(points, &self.cloud, time, bytes));
        }
        let d = self.lens.as_ref().map_or([0.0; 5], Lens::d);
        fill_info(&mut self.info_message, frame, frame_id, d);
        encoded(routes.encode_and_send(self.info, &self.info_message, time, bytes));
        if let Some(segmentation) = &mut self.segmentation {
            segmentation.send(frame, frame_id, routes, bytes);
        }
    }
}
