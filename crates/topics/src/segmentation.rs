//! A segmentation camera's messages, from the frame's geom per pixel: Gazebo's segmentation
//! maps as ros_gz_bridge carries them (sensor_msgs/Image rgb8), semantic and instance, with
//! the label map that names each value (vision_msgs/LabelInfo), and the visible box of each
//! labelled instance (vision_msgs/Detection2DArray, Gazebo's bounding-box camera in its
//! visible mode).
//!
//! - `semantic/labels_map`: each pixel's class in all three channels (0: background or
//!   unlabelled); `semantic/colored_map`: one colour per class.
//! - `instance/labels_map`: Gazebo's panoptic layout, per pixel the instance's id low byte,
//!   high byte, then its class; every body (or geom) is an instance, labelled or not, and the
//!   world body's geoms are one each. `instance/colored_map`: one colour per instance.
//! - `semantic/label_info` maps each class id to its name (`background` for 0),
//!   `instance/label_info` each instance id to its scoped name (`robot::body`).
//! - `detections`: per labelled instance in view, the box around its visible pixels (centre
//!   and size in the image's pixel coordinates, pixel centres at whole numbers as in K), its
//!   class id as the hypothesis (a number, as Gazebo's; score 1) and its scoped name as the
//!   id.
use super::{Plan, PlanError, Schedule, Topic, scoped};
use crate::Qos;
use crate::config::{CameraTopics, InstanceUnit, SemanticClass, class_labels};
use crate::messages::sensor_msgs::msg::Image;
use crate::messages::vision_msgs::msg::{
    Detection2D, Detection2DArray, LabelInfo, ObjectHypothesisWithPose, VisionClass,
};
use crate::model::RobotMap;
use crate::render::Frame;
use mujoco_rs::prelude::{MjModel, MjtObjBase};
use std::sync::Arc;

/// A segmentation camera's topics and what its values stand for.
pub struct Segmentation {
    pub semantic_labels: Topic,
    pub semantic_colored: Topic,
    pub semantic_info: Topic,
    pub instance_labels: Topic,
    pub instance_colored: Topic,
    pub instance_info: Topic,
    pub detections: Topic,
    pub labels: Arc<Labels>,
}

/// What each geom is in a segmentation, and the names of the values.
pub struct Labels {
    /// Per model geom: its instance id and its class.
    instance_of_geom: Vec<u16>,
    class_of_geom: Vec<u8>,
    /// Per instance id, its class (its first labelled geom's, should the config split a
    /// body between classes).
    class_of_instance: Vec<u8>,
    /// Per instance id, its scoped name.
    instance_names: Vec<String>,
    semantic_info: LabelInfo,
    instance_info: LabelInfo,
}

/// Where a segmentation camera's topics go: the folders of the semantic and the instance
/// maps, and the boxes.
pub struct Names {
    pub semantic: String,
    pub instance: String,
    pub detections: String,
}

impl Names {
    /// The topics `given` names, else `{stem}/semantic`, `{stem}/instance`, `{stem}/detections`.
    pub fn of(stem: &str, given: &CameraTopics) -> Self {
        let or = |given: &Option<String>, leaf: &str| {
            given.clone().unwrap_or_else(|| format!("{stem}/{leaf}"))
        };
        Self {
            semantic: or(&given.semantic, "semantic"),
            instance: or(&given.instance, "instance"),
            detections: or(&given.detections, "detections"),
        }
    }
}

/// Plans the segmentation topics of `robot`'s camera, on `names`.
pub fn plan(
    plan: &Plan,
    robot: usize,
    names: &Names,
    rate: f64,
    unit: InstanceUnit,
) -> Result<Segmentation, PlanError> {
    let topic = |name: String| Topic {
        name: plan.robot_topic(robot, &name),
        schedule: Schedule::Rate {
            hz: rate,
            follows: None,
        },
        qos: Qos::IMAGES,
    };
    let (semantic, instance) = (&names.semantic, &names.instance);
    let classes = &plan.config.world.classes;
    let labels = Labels::of_world(plan.model, plan.robots, classes, unit)?;
    Ok(Segmentation {
        semantic_labels: topic(format!("{semantic}/labels_map")),
        semantic_colored: topic(format!("{semantic}/colored_map")),
        semantic_info: topic(format!("{semantic}/label_info")),
        instance_labels: topic(format!("{instance}/labels_map")),
        instance_colored: topic(format!("{instance}/colored_map")),
        instance_info: topic(format!("{instance}/label_info")),
        detections: topic(names.detections.clone()),
        labels: Arc::new(labels),
    })
}

