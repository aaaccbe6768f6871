//! Camera topics per rendered camera: `{name}/image_raw` (sensor_msgs/Image rgb8),
//! `{name}/depth/image_raw` (32FC1, metres along the optical axis), `{name}/camera_info`
//! (plumb_bob, no distortion), optionally `{name}/points` (sensor_msgs/PointCloud2 from
//! depth, coloured), framed at `{name}_optical_frame` (REP 103: z forward, x right,
//! y down), which /tf_static places on the camera's body. A frame is asked of the renderer
//! only while someone subscribes, at the camera's rate in sim time, rendered from that
//! sample's state; it is published when it comes, stamped with the sample's time. A robot's
//! `noise:` entry for the camera's name is the pixels' noise (on intensities from 0 to 1, as
//! Gazebo's camera noise is), and for `{name}/depth` the depth's (metres).
use super::noise::{self, SensorNoise};
use super::{Plan, PlanError, Planned, Schedule, Topic, segmentation};
use crate::model::pose;
use crate::render::{Frame, PlannedCamera};
use crate::Qos;
use crate::convert::{frame_name, given_frame, image_header, transform_stamped};
use crate::messages::sensor_msgs::msg::{CameraInfo, Image, PointCloud2};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

pub struct Camera {
    /// The camera's index at the renderer.
    pub index: usize,
    pub image: Option<Topic>,
    pub depth: Option<Topic>,
    pub points: Option<Topic>,
    pub info: Topic,
    pub rate: f64,
    pub frame_id: String,
    pub pixel_noise: Option<SensorNoise>,
    pub depth_noise: Option<SensorNoise>,
    pub segmentation: Option<super::segmentation::Segmentation>,
    pub lens: Option<super::lens::Lens>,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for (index, camera) in plan.sensors.cameras.iter().enumerate() {
        let frame_id = optical_frame(plan, camera);
        let topic = |name: String| Topic {
            name: plan.robot_topic(camera.robot, &name),
            schedule: Schedule::Rate {
                hz: camera.rate,
                follows: None,
            },
            qos: Qos::IMAGES,
        };
        let named = |given: &Option<String>, default: String| topic(given.clone().unwrap_or(default));
        let names = &camera.topics;
        let planned = Camera {
            index,
            image: camera
                .image_topic
                .then(|| named(&names.image, format!("{}/image_raw", camera.name))),
            depth: camera
                .depth_topic
                .then(|| named(&names.depth, format!("{}/depth/image_raw", camera.name))),
            points: camera
                .points_topic
                .then(|| named(&names.points, format!("{}/points", camera.name))),
            info: named(&names.camera_info, format!("{}/camera_info", camera.name)),
            rate: camera.rate,
            frame_id,
            pixel_noise: noise::named(plan, camera.robot, &camera.name, 1, 0.0),
            depth_noise: noise::named(plan, camera.robot, &format!("{}/depth", camera.name), 1, 0.0),
            lens: camera.distortion.map(super::lens::Lens::new),
            segmentation: match camera.spec.segmentation {
                true => {
                    let names = segmentation::Names::of(&camera.name, names);
                    Some(segmentation::plan(plan, camera.robot, &names, camera.rate, camera.instances)?)
                }
                false => None,
            },
        };
        plan.add_planned(Box::new(planned));
    }
    Ok(())
}

/// Adds `{name}_optical_frame` on the camera's body to the fixed frames; returns its name.
/// A frame the config names is taken as one that exists.
fn optical_frame(plan: &mut Plan, camera: &PlannedCamera) -> String {
    let (model, map, prefixed) = (plan.model, &plan.robots[camera.robot], plan.prefixed(camera.robot));
    if let Some(given) = &camera.frame_id {
        return given_frame(given, map, prefixed);
    }
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
        self.image.as_ref().or(self.depth.as_ref()).unwrap_or(&self.info)
    }

    #[cfg(test)]
    fn fill_json(&mut self, _tick: &super::Tick) -> Option<serde_json::Value> {
        // Frames come from the renderer, not from the state.
        None
    }

    fn into_output(self: Box<Self>) -> super::TopicOutput {
        super::TopicOutput::Camera(self)
    }
}

/// The frame as a noisy camera sees it: each colour value with the pixel noise (on 0 to 1,
/// clamped there), each depth that sees something with the depth noise (kept at 0 or more).
pub fn add_noise(frame: &mut Frame, pixels: &mut Option<SensorNoise>, depth: &mut Option<SensorNoise>) {
    let time = frame.time;
    if pixels.is_some() {
        for value in frame.rgb.iter_mut() {
            let intensity = noise::range(f64::from(*value) / 255.0, pixels, 0, time);
            *value = (intensity.clamp(0.0, 1.0) * 255.0).round() as u8;
        }
    }
    if depth.is_some() {
        for metres in frame.depth.iter_mut().filter(|d| d.is_finite()) {
            *metres = noise::range(f64::from(*metres), depth, 0, time) as f32;
        }
    }
}

/// sensor_msgs/Image rgb8 of the frame.
pub fn fill_rgb(image: &mut Image, frame: &Frame, frame_id: &str) {
    image_header(image, frame, frame_id, "rgb8", frame.width * 3);
    image.data.clear();
    image.data.extend_from_slice(&frame.rgb);
}

