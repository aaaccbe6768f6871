//! The sensors a URDF's `<gazebo reference="LINK">` blocks declare, in gz-sim's syntax
//! (`<topic>`, `<gz_frame_id>`) and Gazebo Classic's (a `libgazebo_ros_*` plugin's
//! `<ros><namespace>`, `<remapping>` and `<frame_name>`), one file per kind of sensor. Each
//! becomes the bridge's sensor of that kind, on the topic and frame its users already read;
//! every other one is named as left out.
mod bridge;
mod camera;
mod contact;
mod force_torque;
mod imu;
mod labels;
mod lidar;
mod magnetometer;
mod material;
mod plugins;
mod point;
mod surfaces;
mod values;

pub use camera::GazeboCamera;
pub use contact::GazeboContact;
pub use force_torque::GazeboForceTorque;
pub use imu::GazeboImu;
pub use labels::Label;
pub use lidar::GazeboLidar;
pub use magnetometer::GazeboMagnetometer;
pub use material::Colour;
pub use plugins::{GazeboDrive, GazeboPlugins};
pub use point::{GazeboPoint, PointKind};
pub use surfaces::Surface;

use crate::config::MeasureDirection;
use crate::model::xml::Element;

/// What the `<gazebo>` sensors give a robot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GazeboSensors {
    pub lidars: Vec<GazeboLidar>,
    pub imus: Vec<GazeboImu>,
    pub cameras: Vec<GazeboCamera>,
    /// GPS receivers, barometers and altimeters.
    pub points: Vec<GazeboPoint>,
    pub magnetometers: Vec<GazeboMagnetometer>,
    pub contacts: Vec<GazeboContact>,
    /// Force-torque sensors, each across a joint.
    pub force_torques: Vec<GazeboForceTorque>,
    /// What its `<gazebo><plugin>` blocks give.
    pub plugins: GazeboPlugins,
    /// Its links' contact friction.
    pub surfaces: Vec<Surface>,
    /// Links that gravity does not pull (`<turnGravityOff>`).
    pub weightless: Vec<String>,
    /// Links' segmentation classes (gz-sim's Label system).
    pub labels: Vec<Label>,
    /// Links' visual colours.
    pub colours: Vec<Colour>,
    /// Each sensor taken, in words, for `--summary`.
    pub taken: Vec<String>,
    /// Each sensor not taken, with why.
    pub left_out: Vec<String>,
}

/// Reads every `<gazebo reference><sensor>` and `<gazebo><plugin>` of the URDF's `<robot>`.
pub fn read(robot: &Element) -> GazeboSensors {
    let mut found = GazeboSensors {
        plugins: plugins::read(robot),
        ..GazeboSensors::default()
    };
    match surfaces::read(robot) {
        Ok(surfaces) => {
            for surface in &surfaces {
                found.left_out.extend(surface.left_out.iter().cloned());
                let shaped = surface.friction.is_some()
                    || surface.softness.is_some()
                    || surface.min_depth.is_some();
                if shaped {
                    found.taken.push(surface.describe());
                }
            }
            found.surfaces = surfaces;
        }
        Err(why) => found.left_out.push(format!("surfaces: {why}")),
    }
    match surfaces::weightless(robot) {
        Ok(links) => {
            for link in &links {
                found
                    .taken
                    .push(format!("link '{link}': gravity off (gravcomp 1)"));
            }
            found.weightless = links;
        }
        Err(why) => found.left_out.push(format!("gravity: {why}")),
    }
    let (colours, colours_left_out) = material::read(robot);
    for colour in &colours {
        let [r, g, b, a] = colour.rgba.map(|v| (v * 1e4).round() / 1e4);
        found.taken.push(format!(
            "link '{}': colour {r} {g} {b} {a} ({})",
            colour.link, colour.from
        ));
    }
    found.colours = colours;
    found.left_out.extend(colours_left_out);
    let (labels, plugins_left_out) = labels::read(robot);
    for label in &labels {
        found.taken.push(format!(
            "link '{}': segmentation class {} (Label plugin)",
            label.link, label.class
        ));
    }
    found.labels = labels;
    found.left_out.extend(plugins_left_out);
    for block in robot.children_named("gazebo") {
        let Some(link) = block.attr("reference") else {
            continue;
        };
        for sensor in block.children_named("sensor") {
            let name = sensor.attr("name").unwrap_or("");
            let kind = sensor.attr("type").unwrap_or("");
            let at = format!(
                "sensor '{name}' ({kind}) on '{link}' (line {})",
                sensor.line
            );
            let at_joint = Reference {
                name: link,
                joint_child: joint_child(robot, link),
            };
            match found.add(sensor, name, kind, &at_joint) {
                Ok(what) => found.taken.push(format!("{at}: {what}")),
                Err(why) => found.left_out.push(format!("{at}: {why}")),
            }
        }
    }
    found
}

