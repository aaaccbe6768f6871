//! Camera topics per rendered camera: `{name}/image_raw` (sensor_msgs/Image rgb8),
//! `{name}/depth/image_raw` (32FC1, metres along the optical axis), `{name}/camera_info`
//! (plumb_bob, no distortion), framed at `{name}_optical_frame` (REP 103: z forward, x right,
//! y down), which /tf_static places on the camera's body. A frame is asked of the renderer
//! only while someone subscribes, at most at the camera's rate; it is published when it comes,
//! stamped with the sim time of the state it shows.
// Without a ROS backend only the planning runs (the load-time check of the config).
#![cfg_attr(not(any(feature = "ros", feature = "dds")), allow(dead_code))]
use super::{Plan, PlanError, Planned, Schedule, Topic};
use crate::model::pose;
use crate::render::{Frame, PlannedCamera};
use crate::ros::Qos;
use crate::ros::convert::{frame_name, transform_stamped};
use crate::ros::interfaces::sensor_msgs::msg::{CameraInfo, Image};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

pub struct Camera {
    /// The camera's index at the renderer.
    index: usize,
    image: Topic,
    depth: Option<Topic>,
    info: Topic,
    rate: f64,
    frame_id: String,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    let cameras = crate::render::plan(plan.robots, plan.config)?;
    for (index, camera) in cameras.iter().enumerate() {
        let frame_id = optical_frame(plan, camera);
        let topic = |name: String| Topic {
            name: plan.robot_topic(camera.robot, &name),
            schedule: Schedule::Rate {
                hz: camera.rate,
                follows: None,
            },
            qos: Qos::IMAGES,
        };
        let planned = Camera {
            index,
            image: topic(format!("{}/image_raw", camera.name)),
            depth: camera
                .spec
                .depth
                .then(|| topic(format!("{}/depth/image_raw", camera.name))),
            info: topic(format!("{}/camera_info", camera.name)),
            rate: camera.rate,
            frame_id,
        };
        plan.add_planned(Box::new(planned));
    }
    Ok(())
}

/// Adds `{name}_optical_frame` on the camera's body to the fixed frames; returns its name.
fn optical_frame(plan: &mut Plan, camera: &PlannedCamera) -> String {
    let (model, map, prefixed) = (plan.model, &plan.robots[camera.robot], plan.prefixed());
    let id = camera.spec.camera;
    let body = model.cam_bodyid()[id] as usize;
    let parent = frame_name("world", map, body, prefixed);
    let child = if prefixed {
        format!("{}/{}_optical_frame", map.name, camera.name)
    } else {
        format!("{}_optical_frame", camera.name)
    };
    // MuJoCo's camera looks down its -z with y up; the optical frame turns it half a turn
    // about x.
    let turn = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
    let p = model.cam_pos()[id];
    let at = Isometry3::from_parts(
        Translation3::new(p[0], p[1], p[2]),
        pose::quaternion(&model.cam_quat()[id]) * turn,
    );
    plan.add_static_frame(transform_stamped(parent, child.clone(), &at));
    child
}

impl Planned for Camera {
    fn topic(&self) -> &Topic {
        &self.image
    }

    #[cfg(test)]
    fn fill_json(&mut self, _tick: &super::Tick) -> Option<serde_json::Value> {
        // Frames come from the renderer, not from the state.
        None
    }

    #[cfg(any(feature = "ros", feature = "dds"))]
    fn advertise(
        self: Box<Self>,
        node: &mut crate::ros::backend::Node,
    ) -> Result<Box<dyn crate::ros::node::Running>, crate::ros::Error> {
        Ok(Box::new(running::CameraPublishing::start(*self, node)?))
    }
}

/// An Image of `width` x `height` with `encoding`, rows of `step` bytes.
fn image_header(image: &mut Image, frame: &Frame, frame_id: &str, encoding: &str, step: usize) {
    image.header.stamp = crate::ros::convert::time(frame.time);
    if image.header.frame_id != frame_id {
        image.header.frame_id = frame_id.to_string();
    }
    image.width = frame.width as u32;
    image.height = frame.height as u32;
    if image.encoding != encoding {
        image.encoding = encoding.to_string();
    }
    image.is_bigendian = 0;
    image.step = step as u32;
}

/// sensor_msgs/Image rgb8 of the frame.
pub fn fill_rgb(image: &mut Image, frame: &Frame, frame_id: &str) {
    image_header(image, frame, frame_id, "rgb8", frame.width * 3);
    image.data.clear();
    image.data.extend_from_slice(&frame.rgb);
}

/// sensor_msgs/Image 32FC1 (little-endian metres) of the frame's depth.
pub fn fill_depth(image: &mut Image, frame: &Frame, frame_id: &str) {
    image_header(image, frame, frame_id, "32FC1", frame.width * 4);
    image.data.clear();
    image.data.reserve(frame.depth.len() * 4);
    for metres in &frame.depth {
        image.data.extend_from_slice(&metres.to_le_bytes());
    }
}

/// CameraInfo of the frame: K from its intrinsics, no distortion, P = K | 0.
pub fn fill_info(info: &mut CameraInfo, frame: &Frame, frame_id: &str) {
    info.header.stamp = crate::ros::convert::time(frame.time);
    if info.header.frame_id != frame_id {
        info.header.frame_id = frame_id.to_string();
    }
    info.width = frame.width as u32;
    info.height = frame.height as u32;
    if info.distortion_model.is_empty() {
        info.distortion_model = "plumb_bob".into();
        info.d = vec![0.0; 5];
    }
    let k = frame.intrinsics;
    info.k = [k.fx, 0.0, k.cx, 0.0, k.fy, k.cy, 0.0, 0.0, 1.0];
    info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    info.p = [
        k.fx, 0.0, k.cx, 0.0, 0.0, k.fy, k.cy, 0.0, 0.0, 0.0, 1.0, 0.0,
    ];
}