/// Each geom's class: the config's classes (a geom named beats its body, a body its robot),
/// else its MJCF `user` data's first value when that is a label, else 0; and each config
/// class's label.
fn geom_classes(
    model: &MjModel,
    robots: &[RobotMap],
    classes: &[SemanticClass],
) -> Result<(Vec<u8>, Vec<u8>), PlanError> {
    let ngeom = model.ffi().ngeom.max(0) as usize;
    let nuser = model.ffi().nuser_geom.max(0) as usize;
    let user = model.geom_user();
    let mut class_of: Vec<u8> = (0..ngeom)
        .map(|g| match user.get(g * nuser) {
            Some(&v) if nuser > 0 && v.fract() == 0.0 && (1.0..=255.0).contains(&v) => v as u8,
            _ => 0,
        })
        .collect();
    let mut reserved: Vec<u8> = class_of.iter().copied().filter(|&c| c != 0).collect();
    reserved.dedup();
    let labels = class_labels(classes, &reserved);
    let body_of = model.geom_bodyid();
    let mut set = |geoms: &mut dyn Iterator<Item = usize>, label: u8| {
        for g in geoms {
            class_of[g] = label;
        }
    };
    for (k, class) in classes.iter().enumerate() {
        for name in &class.robots {
            let robot = robots.iter().find(|r| &r.name == name);
            let robot = robot.ok_or_else(|| missing(k, "robots", name))?;
            let bodies: Vec<usize> = robot.bodies.iter().map(|b| b.id).collect();
            set(
                &mut (0..ngeom).filter(|g| bodies.contains(&(body_of[*g] as usize))),
                labels[k],
            );
        }
    }
    for (k, class) in classes.iter().enumerate() {
        for name in &class.bodies {
            let body = find(model, robots, MjtObjBase::mjOBJ_BODY, name);
            let body = body.ok_or_else(|| missing(k, "bodies", name))?;
            set(
                &mut (0..ngeom).filter(|g| body_of[*g] as usize == body),
                labels[k],
            );
        }
    }
    for (k, class) in classes.iter().enumerate() {
        for name in &class.geoms {
            let geom = find(model, robots, MjtObjBase::mjOBJ_GEOM, name);
            set(
                &mut std::iter::once(geom.ok_or_else(|| missing(k, "geoms", name))?),
                labels[k],
            );
        }
    }
    Ok((class_of, labels))
}

/// The element named `name` in the world's model, or by a robot's own name for it (the
/// first robot that has one).
fn find(model: &MjModel, robots: &[RobotMap], kind: MjtObjBase, name: &str) -> Option<usize> {
    model.name_to_id(kind, name).or_else(|| {
        let prefixed = robots.iter().map(|r| format!("{}{name}", r.prefix));
        prefixed
            .filter_map(|full| model.name_to_id(kind, &full))
            .next()
    })
}

fn missing(class: usize, kind: &'static str, name: &str) -> PlanError {
    PlanError::NoClassMember {
        field: format!("world.classes[{class}].{kind}"),
        name: name.to_string(),
    }
}

impl Labels {
    /// The instances by `unit` and the classes of `classes` of the world's model.
    pub fn of_world(
        model: &MjModel,
        robots: &[RobotMap],
        classes: &[SemanticClass],
        unit: InstanceUnit,
    ) -> Result<Self, PlanError> {
        let (class_of_geom, labels) = geom_classes(model, robots, classes)?;
        let ngeom = class_of_geom.len();
        let nbody = model.ffi().nbody.max(0) as usize;
        let most = match unit {
            InstanceUnit::Geom => ngeom,
            InstanceUnit::Body => nbody + ngeom,
        };
        if most > u16::MAX as usize {
            return Err(PlanError::TooManyInstances { most });
        }
        let classes = classes
            .iter()
            .zip(labels)
            .map(|(c, l)| (c.name.as_str(), l));
        Ok(Self::new(model, robots, class_of_geom, unit, classes))
    }