impl GazeboSensors {
    /// Each sensor, plugin and surface, taken or left out, in words.
    pub fn lines(&self) -> Vec<String> {
        let taken = self.taken.iter().chain(&self.plugins.taken);
        let left_out = self.left_out.iter().chain(&self.plugins.left_out);
        taken
            .map(|line| format!("taken: {line}"))
            .chain(left_out.map(|line| format!("left out: {line}")))
            .collect()
    }

    /// Adds the sensor; what it became, in words.
    fn add(
        &mut self,
        sensor: &Element,
        name: &str,
        kind: &str,
        reference: &Reference,
    ) -> Result<String, String> {
        let link = reference.name;
        if kind == "force_torque" {
            let read = force_torque::read(sensor, name, link, reference.joint_child)?;
            let what = format!(
                "force-torque sensor on '{}' across joint '{link}' (site on '{}'), frame '{}', \
                 {} Hz, {}",
                read.topic,
                read.link,
                read.frame_id.as_deref().unwrap_or(&read.name),
                read.rate,
                match read.measure_direction {
                    MeasureDirection::ChildToParent => "child_to_parent",
                    MeasureDirection::ParentToChild => "parent_to_child",
                }
            );
            let what = with_changed(what, &read.changed);
            self.force_torques.push(read);
            return Ok(what);
        }
        if lidar::TYPES.contains(&kind) {
            let read = lidar::read(sensor, name, link)?;
            let lidar = &read.lidar;
            let what = format!(
                "lidar on '{}', frame '{}'",
                lidar.topic.as_deref().unwrap_or_default(),
                lidar.frame_id.as_deref().unwrap_or_default()
            );
            self.lidars.push(read);
            return Ok(what);
        }
        if point::TYPES.contains(&kind) {
            let read = point::read(sensor, name, link, kind)?;
            let what = match read.kind {
                PointKind::Gps => "GPS",
                PointKind::Barometer => "barometer",
                PointKind::Altimeter => "altimeter",
            };
            let s = &read.sensor;
            let mut what = format!(
                "{what} on '{}', frame '{}', {} Hz",
                s.topic.as_deref().unwrap_or_default(),
                s.frame_id.as_deref().unwrap_or_default(),
                s.rate
            );
            if let Some(changed) = &read.changed {
                what.push_str(&format!(" ({changed})"));
            }
            self.points.push(read);
            return Ok(what);
        }
        if kind == "imu" {
            let imu = imu::read(sensor, name, link)?;
            let mut what = format!(
                "imu on '{}', frame '{}', {} Hz",
                imu.topic, imu.frame_id, imu.rate
            );
            if let Some(changed) = &imu.changed {
                what.push_str(&format!(" ({changed})"));
            }
            self.imus.push(imu);
            return Ok(what);
        }
        if kind == "magnetometer" {
            let read = magnetometer::read(sensor, name, link)?;
            let what = format!(
                "magnetometer on '{}', frame '{}', {} Hz",
                read.topic, read.frame_id, read.rate
            );
            let what = with_changed(what, &read.changed);
            self.magnetometers.push(read);
            return Ok(what);
        }
        if kind == "contact" {
            let read = contact::read(sensor, name, link)?;
            let s = &read.sensor;
            let what = format!(
                "contact sensor on '{}' watching link '{link}', {} Hz",
                s.contacts_topic(),
                s.rate
            );
            let what = with_changed(what, &read.changed);
            self.contacts.push(read);
            return Ok(what);
        }
        if camera::TYPES.contains(&kind) {
            let read = camera::read(sensor, name, link, kind)?;
            let camera = &read.camera;
            let topics = &camera.topics;
            let shown = [
                (camera.image, &topics.image),
                (camera.depth, &topics.depth),
                (true, &topics.camera_info),
                (camera.segmentation, &topics.semantic),
                (camera.segmentation, &topics.instance),
                (camera.segmentation, &topics.detections),
            ]
            .into_iter()
            .filter_map(|(published, topic)| topic.as_ref().filter(|_| published))
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
            let mut what = format!(
                "camera {}x{} on {shown}, frame '{}', {} Hz",
                camera.width,
                camera.height,
                camera.frame_id.as_deref().unwrap_or_default(),
                camera.rate
            );
            if let Some(changed) = &read.changed {
                what.push_str(&format!(" ({changed})"));
            }
            self.cameras.push(read);
            return Ok(what);
        }
        Err("not read yet".into())
    }
}

/// What a `<gazebo reference>` names: a link, or a joint (with its child link).
struct Reference<'a> {
    name: &'a str,
    joint_child: Option<&'a str>,
}

/// The child link of the robot's joint `name`, if it has one of that name.
fn joint_child<'a>(robot: &'a Element, name: &str) -> Option<&'a str> {
    let joint = robot
        .children_named("joint")
        .find(|joint| joint.attr("name") == Some(name))?;
    joint.child("child")?.attr("link")
}

/// `what` a sensor became, with what could not be kept as written.
fn with_changed(what: String, changed: &Option<String>) -> String {
    match changed {
        Some(changed) => format!("{what} ({changed})"),
        None => what,
    }
}
