//! A `<gazebo>` camera: gz-sim's `camera`, `depth_camera`, `rgbd_camera`, `wideanglecamera`
//! (rendered as a pinhole), `segmentation` and `boundingbox_camera`, Classic's `camera` and
//! `depth` with their `libgazebo_ros_camera` plugin: a camera mounted on its link, on the
//! topics its users read.
use super::values::{ClassicTopics, frame, gz_topic, noise, number, pose, rate, text};
use crate::config::{CameraConfig, CameraMount, CameraTopics, LensDistortion, NoiseConfig};
use crate::model::xml::Element;

pub const TYPES: [&str; 7] = [
    "camera",
    "depth_camera",
    "rgbd_camera",
    "depth",
    "wideanglecamera",
    "segmentation",
    "boundingbox_camera",
];

#[derive(Debug, Clone, PartialEq)]
pub struct GazeboCamera {
    pub camera: CameraConfig,
    /// `<camera><noise>`: on the pixels of a colour camera, on the depth of a depth camera.
    pub noise: Option<NoiseConfig>,
    pub depth_noise: Option<NoiseConfig>,
    /// What is rendered otherwise than Gazebo would, in words.
    pub changed: Option<String>,
}

/// What a sensor type publishes.
#[derive(Clone, Copy)]
struct Outputs {
    image: bool,
    depth: bool,
    segmentation: bool,
}

fn outputs(kind: &str) -> Outputs {
    let only = |image, depth, segmentation| Outputs {
        image,
        depth,
        segmentation,
    };
    match kind {
        "depth_camera" => only(false, true, false),
        "rgbd_camera" | "depth" => only(true, true, false),
        "segmentation" => only(false, false, true),
        "boundingbox_camera" => only(true, false, true),
        _ => only(true, false, false),
    }
}

/// gz-sim's `<segmentation_type>`: whether its maps are the instance (panoptic) ones.
fn instance_maps(optics: &Element) -> Result<bool, String> {
    match text(Some(optics), "segmentation_type").as_deref() {
        None | Some("semantic") => Ok(false),
        Some("instance" | "panoptic") => Ok(true),
        Some(other) => Err(format!(
            "<segmentation_type> '{other}' is not semantic, instance or panoptic"
        )),
    }
}

/// gz-sim's `<box_type>`, where it differs from the boxes made here (each labelled
/// instance's visible pixels), in words.
fn box_change(optics: &Element) -> Result<Option<String>, String> {
    match text(Some(optics), "box_type").as_deref() {
        None | Some("2d" | "visible_2d" | "visible_box_2d") => Ok(None),
        Some(kind @ ("full_2d" | "full_box_2d" | "3d")) => Ok(Some(format!(
            "<box_type> {kind}: the boxes are each instance's visible pixels, in 2D"
        ))),
        Some(other) => Err(format!(
            "<box_type> '{other}' is not 2d, visible_2d, full_2d or 3d"
        )),
    }
}

pub fn read(sensor: &Element, name: &str, link: &str, kind: &str) -> Result<GazeboCamera, String> {
    // Some robots write the optics straight under `<sensor>` (ROSbot's colour camera).
    let optics = sensor.child("camera").unwrap_or(sensor);
    let image = optics.child("image");
    let width = pixels(image, "width", 320.0)?;
    let height = pixels(image, "height", 240.0)?;
    let horizontal_fov = number(Some(optics), "horizontal_fov", 1.047)?;
    if !(horizontal_fov > 0.0 && horizontal_fov < std::f64::consts::PI) {
        return Err(format!(
            "<horizontal_fov> {horizontal_fov} is not between 0 and pi"
        ));
    }
    let fovy = 2.0 * ((horizontal_fov / 2.0).tan() * f64::from(height) / f64::from(width)).atan();
    let clip = optics.child("clip");
    let (xyz, rpy) = pose(sensor)?;
    let wanted = outputs(kind);
    let written_noise = optics.child("noise").map(noise).transpose()?;
    let camera = CameraConfig {
        mount: Some(CameraMount {
            body: link.to_string(),
            xyz,
            rpy,
            fovy: fovy.to_degrees(),
        }),
        width,
        height,
        rate: rate(sensor, 30.0)?,
        image: wanted.image,
        depth: wanted.depth,
        points: wanted.depth,
        segmentation: wanted.segmentation,
        near: Some(number(clip, "near", 0.1)?),
        far: Some(number(clip, "far", 100.0)?),
        distortion: distortion(sensor, optics)?,
        topics: topics(sensor, name, kind, optics)?,
        frame_id: Some(frame(sensor, link, text(Some(optics), "optical_frame_id"))),
        ..CameraConfig::found(name)
    };
    let changed = match kind {
        "wideanglecamera" => Some(
            "a wide-angle lens is rendered as a pinhole of the same horizontal field of view"
                .into(),
        ),
        "boundingbox_camera" => box_change(optics)?,
        _ => None,
    };
    Ok(GazeboCamera {
        camera,
        noise: written_noise.clone().filter(|_| wanted.image),
        depth_noise: written_noise.filter(|_| !wanted.image),
        changed,
    })
}

