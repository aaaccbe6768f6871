//! What a URDF says about actuation: `<ros2_control>` command interfaces and `<transmission>`
//! elements, read into one list of actuator requests; and what else its `<ros2_control>`
//! and simulator plugin give (`Ros2Control`).
use crate::config::broadcasters::HardwareSensor;
use crate::model::xml::Element;

/// What a URDF gives the controller manager besides actuators.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ros2Control {
    /// The controllers file its simulator's ros2_control plugin is given, as written.
    pub controllers_file: Option<String>,
    /// `<ros2_control>` joints' initial positions (`initial_value`), by joint name.
    pub initial_positions: Vec<(String, f64)>,
    /// `<ros2_control>` sensors, with the MuJoCo sensors they name.
    pub sensors: Vec<HardwareSensor>,
    /// Its simulator plugin's `<ros><remapping>from:=to</remapping>`s.
    pub remappings: Vec<(String, String)>,
}

impl Ros2Control {
    /// Reads all of it from the URDF's `<robot>`; what is wrong is a warning.
    pub fn of(robot: &Element, warnings: &mut Vec<String>) -> Self {
        Self {
            controllers_file: plugin_controllers_file(robot),
            remappings: plugin_remappings(robot),
            initial_positions: initial_positions(robot, warnings),
            sensors: hardware_sensors(robot),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    Position,
    Velocity,
    Effort,
}

impl CommandKind {
    fn from_interface(name: &str) -> Option<Self> {
        let lower = name.to_ascii_lowercase();
        if lower.contains("position") {
            Some(Self::Position)
        } else if lower.contains("velocity") {
            Some(Self::Velocity)
        } else if lower.contains("effort") {
            Some(Self::Effort)
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ActuatorRequest {
    /// Actuator name: the joint name for ros2_control, the `<actuator name>` for transmissions.
    pub name: String,
    pub joint: String,
    pub kind: CommandKind,
    pub gear: f64,
    /// `min` / `max` params of a ros2_control command interface.
    pub ctrlrange: Option<[f64; 2]>,
    /// Where it came from, for messages.
    pub source: String,
}

fn param(interface: &Element, name: &str) -> Option<f64> {
    interface
        .children_named("param")
        .find(|p| p.attr("name") == Some(name))
        .and_then(|p| p.text.trim().parse().ok())
}

/// Actuator requests from every `<ros2_control>` block: the first position, velocity or
/// effort command interface of each joint.
pub fn from_ros2_control(robot: &Element, warnings: &mut Vec<String>) -> Vec<ActuatorRequest> {
    let mut requests = Vec::new();
    for block in robot.children_named("ros2_control") {
        for joint in block.children_named("joint") {
            let Some(joint_name) = joint.attr("name") else {
                warnings.push(format!(
                    "line {}: <ros2_control><joint> without a name is ignored",
                    joint.line
                ));
                continue;
            };
            let chosen = joint.children_named("command_interface").find_map(|ci| {
                let kind = CommandKind::from_interface(ci.attr("name").unwrap_or_default())?;
                let range = match (param(ci, "min"), param(ci, "max")) {
                    (Some(lo), Some(hi)) if lo < hi => Some([lo, hi]),
                    _ => None,
                };
                Some((kind, range))
            });
            if let Some((kind, ctrlrange)) = chosen {
                requests.push(ActuatorRequest {
                    name: joint_name.to_string(),
                    joint: joint_name.to_string(),
                    kind,
                    gear: 1.0,
                    ctrlrange,
                    source: format!("<ros2_control> line {}", joint.line),
                });
            }
        }
    }
    requests
}

/// The URDF's simulator plugins of ros2_control (gz_ros2_control, gazebo_ros2_control).
fn ros2_control_plugins(robot: &Element) -> impl Iterator<Item = &Element> {
    robot
        .children_named("gazebo")
        .flat_map(|gazebo| gazebo.children_named("plugin"))
        .filter(|plugin| {
            let named = |key| {
                plugin
                    .attr(key)
                    .unwrap_or_default()
                    .contains("ros2_control")
            };
            named("filename") || named("name")
        })
}

/// The remappings its ros2_control plugin gives the controller manager's node.
fn plugin_remappings(robot: &Element) -> Vec<(String, String)> {
    ros2_control_plugins(robot)
        .flat_map(|plugin| plugin.children_named("ros"))
        .flat_map(|ros| ros.children_named("remapping"))
        .filter_map(|r| {
            let (from, to) = r.text.trim().split_once(":=")?;
            Some((from.trim().to_string(), to.trim().to_string()))
        })
        .collect()
}

/// The controllers file a simulator plugin of ros2_control is given in the URDF
/// (`<gazebo><plugin filename="gz_ros2_control-system"><parameters>FILE</parameters>`, as
/// gz_ros2_control and gazebo_ros2_control read it), with a `file://` scheme taken off.
fn plugin_controllers_file(robot: &Element) -> Option<String> {
    ros2_control_plugins(robot)
        .flat_map(|plugin| plugin.children_named("parameters"))
        .map(|parameters| parameters.text.trim())
        .find(|path| !path.is_empty())
        .map(|path| path.strip_prefix("file://").unwrap_or(path).to_string())
}

/// The `<ros2_control>` sensors and the MuJoCo sensors they stand for, as
/// mujoco_ros2_control names them: a sensor's `mujoco_sensor_name` parameter (default: its
/// own name), followed by the suffix its hardware's `<kind>_mjcf_suffix` parameter gives
/// (default `_quat`, `_gyro`, `_accel`, `_force`, `_torque`).
fn hardware_sensors(robot: &Element) -> Vec<HardwareSensor> {
    let text_of = |element: &Element, name: &str| {
        element
            .children_named("param")
            .find(|p| p.attr("name") == Some(name))
            .map(|p| p.text.trim().to_string())
            .filter(|text| !text.is_empty())
    };
    let mut found = Vec::new();
    for block in robot.children_named("ros2_control") {
        let hardware = block.children_named("hardware").next();
        // Every `*_mjcf_suffix` parameter; which kind reads which is
        // `SensorKind::suffix_params`. A suffix may be empty: it is kept as written.
        let suffixes: Vec<(String, String)> = hardware
            .into_iter()
            .flat_map(|h| h.children_named("param"))
            .filter_map(|p| {
                let param = p.attr("name").filter(|n| n.ends_with("_mjcf_suffix"))?;
                Some((param.to_string(), p.text.trim().to_string()))
            })
            .collect();
        for sensor in block.children_named("sensor") {
            let Some(name) = sensor.attr("name") else {
                continue;
            };
            found.push(HardwareSensor {
                name: name.to_string(),
                mujoco_name: text_of(sensor, "mujoco_sensor_name")
                    .unwrap_or_else(|| name.to_string()),
                suffixes: suffixes.clone(),
            });
        }
    }
    found
}

/// The initial position of each `<ros2_control>` joint that gives one
/// (`<state_interface name="position"><param name="initial_value">`), as gz_ros2_control and
/// mock hardware start the joint there. A value that is not a finite number is skipped with
/// a warning.
fn initial_positions(robot: &Element, warnings: &mut Vec<String>) -> Vec<(String, f64)> {
    let mut found = Vec::new();
    for joint in robot
        .children_named("ros2_control")
        .flat_map(|block| block.children_named("joint"))
    {
        let Some(name) = joint.attr("name") else {
            continue;
        };
        let given = joint
            .children_named("state_interface")
            .filter(|s| s.attr("name") == Some("position"))
            .flat_map(|s| s.children_named("param"))
            .find(|p| p.attr("name") == Some("initial_value"));
        let Some(given) = given else { continue };
        match given.text.trim().parse::<f64>() {
            Ok(value) if value.is_finite() => found.push((name.to_string(), value)),
            _ => warnings.push(format!(
                "line {}: joint '{name}': initial_value '{}' is not a number; ignored",
                given.line,
                given.text.trim()
            )),
        }
    }
    found
}

/// Actuator requests from `<transmission>` elements (ROS 1 and ROS 2 layouts).
pub fn from_transmissions(robot: &Element, warnings: &mut Vec<String>) -> Vec<ActuatorRequest> {
    let mut requests = Vec::new();
    for transmission in robot.children_named("transmission") {
        let actuator = transmission.child("actuator");
        let gear = actuator
            .and_then(|a| a.child("mechanicalReduction"))
            .and_then(|r| r.text.trim().parse::<f64>().ok())
            .filter(|g| g.is_finite() && *g != 0.0)
            .unwrap_or(1.0);
        for joint in transmission.children_named("joint") {
            let Some(joint_name) = joint.attr("name") else {
                continue;
            };
            // The interface sits under <joint> (ROS 1 / ROS 2) or under <actuator> (old style).
            let interface = joint
                .children_named("hardwareInterface")
                .chain(
                    actuator
                        .into_iter()
                        .flat_map(|a| a.children_named("hardwareInterface")),
                )
                .find_map(|hi| CommandKind::from_interface(&hi.text));
            let Some(kind) = interface else {
                warnings.push(format!(
                    "line {}: transmission for joint '{joint_name}' names no position, velocity \
                     or effort interface; no actuator generated",
                    transmission.line
                ));
                continue;
            };
            let name = actuator
                .and_then(|a| a.attr("name"))
                .unwrap_or(joint_name)
                .to_string();
            requests.push(ActuatorRequest {
                name,
                joint: joint_name.to_string(),
                kind,
                gear,
                ctrlrange: None,
                source: format!("<transmission> line {}", transmission.line),
            });
        }
    }
    requests
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::xml::parse;

    #[test]
    fn the_ros2_control_plugin_names_its_controllers_file() {
        let doc = crate::model::xml::parse(
            r#"<robot name="r"><gazebo reference="world"/><gazebo>
  <plugin filename="libgazebo_ros_p3d.so" name="p3d"><parameters>/no.yaml</parameters></plugin>
  <plugin filename="gz_ros2_control-system" name="gz_ros2_control::GazeboSimROS2ControlPlugin">
    <parameters>file:///share/ur/config/ur_controllers.yaml</parameters>
  </plugin></gazebo></robot>"#,
        )
        .unwrap();
        assert_eq!(
            plugin_controllers_file(&doc).as_deref(),
            Some("/share/ur/config/ur_controllers.yaml")
        );
        let bare = crate::model::xml::parse(r#"<robot name="r"/>"#).unwrap();
        assert_eq!(plugin_controllers_file(&bare), None);
    }

    #[test]
    fn ros2_control_sensors_name_their_mujoco_sensors_as_mujoco_ros2_control_does() {
        let doc = parse(
            r#"<robot name="r"><ros2_control name="r" type="system">
  <hardware><plugin>mujoco_ros2_control/MujocoSystemInterface</plugin>
    <param name="force_mjcf_suffix">_f</param></hardware>
  <sensor name="fts"><param name="mujoco_type">fts</param>
    <param name="mujoco_sensor_name">wrist_ft</param></sensor>
  <sensor name="imu"><param name="mujoco_type">imu</param></sensor>
</ros2_control></robot>"#,
        )
        .unwrap();
        let sensors = hardware_sensors(&doc);
        let suffixes = vec![("force_mjcf_suffix".to_string(), "_f".to_string())];
        assert_eq!(
            sensors,
            [
                HardwareSensor {
                    name: "fts".into(),
                    mujoco_name: "wrist_ft".into(),
                    suffixes: suffixes.clone()
                },
                HardwareSensor {
                    name: "imu".into(),
                    mujoco_name: "imu".into(),
                    suffixes
                }
            ]
        );
    }

    #[test]
    fn initial_values_of_position_state_interfaces_are_read() {
        let doc = crate::model::xml::parse(
            r#"<robot name="r"><ros2_control name="r" type="system">
  <joint name="a"><state_interface name="position"><param name="initial_value">-1.57</param></state_interface></joint>
  <joint name="b"><state_interface name="velocity"><param name="initial_value">2</param></state_interface></joint>
  <joint name="c"><state_interface name="position"><param name="initial_value">${x}</param></state_interface></joint>
</ros2_control></robot>"#,
        )
        .unwrap();
        let mut warnings = Vec::new();
        assert_eq!(
            initial_positions(&doc, &mut warnings),
            [("a".to_string(), -1.57)]
        );
        assert!(
            warnings[0].contains("joint 'c': initial_value '${x}' is not a number"),
            "{warnings:?}"
        );
    }

    #[test]
    fn reads_ros2_control_and_transmissions() {
        let doc = parse(
            r#"<robot name="r">
  <ros2_control name="s" type="system">
    <joint name="a"><command_interface name="velocity"><param name="min">-2</param><param name="max">2</param></command_interface><state_interface name="position"/></joint>
    <joint name="b"><command_interface name="position"/><command_interface name="effort"/></joint>
    <joint name="c"><state_interface name="position"/></joint>
  </ros2_control>
  <transmission name="t"><type>transmission_interface/SimpleTransmission</type>
    <joint name="d"><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
    <actuator name="d_motor"><mechanicalReduction>50</mechanicalReduction></actuator>
  </transmission>
</robot>"#,
        )
        .unwrap();
        let mut warnings = Vec::new();
        let rc = from_ros2_control(&doc, &mut warnings);
        assert_eq!(rc.len(), 2);
        assert_eq!(rc[0].kind, CommandKind::Velocity);
        assert_eq!(rc[0].ctrlrange, Some([-2.0, 2.0]));
        assert_eq!(rc[1].kind, CommandKind::Position);
        let tr = from_transmissions(&doc, &mut warnings);
        assert_eq!(tr.len(), 1);
        assert_eq!(tr[0].name, "d_motor");
        assert_eq!(tr[0].joint, "d");
        assert_eq!(tr[0].kind, CommandKind::Effort);
        assert_eq!(tr[0].gear, 50.0);
        assert!(warnings.is_empty());
    }
}