/// sensor_msgs/Image 32FC1 (metres, in the machine's byte order, which is_bigendian names) of
/// the frame's depth.
pub fn fill_depth(image: &mut Image, frame: &Frame, frame_id: &str) {
    image_header(image, frame, frame_id, "32FC1", frame.width * 4);
    // The floats' bytes as they lie, in one copy (a loop per pixel took two thirds of the
    // streams thread in a debug build); the header says their byte order.
    image.is_bigendian = u8::from(cfg!(target_endian = "big"));
    image.data.clear();
    image
        .data
        .extend_from_slice(bytemuck::cast_slice(frame.depth.as_slice()));
}

/// CameraInfo of the frame: K from its intrinsics, the plumb-bob coefficients `d`, P = K | 0.
pub fn fill_info(info: &mut CameraInfo, frame: &Frame, frame_id: &str, d: [f64; 5]) {
    info.header.stamp = crate::convert::time(frame.time);
    if info.header.frame_id != frame_id {
        info.header.frame_id = frame_id.to_string();
    }
    info.width = frame.width as u32;
    info.height = frame.height as u32;
    if info.distortion_model.is_empty() {
        info.distortion_model = "plumb_bob".into();
    }
    if info.d != d {
        info.d = d.to_vec();
    }
    let k = frame.intrinsics;
    info.k = [k.fx, 0.0, k.cx, 0.0, k.fy, k.cy, 0.0, 0.0, 1.0];
    info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    info.p = [
        k.fx, 0.0, k.cx, 0.0, 0.0, k.fy, k.cy, 0.0, 0.0, 0.0, 1.0, 0.0,
    ];
}

/// The depth image as an organized cloud in the optical frame: per pixel x, y, z (float32
/// metres) and rgb (PCL's packing: 0x00RRGGBB in the bytes of a float32); NaN where the pixel
/// sees nothing within the far plane. `rays`: through a lens, where each pixel's ray falls in
/// the pinhole image that K describes (NaN: outside it); without, the pixel itself.
pub fn fill_depth_points(
    cloud: &mut PointCloud2,
    frame: &Frame,
    frame_id: &str,
    rays: Option<&[[f32; 2]]>,
) {
    super::cloud::begin(cloud, frame.time, frame_id, &["x", "y", "z", "rgb"]);
    let k = frame.intrinsics;
    cloud.data.reserve(frame.depth.len() * 16);
    for (pixel, (z, rgb)) in frame.depth.iter().zip(frame.rgb.chunks_exact(3)).enumerate() {
        let (u, v) = match rays.and_then(|r| r.get(pixel)) {
            Some(at) => (at[0] as f64, at[1] as f64),
            None => ((pixel % frame.width) as f64, (pixel / frame.width) as f64),
        };
        let point = if z.is_finite() && u.is_finite() {
            let z = *z as f64;
            [(u - k.cx) * z / k.fx, (v - k.cy) * z / k.fy, z].map(|c| c as f32)
        } else {
            [f32::NAN; 3]
        };
        for c in point {
            cloud.data.extend_from_slice(&c.to_le_bytes());
        }
        let packed = (rgb[0] as u32) << 16 | (rgb[1] as u32) << 8 | rgb[2] as u32;
        cloud.data.extend_from_slice(&packed.to_le_bytes());
    }
    super::cloud::finish(cloud, frame.width, frame.height, false);
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
            segments: Vec::new(),
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
    fn points_come_from_depth_through_k() {
        let mut cloud = PointCloud2::default();
        fill_depth_points(&mut cloud, &frame(), "cam_optical_frame", None);
        assert_eq!((cloud.width, cloud.height, cloud.point_step), (2, 1, 16));
        let value = |i: usize| f32::from_le_bytes(cloud.data[4 * i..4 * i + 4].try_into().unwrap());
        // Pixel (0, 0) at 0.5 m: x = (0 - 0.5) * 0.5 / 10, y = (0 - 0) * 0.5 / 11.
        assert!((value(0) + 0.025).abs() < 1e-7 && value(1) == 0.0 && value(2) == 0.5);
        assert_eq!(value(3).to_bits(), 0x010203, "packed rgb");
        assert!(value(4).is_nan(), "nothing seen: NaN");
        // Through a lens, pixel (0, 0) sees along the ray of pinhole pixel (0.5, 0): the axis.
        let rays = [[0.5, 0.0], [1.0, 0.0]];
        let mut through_lens = PointCloud2::default();
        fill_depth_points(&mut through_lens, &frame(), "cam_optical_frame", Some(&rays));
        let x_y_z = &through_lens.data[..12];
        assert_eq!(x_y_z, [0.0f32, 0.0, 0.5].map(f32::to_le_bytes).concat());
    }

    #[test]
    fn camera_info_holds_k_and_p() {
        let mut info = CameraInfo::default();
        fill_info(&mut info, &frame(), "cam_optical_frame", [0.0; 5]);
        assert_eq!(info.k, [10.0, 0.0, 0.5, 0.0, 11.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(info.p[0..4], [10.0, 0.0, 0.5, 0.0]);
        assert_eq!(info.distortion_model, "plumb_bob");
        assert_eq!(info.d, [0.0; 5]);
    }
}
