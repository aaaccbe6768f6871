//! A camera on the streams: its image, depth and camera_info channels. A frame is asked of
//! the renderer only while a sink takes one of them, at most at the camera's rate, as for ROS
//! (a frame asked by both goes to both: the renderer's slot is shared).
use super::{StreamCounters, log_time, send};
use crate::messages::sensor_msgs::msg::{CameraInfo, Image};
use crate::render::{Cameras, Frame};
use crate::topics::asking::Asking;
use crate::topics::{Camera, fill_depth, fill_info, fill_rgb};
use foxglove::RawChannel;
use std::sync::Arc;
use std::time::Instant;

pub struct CameraStream {
    index: usize,
    asking: Asking,
    image: Arc<RawChannel>,
    depth: Option<Arc<RawChannel>>,
    info: Arc<RawChannel>,
    frame_id: String,
    frame: Frame,
    seen: u64,
    image_message: Image,
    depth_message: Image,
    info_message: CameraInfo,
}

/// A camera's channels, made (or kept from the last world) by the streams thread.
pub struct CameraChannels {
    pub image: Arc<RawChannel>,
    pub depth: Option<Arc<RawChannel>>,
    pub info: Arc<RawChannel>,
}

impl CameraStream {
    pub fn new(camera: Camera, channels: CameraChannels) -> Self {
        Self {
            index: camera.index,
            asking: Asking::new(camera.rate),
            image: channels.image,
            depth: channels.depth,
            info: channels.info,
            frame_id: camera.frame_id,
            frame: Frame::default(),
            seen: 0,
            image_message: Image::default(),
            depth_message: Image::default(),
            info_message: CameraInfo::default(),
        }
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.asking.deadline()
    }

    pub fn channels(&self) -> impl Iterator<Item = &Arc<RawChannel>> {
        [&self.image, &self.info].into_iter().chain(&self.depth)
    }

    fn watched(&self) -> bool {
        self.channels().any(|c| c.has_sinks())
    }

    /// Sends the frame that came, and asks for the next when due.
    pub fn run(
        &mut self,
        cameras: &Cameras,
        now: Instant,
        counters: &StreamCounters,
        bytes: &mut Vec<u8>,
    ) {
        if self.index >= cameras.len() {
            return;
        }
        let slot = cameras.slot(self.index);
        if self.asking.came(slot, now) && slot.read(&mut self.frame, &mut self.seen) {
            let (frame, frame_id) = (&self.frame, self.frame_id.as_str());
            let time = log_time(frame.time);
            if self.image.has_sinks() {
                fill_rgb(&mut self.image_message, frame, frame_id);
                send(&self.image, &self.image_message, time, counters, bytes);
            }
            if let Some(depth) = &self.depth
                && !frame.depth.is_empty()
                && depth.has_sinks()
            {
                fill_depth(&mut self.depth_message, frame, frame_id);
                send(depth, &self.depth_message, time, counters, bytes);
            }
            fill_info(&mut self.info_message, frame, frame_id);
            send(&self.info, &self.info_message, time, counters, bytes);
        }
        let watched = self.watched();
        if self.asking.ask(now, || watched) {
            cameras.request(self.index);
        }
    }
}
