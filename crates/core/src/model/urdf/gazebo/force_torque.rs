//! A `<gazebo reference="JOINT">` force-torque sensor (`type="force_torque"`, both syntaxes):
//! a site on the joint's child link with a MuJoCo force and torque sensor, listed as the
//! robot's wrench topic on the sensor's topic and frame. MuJoCo measures the parent's wrench
//! on the child; Gazebo's default `child_to_parent` is that wrench negated.
use super::imu::axis_noise;
use super::values::{ClassicTopics, frame, gz_topic, pose, rate, text};
use crate::config::{MeasureDirection, NoiseConfig};
use crate::model::xml::Element;

/// The bridge's force-torque rate (`ros.rates.force_torque`), for a sensor without one:
/// Gazebo's would publish every step.
const DEFAULT_RATE: f64 = 200.0;

#[derive(Debug, Clone, PartialEq)]
pub struct GazeboForceTorque {
    /// The sensor's name: its site's, and the stem of its MuJoCo sensors' names.
    pub name: String,
    /// The joint it measures across, and that joint's child link, which carries its site.
    pub joint: String,
    pub link: String,
    /// The site's pose on the child link: its origin (the URDF joint's frame) unless the
    /// wrench is given in the sensor's own frame.
    pub xyz: [f64; 3],
    pub rpy: [f64; 3],
    pub rate: f64,
    pub topic: String,
    /// None: the site's own frame.
    pub frame_id: Option<String>,
    pub measure_direction: MeasureDirection,
    pub force_noise: Option<NoiseConfig>,
    pub torque_noise: Option<NoiseConfig>,
    /// What could not be kept as written, in words.
    pub changed: Option<String>,
}

impl GazeboForceTorque {
    pub fn force_sensor(&self) -> String {
        format!("{}_force", self.name)
    }

    pub fn torque_sensor(&self) -> String {
        format!("{}_torque", self.name)
    }
}

/// Reads the sensor of the block on `joint`, whose child link is `child` (none: `joint` is
/// not a joint of the robot).
pub fn read(
    sensor: &Element,
    name: &str,
    joint: &str,
    child: Option<&str>,
) -> Result<GazeboForceTorque, String> {
    let link = child.ok_or_else(|| format!("'{joint}' is not a joint of the robot"))?;
    let ft = sensor.child("force_torque");
    let mut changed = Vec::new();
    let given_frame = Some(frame(sensor, "", None)).filter(|f| !f.is_empty());
    let ((xyz, rpy), frame_id) = match text(ft, "frame").as_deref() {
        None | Some("child") => (
            ([0.0; 3], [0.0; 3]),
            Some(given_frame.unwrap_or(link.into())),
        ),
        Some("sensor") => (pose(sensor)?, given_frame),
        Some("parent") => {
            changed.push("it is given in the child link's frame, not the parent's");
            (
                ([0.0; 3], [0.0; 3]),
                Some(given_frame.unwrap_or(link.into())),
            )
        }
        Some(other) => return Err(format!("<frame> '{other}' is not child, parent or sensor")),
    };
    let measure_direction = match text(ft, "measure_direction").as_deref() {
        None | Some("child_to_parent") => MeasureDirection::ChildToParent,
        Some("parent_to_child") => MeasureDirection::ParentToChild,
        Some(other) => {
            return Err(format!(
                "<measure_direction> '{other}' is not child_to_parent or parent_to_child"
            ));
        }
    };
    let (force_noise, force_differs) = axis_noise(ft, "force")?;
    let (torque_noise, torque_differs) = axis_noise(ft, "torque")?;
    if force_differs || torque_differs {
        changed.push("its axes' noise differ: each axis gets the x axis's");
    }
    let topic = match ClassicTopics::of(sensor) {
        Some(classic) => classic.resolve("wrench"),
        None => gz_topic(sensor).unwrap_or_else(|| name.to_string()),
    };
    Ok(GazeboForceTorque {
        name: name.to_string(),
        joint: joint.to_string(),
        link: link.to_string(),
        xyz,
        rpy,
        rate: rate(sensor, DEFAULT_RATE)?,
        topic,
        frame_id,
        measure_direction,
        force_noise,
        torque_noise,
        changed: (!changed.is_empty()).then(|| changed.join("; ")),
    })
}

#[cfg(test)]
mod tests {
    use crate::config::MeasureDirection;
    use crate::model::xml;

    #[test]
    fn a_force_torque_sensor_sits_on_its_joints_child_with_gazebos_direction() {
        let found = super::super::read(
            &xml::parse(
                "<robot name='r'><link name='arm'/><link name='hand'/><joint name='wrist' \
                 type='fixed'><parent link='arm'/><child link='hand'/></joint>\
                 <gazebo reference='wrist'><sensor name='wrist_ft' type='force_torque'>\
                 <update_rate>500</update_rate><topic>wrist/wrench</topic><force_torque>\
                 <force><x><noise type='gaussian'><stddev>0.5</stddev></noise></x></force>\
                 </force_torque></sensor><sensor name='tool_ft' type='force_torque'>\
                 <pose>0 0 0.1 0 0 0</pose><force_torque><frame>sensor</frame>\
                 <measure_direction>parent_to_child</measure_direction></force_torque>\
                 </sensor></gazebo><gazebo reference='nowhere'><sensor name='lost' \
                 type='force_torque'/></gazebo></robot>",
            )
            .unwrap(),
        );
        let [wrist, tool] = &found.force_torques[..] else {
            panic!("{found:?}")
        };
        assert_eq!(
            (wrist.link.as_str(), wrist.topic.as_str()),
            ("hand", "wrist/wrench")
        );
        assert_eq!(
            (wrist.rate, wrist.frame_id.as_deref()),
            (500.0, Some("hand"))
        );
        assert_eq!(wrist.measure_direction, MeasureDirection::ChildToParent);
        assert_eq!(wrist.force_noise.as_ref().unwrap().stddev, 0.5);
        assert_eq!(wrist.torque_noise, None);
        assert_eq!(
            (tool.xyz, tool.frame_id.as_deref()),
            ([0.0, 0.0, 0.1], None)
        );
        assert_eq!(tool.measure_direction, MeasureDirection::ParentToChild);
        assert_eq!((tool.rate, tool.topic.as_str()), (200.0, "tool_ft"));
        assert!(
            found.left_out[0].contains("'nowhere' is not a joint"),
            "{found:?}"
        );
    }
}