    fn new<'c>(
        model: &MjModel,
        robots: &[RobotMap],
        class_of_geom: Vec<u8>,
        unit: InstanceUnit,
        classes: impl Iterator<Item = (&'c str, u8)>,
    ) -> Self {
        let ngeom = class_of_geom.len();
        let nbody = model.ffi().nbody.max(0) as usize;
        let body_of = model.geom_bodyid();
        // A body's id is its instance's; the world body's geoms follow the bodies, one each.
        let instance = |g: usize| match unit {
            InstanceUnit::Geom => g + 1,
            InstanceUnit::Body if body_of[g] == 0 => nbody + g,
            InstanceUnit::Body => body_of[g] as usize,
        };
        // At most u16::MAX (`of_world` checked).
        let instance_of_geom: Vec<u16> = (0..ngeom).map(|g| instance(g) as u16).collect();
        let mut instance_names =
            vec![String::new(); instance_of_geom.iter().max().map_or(1, |m| *m as usize + 1)];
        for g in 0..ngeom {
            let name = &mut instance_names[instance_of_geom[g] as usize];
            if name.is_empty() {
                *name = match unit {
                    InstanceUnit::Body if body_of[g] != 0 => {
                        scoped::body_name(model, robots, body_of[g] as usize)
                    }
                    _ => scoped::geom_name(model, robots, g),
                };
            }
        }
        let mut class_of_instance = vec![0; instance_names.len()];
        for (instance, class) in instance_of_geom.iter().zip(&class_of_geom) {
            let slot = &mut class_of_instance[*instance as usize];
            if *slot == 0 {
                *slot = *class;
            }
        }
        let mut class_names = vec![String::new(); 256];
        class_names[0] = "background".into();
        for &c in &class_of_geom {
            if c != 0 {
                class_names[c as usize] = format!("class_{c}");
            }
        }
        for (name, label) in classes {
            class_names[label as usize] = name.to_string();
        }
        let info = |names: &[String]| LabelInfo {
            class_map: names
                .iter()
                .enumerate()
                .filter(|(_, n)| !n.is_empty())
                .map(|(id, n)| VisionClass {
                    class_id: id as u16,
                    class_name: n.clone(),
                })
                .collect(),
            ..Default::default()
        };
        Self {
            semantic_info: info(&class_names),
            instance_info: info(&instance_names),
            instance_of_geom,
            class_of_geom,
            class_of_instance,
            instance_names,
        }
    }

    /// (instance, class) of what a pixel sees (its geom, or -1 for nothing).
    fn of(&self, geom: i32) -> (u16, u8) {
        let at = usize::try_from(geom).ok();
        let instance = at
            .and_then(|g| self.instance_of_geom.get(g))
            .copied()
            .unwrap_or(0);
        let class = at
            .and_then(|g| self.class_of_geom.get(g))
            .copied()
            .unwrap_or(0);
        (instance, class)
    }
}

/// An rgb8 image of the frame's size with each pixel `pixel(geom)`.
fn fill_map(image: &mut Image, frame: &Frame, frame_id: &str, pixel: impl Fn(i32) -> [u8; 3]) {
    crate::convert::image_header(image, frame, frame_id, "rgb8", frame.width * 3);
    image.data.clear();
    image.data.reserve(frame.segments.len() * 3);
    for &geom in &frame.segments {
        image.data.extend_from_slice(&pixel(geom));
    }
}

pub fn fill_semantic_labels(image: &mut Image, frame: &Frame, frame_id: &str, labels: &Labels) {
    fill_map(image, frame, frame_id, |g| [labels.of(g).1; 3]);
}

pub fn fill_semantic_colored(image: &mut Image, frame: &Frame, frame_id: &str, labels: &Labels) {
    fill_map(image, frame, frame_id, |g| colour(labels.of(g).1 as u32));
}

pub fn fill_instance_labels(image: &mut Image, frame: &Frame, frame_id: &str, labels: &Labels) {
    fill_map(image, frame, frame_id, |g| {
        let (instance, class) = labels.of(g);
        let [low, high] = instance.to_le_bytes();
        [low, high, class]
    });
}