fn pixels(image: Option<&Element>, name: &str, default: f64) -> Result<u32, String> {
    let side = number(image, name, default)?;
    if !(1.0..=f64::from(crate::config::MAX_IMAGE_SIDE)).contains(&side) {
        return Err(format!("<image><{name}> {side} pixels is out of range"));
    }
    Ok(side as u32)
}

/// gz-sim's `<camera><distortion>` (k1, k2, k3, p1, p2) or a Classic plugin's
/// `distortion_k1..k3, _t1, _t2`; none when all are zero.
fn distortion(sensor: &Element, optics: &Element) -> Result<Option<LensDistortion>, String> {
    let lens = if let Some(gz) = optics.child("distortion") {
        let at = Some(gz);
        LensDistortion {
            k1: number(at, "k1", 0.0)?,
            k2: number(at, "k2", 0.0)?,
            k3: number(at, "k3", 0.0)?,
            p1: number(at, "p1", 0.0)?,
            p2: number(at, "p2", 0.0)?,
        }
    } else if let Some(plugin) = super::values::ros_plugin(sensor) {
        let at = Some(plugin);
        LensDistortion {
            k1: number(at, "distortion_k1", 0.0)?,
            k2: number(at, "distortion_k2", 0.0)?,
            k3: number(at, "distortion_k3", 0.0)?,
            p1: number(at, "distortion_t1", 0.0)?,
            p2: number(at, "distortion_t2", 0.0)?,
        }
    } else {
        return Ok(None);
    };
    Ok((lens != LensDistortion::default()).then_some(lens))
}

/// The topics as its users read them. Classic: `{camera_name}/image_raw`, `/camera_info`,
/// `/depth/image_raw`, `/points`, each remapped and namespaced by the plugin. gz-sim: the image
/// (or a depth camera's depth) on `<topic>` with `camera_info` beside it, a point cloud on
/// `<topic>/points`; an RGBD camera's under `<topic>/`: `image`, `depth_image`, `camera_info`,
/// `points` (as ros_gz_bridge carries them under the same names); a segmentation camera's maps
/// and its `camera_info` under `<topic>/`, a bounding-box camera's boxes on `<topic>` and its
/// image on `<topic>_image`. `<camera_info_topic>` names the info's topic where given.
fn topics(
    sensor: &Element,
    name: &str,
    kind: &str,
    optics: &Element,
) -> Result<CameraTopics, String> {
    if let Some(classic) = ClassicTopics::of(sensor) {
        let stem = classic
            .param("camera_name")
            .unwrap_or_else(|| name.to_string());
        let at = |leaf: &str| Some(classic.resolve(&format!("{stem}/{leaf}")));
        return Ok(CameraTopics {
            image: at("image_raw"),
            depth: at("depth/image_raw"),
            camera_info: at("camera_info"),
            points: at("points"),
            ..CameraTopics::default()
        });
    }
    let topic = gz_topic(sensor).unwrap_or_else(|| name.to_string());
    let at = |leaf: &str| Some(format!("{topic}/{leaf}"));
    let beside = match topic.rsplit_once('/') {
        Some((folder, _)) => format!("{folder}/camera_info"),
        None => "camera_info".to_string(),
    };
    let given_info = text(Some(optics), "camera_info_topic");
    let mut topics = match kind {
        "rgbd_camera" => CameraTopics {
            image: at("image"),
            depth: at("depth_image"),
            camera_info: at("camera_info"),
            points: at("points"),
            ..CameraTopics::default()
        },
        // The maps of the other kind and the boxes, which Gazebo's camera does not make, go
        // under the topic too.
        "segmentation" => {
            let instance = instance_maps(optics)?;
            CameraTopics {
                camera_info: at("camera_info"),
                semantic: if instance {
                    at("semantic")
                } else {
                    Some(topic.clone())
                },
                instance: if instance {
                    Some(topic.clone())
                } else {
                    at("instance")
                },
                detections: at("detections"),
                ..CameraTopics::default()
            }
        }
        "boundingbox_camera" => CameraTopics {
            image: Some(format!("{topic}_image")),
            camera_info: Some(beside),
            semantic: at("semantic"),
            instance: at("instance"),
            detections: Some(topic),
            ..CameraTopics::default()
        },
        _ => {
            let depth_only = kind == "depth_camera";
            CameraTopics {
                image: (!depth_only).then(|| topic.clone()),
                depth: depth_only.then(|| topic.clone()),
                camera_info: Some(beside),
                points: Some(format!("{topic}/points")),
                ..CameraTopics::default()
            }
        }
    };
    // Newer SDF names the info topic itself.
    topics.camera_info = given_info.or(topics.camera_info);
    Ok(topics)
}

#[cfg(test)]
mod tests {
    use crate::model::xml;

    fn cameras(text: &str) -> Vec<super::GazeboCamera> {
        super::super::read(&xml::parse(text).unwrap()).cameras
    }