#[cfg(any(feature = "ros", feature = "dds"))]
mod running {
    use super::*;
    use crate::ros::backend;
    use crate::ros::node::{Every, Running};
    use std::time::{Duration, Instant};

    /// How often a camera that waits for its frame looks whether it came.
    const POLL: Duration = Duration::from_millis(2);

    pub struct CameraPublishing {
        camera: Camera,
        image: backend::Publisher<Image>,
        depth: Option<backend::Publisher<Image>>,
        info: backend::Publisher<CameraInfo>,
        every: Every,
        /// A frame was asked for and has not been published yet.
        waiting: bool,
        next_poll: Instant,
        frame: Frame,
        image_message: Image,
        depth_message: Image,
        info_message: CameraInfo,
    }

    impl CameraPublishing {
        pub fn start(camera: Camera, node: &mut backend::Node) -> Result<Self, crate::ros::Error> {
            let image = node.publisher::<Image>(&camera.image.name, camera.image.qos)?;
            let depth = match &camera.depth {
                Some(topic) => Some(node.publisher::<Image>(&topic.name, topic.qos)?),
                None => None,
            };
            let info = node.publisher::<CameraInfo>(&camera.info.name, camera.info.qos)?;
            Ok(Self {
                every: Every::hz(camera.rate, Instant::now()),
                camera,
                image,
                depth,
                info,
                waiting: false,
                next_poll: Instant::now(),
                frame: Frame::default(),
                image_message: Image::default(),
                depth_message: Image::default(),
                info_message: CameraInfo::default(),
            })
        }

        /// Publishes the frame that came, to the topics someone reads.
        fn publish(&mut self, node: &backend::Node, tick: &crate::ros::outputs::Tick) {
            let frame_id = &self.camera.frame_id;
            if node.subscribers(&self.image) > 0 {
                fill_rgb(&mut self.image_message, &self.frame, frame_id);
                tick.publishing.count(self.image.publish(&self.image_message).is_ok());
            }
            if let Some(depth) = &self.depth
                && !self.frame.depth.is_empty()
                && node.subscribers(depth) > 0
            {
                fill_depth(&mut self.depth_message, &self.frame, frame_id);
                tick.publishing.count(depth.publish(&self.depth_message).is_ok());
            }
            fill_info(&mut self.info_message, &self.frame, frame_id);
            tick.publishing.count(self.info.publish(&self.info_message).is_ok());
        }

        fn watched(&self, node: &backend::Node) -> bool {
            node.subscribers(&self.image) > 0
                || node.subscribers(&self.info) > 0
                || self.depth.as_ref().is_some_and(|d| node.subscribers(d) > 0)
        }
    }

    impl Running for CameraPublishing {
        fn deadline(&self) -> Option<Instant> {
            let due = self.every.deadline();
            if self.waiting {
                due.map(|d| d.min(self.next_poll))
            } else {
                due
            }
        }

        fn observe(&mut self, _tick: &crate::ros::outputs::Tick) {}

        fn run(&mut self, tick: &crate::ros::outputs::Tick, node: &backend::Node) {
            let Some(renderer) = tick.renderer else {
                return;
            };
            if self.waiting {
                if renderer.slot(self.camera.index).take(&mut self.frame) {
                    self.waiting = false;
                    self.publish(node, tick);
                } else {
                    self.next_poll = tick.now + POLL;
                }
            }
            if self.every.due(tick.now) && self.watched(node) {
                renderer.request(self.camera.index);
                self.waiting = true;
                self.next_poll = tick.now + POLL;
            }
        }

        fn retime(&mut self, _field: &str, _hz: f64) {}

        fn align(&mut self, epoch: Instant) {
            self.every.next = epoch;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::Intrinsics;

    fn frame() -> Frame {
        Frame {
            time: 1.5,
            width: 2,
            height: 1,
            rgb: vec![1, 2, 3, 4, 5, 6],
            depth: vec![0.5, f32::INFINITY],
            intrinsics: Intrinsics {
                fx: 10.0,
                fy: 11.0,
                cx: 0.5,
                cy: 0.0,
            },
        }
    }

    #[test]
    fn images_carry_rows_of_their_encoding() {
        let mut image = Image::default();
        fill_rgb(&mut image, &frame(), "cam_optical_frame");
        assert_eq!((image.width, image.height, image.step), (2, 1, 6));
        assert_eq!(image.encoding, "rgb8");
        assert_eq!(image.data, [1, 2, 3, 4, 5, 6]);
        assert_eq!(image.header.stamp.sec, 1);
        assert_eq!(image.header.stamp.nanosec, 500_000_000);
        fill_depth(&mut image, &frame(), "cam_optical_frame");
        assert_eq!((image.encoding.as_str(), image.step), ("32FC1", 8));
        assert_eq!(&image.data[..4], &0.5f32.to_le_bytes());
        assert_eq!(&image.data[4..], &f32::INFINITY.to_le_bytes());
    }

    #[test]
    fn camera_info_holds_k_and_p() {
        let mut info = CameraInfo::default();
        fill_info(&mut info, &frame(), "cam_optical_frame");
        assert_eq!(info.k, [10.0, 0.0, 0.5, 0.0, 11.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(info.p[0..4], [10.0, 0.0, 0.5, 0.0]);
        assert_eq!(info.distortion_model, "plumb_bob");
        assert_eq!(info.d, [0.0; 5]);
    }
}