pub fn fill_instance_colored(image: &mut Image, frame: &Frame, frame_id: &str, labels: &Labels) {
    fill_map(image, frame, frame_id, |g| colour(labels.of(g).0 as u32));
}

/// The label map of `semantic` (else instance) values, stamped with the frame.
pub fn fill_label_info(
    info: &mut LabelInfo,
    frame: &Frame,
    frame_id: &str,
    labels: &Labels,
    semantic: bool,
) {
    if info.class_map.is_empty() {
        let names = if semantic {
            &labels.semantic_info
        } else {
            &labels.instance_info
        };
        info.class_map = names.class_map.clone();
    }
    info.header.stamp = crate::convert::time(frame.time);
    if info.header.frame_id != frame_id {
        info.header.frame_id = frame_id.to_string();
    }
}

/// One box per labelled instance in view, around its pixels; `bounds` is scratch space.
pub fn fill_detections(
    detections: &mut Detection2DArray,
    frame: &Frame,
    frame_id: &str,
    labels: &Labels,
    bounds: &mut Vec<[usize; 4]>,
) {
    detections.header.stamp = crate::convert::time(frame.time);
    if detections.header.frame_id != frame_id {
        detections.header.frame_id = frame_id.to_string();
    }
    // Per instance: the least and most column and row, [u_min, v_min, u_max, v_max].
    bounds.clear();
    bounds.resize(labels.instance_names.len(), [usize::MAX, usize::MAX, 0, 0]);
    for (pixel, &geom) in frame.segments.iter().enumerate() {
        let instance = labels.of(geom).0 as usize;
        if labels.class_of_instance[instance] == 0 {
            continue;
        }
        let (u, v) = (pixel % frame.width.max(1), pixel / frame.width.max(1));
        let b = &mut bounds[instance];
        *b = [b[0].min(u), b[1].min(v), b[2].max(u), b[3].max(v)];
    }
    detections.detections.clear();
    for (instance, b) in bounds
        .iter()
        .enumerate()
        .filter(|(_, b)| b[0] != usize::MAX)
    {
        let class = labels.class_of_instance[instance];
        let mut detection = Detection2D {
            header: detections.header.clone(),
            id: labels.instance_names[instance].clone(),
            ..Default::default()
        };
        let (u0, v0, u1, v1) = (b[0] as f64, b[1] as f64, b[2] as f64, b[3] as f64);
        detection.bbox.center.position.x = 0.5 * (u0 + u1);
        detection.bbox.center.position.y = 0.5 * (v0 + v1);
        detection.bbox.size_x = u1 - u0 + 1.0;
        detection.bbox.size_y = v1 - v0 + 1.0;
        let mut result = ObjectHypothesisWithPose::default();
        // Gazebo's bounding-box camera names the label by its number; LabelInfo names it.
        result.hypothesis.class_id = class.to_string();
        result.hypothesis.score = 1.0;
        detection.results.push(result);
        detections.detections.push(detection);
    }
}

/// A colour for value `id` that differs from its neighbours' (hues a golden angle apart);
/// black for 0.
fn colour(id: u32) -> [u8; 3] {
    if id == 0 {
        return [0, 0, 0];
    }
    let hue = (id as f64 * 0.618_033_988_75).fract() * 6.0;
    let (value, saturation) = (0.95, if id.is_multiple_of(2) { 0.6 } else { 0.9 });
    let chroma = value * saturation;
    let x = chroma * (1.0 - (hue % 2.0 - 1.0).abs());
    let (r, g, b) = match hue as u32 {
        0 => (chroma, x, 0.0),
        1 => (x, chroma, 0.0),
        2 => (0.0, chroma, x),
        3 => (0.0, x, chroma),
        4 => (x, 0.0, chroma),
        _ => (chroma, 0.0, x),
    };
    let m = value - chroma;
    [r, g, b].map(|c| ((c + m) * 255.0).round() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_black_only_for_the_background() {
        assert_eq!(colour(0), [0, 0, 0]);
        let colours: Vec<[u8; 3]> = (1..50).map(colour).collect();
        assert!(colours.iter().all(|c| *c != [0, 0, 0]));
        let distinct: std::collections::HashSet<_> = colours.iter().collect();
        assert_eq!(distinct.len(), colours.len());
    }
}