    #[test]
    fn a_gz_depth_camera_publishes_depth_on_its_topic_with_info_beside_it() {
        let found = cameras(
            "<robot name='r'><gazebo reference='cam'><sensor name='d' type='depth_camera'>\
             <update_rate>10</update_rate><topic>camera/depth/image_raw</topic>\
             <ignition_frame_id>camera_depth_optical_frame</ignition_frame_id><camera>\
             <horizontal_fov>1.0471975511965976</horizontal_fov><image><width>640</width>\
             <height>480</height></image><clip><near>0.6</near><far>8.0</far></clip>\
             <noise><type>gaussian</type><stddev>0.005</stddev></noise></camera></sensor>\
             </gazebo></robot>",
        );
        let camera = &found[0].camera;
        assert!(!camera.image && camera.depth && camera.points);
        assert_eq!(
            camera.topics.depth.as_deref(),
            Some("camera/depth/image_raw")
        );
        assert_eq!(
            camera.topics.camera_info.as_deref(),
            Some("camera/depth/camera_info")
        );
        assert_eq!(
            camera.topics.points.as_deref(),
            Some("camera/depth/image_raw/points")
        );
        assert_eq!(
            camera.frame_id.as_deref(),
            Some("camera_depth_optical_frame")
        );
        assert_eq!((camera.width, camera.height, camera.rate), (640, 480, 10.0));
        // 60 degrees across 640 pixels: 2 atan(tan(30 deg) 3/4) high.
        let fovy = camera.mount.as_ref().unwrap().fovy;
        assert!((fovy - 46.826_7).abs() < 1e-3, "{fovy}");
        assert_eq!(found[0].depth_noise.as_ref().unwrap().stddev, 0.005);
        assert_eq!(camera.problem(), None);
    }

    #[test]
    fn a_classic_depth_camera_takes_its_plugins_remappings() {
        let found = cameras(
            "<robot name='r'><gazebo reference='camera_link'><sensor name='camera' type='depth'>\
             <camera name='camera'><horizontal_fov>1.50098</horizontal_fov></camera>\
             <plugin filename='libgazebo_ros_camera.so' name='camera_controller'><ros>\
             <remapping>/camera/image_raw:=/camera/color/image_raw</remapping>\
             <remapping>/camera/depth/image_raw:=/camera/depth/image_rect_raw</remapping></ros>\
             <frame_name>camera_depth_link</frame_name></plugin></sensor></gazebo></robot>",
        );
        let camera = &found[0].camera;
        assert!(camera.image && camera.depth);
        assert_eq!(
            camera.topics.image.as_deref(),
            Some("/camera/color/image_raw")
        );
        assert_eq!(
            camera.topics.depth.as_deref(),
            Some("/camera/depth/image_rect_raw")
        );
        assert_eq!(
            camera.topics.camera_info.as_deref(),
            Some("camera/camera_info")
        );
        assert_eq!(camera.frame_id.as_deref(), Some("camera_depth_link"));
        assert_eq!(camera.distortion, None);
    }

    #[test]
    fn gz_segmentation_maps_go_under_the_topic_and_bounding_boxes_on_it() {
        let found = cameras(
            "<robot name='r'><gazebo reference='cam'><sensor name='seg' type='segmentation'>\
             <topic>panoptic</topic><camera><segmentation_type>instance</segmentation_type>\
             <image><width>64</width><height>48</height></image></camera></sensor>\
             <sensor name='bb' type='boundingbox_camera'><topic>boxes</topic><camera>\
             <box_type>3d</box_type><camera_info_topic>bb/info</camera_info_topic></camera>\
             </sensor></gazebo></robot>",
        );
        let (seg, boxes) = (&found[0].camera, &found[1].camera);
        assert!(seg.segmentation && !seg.image && !seg.depth);
        assert_eq!(seg.topics.instance.as_deref(), Some("panoptic"));
        assert_eq!(seg.topics.semantic.as_deref(), Some("panoptic/semantic"));
        assert_eq!(
            seg.topics.camera_info.as_deref(),
            Some("panoptic/camera_info")
        );
        assert!(boxes.segmentation && boxes.image);
        assert_eq!(boxes.topics.detections.as_deref(), Some("boxes"));
        assert_eq!(boxes.topics.image.as_deref(), Some("boxes_image"));
        assert_eq!(boxes.topics.camera_info.as_deref(), Some("bb/info"));
        let changed = found[1].changed.as_deref().unwrap();
        assert!(changed.contains("<box_type> 3d"), "{changed}");
        let broken = super::super::read(
            &xml::parse(
                "<robot name='r'><gazebo reference='cam'><sensor name='s' type='segmentation'>\
                 <camera><segmentation_type>depth</segmentation_type></camera></sensor>\
                 </gazebo></robot>",
            )
            .unwrap(),
        );
        assert!(broken.cameras.is_empty());
        assert!(
            broken.left_out[0].contains("<segmentation_type> 'depth'"),
            "{:?}",
            broken.left_out
        );
    }
}
