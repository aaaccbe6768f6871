//! ros2_control controller declarations, in the format of ros2_control_node's parameters
//! (what MoveIt Setup Assistant and robots' bringup packages write): the controller
//! manager's section names each controller and its type, and each controller's own section
//! holds its parameters.
//!
//! ```yaml
//! controller_manager:
//!   ros__parameters:
//!     update_rate: 500
//!     joint_state_broadcaster:
//!       type: joint_state_broadcaster/JointStateBroadcaster
//! joint_trajectory_controller:
//!   ros__parameters:
//!     joints: [shoulder_pan_joint, ...]
//! ```
//!
//! A section's key is a node name as in any params file: `name`, `/name`, `/ns/name`,
//! `/**` (every node) or `/**/name`, nested or joined (`config::params_file`). Parameters
//! keep their nesting (`constraints.goal_time` is `constraints: {goal_time: ..}`); each
//! controller type reads the ones it knows.
use super::controller_params::ParamError;
use super::diff_drive::{DIFF_DRIVE, DiffDrive};
use super::params_file::{NodeSection, applies_to, is_every_node, node_sections};
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::path::Path;

/// The controller manager's node name, as ros2_control_node has it.
pub const CONTROLLER_MANAGER: &str = "controller_manager";

/// The controllers a file declares, in its order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControllersFile {
    /// The file, as given (errors and the controller manager's listings name it).
    pub origin: String,
    /// The controller manager's `update_rate` (Hz), when the file gives one.
    pub update_rate: Option<f64>,
    pub controllers: IndexMap<String, DeclaredController>,
}

/// One controller of the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeclaredController {
    /// Its plugin type, `joint_trajectory_controller/JointTrajectoryController`.
    pub type_name: String,
    /// Its `ros__parameters` (those of `/**` first, its own over them).
    pub params: Map<String, Value>,
    /// A diff_drive_controller's parameters, read once as it is declared (None for any
    /// other type): the robot's base, the manager's configure step and its `~/cmd_vel`
    /// subscription all take this reading.
    pub diff_drive: Option<Result<DiffDrive, ParamError>>,
}

impl DeclaredController {
    pub fn new(type_name: impl Into<String>, params: Map<String, Value>) -> Self {
        let type_name = type_name.into();
        let diff_drive = (type_name == DIFF_DRIVE).then(|| DiffDrive::parse(&params));
        Self {
            type_name,
            params,
            diff_drive,
        }
    }
}

/// Why a controllers file cannot be read; the field is a path in the file.
#[derive(Debug, thiserror::Error)]
pub enum ControllersError {
    #[error("cannot read the controllers file: {0}")]
    Read(#[from] std::io::Error),
    #[error("invalid YAML: {0}")]
    Yaml(String),
    #[error("a controllers file maps node names to ros__parameters")]
    NotNodes,
    #[error(transparent)]
    NoParameters(#[from] super::params_file::NoParameters),
    #[error("no {CONTROLLER_MANAGER} section (its ros__parameters name the controllers)")]
    NoManager,
    #[error("{field}: {reason}")]
    Field { field: String, reason: String },
}

impl ControllersFile {
    /// Reads the file at `path`.
    pub fn read(path: &Path) -> Result<Self, ControllersError> {
        let text = std::fs::read_to_string(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses the text of a controllers file named `origin`.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ControllersError> {
        let tree: Value =
            serde_saphyr::from_str(text).map_err(|e| ControllersError::Yaml(e.to_string()))?;
        let Value::Object(nodes) = tree else {
            return Err(ControllersError::NotNodes);
        };
        let sections = node_sections(&nodes)?;
        let section = |name: &str| node_params(&sections, name);
        let manager = section(CONTROLLER_MANAGER).ok_or(ControllersError::NoManager)?;
        let field = |name: &str| format!("{CONTROLLER_MANAGER}.ros__parameters.{name}");
        let mut file = Self {
            origin: origin.to_string(),
            ..Self::default()
        };
        for (name, value) in &manager {
            match (name.as_str(), value) {
                ("update_rate", rate) => {
                    let hz = rate.as_f64().filter(|hz| hz.is_finite() && *hz > 0.0);
                    file.update_rate = Some(hz.ok_or_else(|| ControllersError::Field {
                        field: field(name),
                        reason: format!("must be a positive number of Hz, got {rate}"),
                    })?);
                }
                (_, Value::Object(declared)) if declared.contains_key("type") => {
                    let type_name = declared["type"].as_str().filter(|t| !t.is_empty());
                    let type_name = type_name.ok_or_else(|| ControllersError::Field {
                        field: field(&format!("{name}.type")),
                        reason: "must name the controller's type".into(),
                    })?;
                    let params = section(name).unwrap_or_default();
                    file.controllers
                        .insert(name.clone(), DeclaredController::new(type_name, params));
                }
                // The manager's own settings (use_sim_time, thread priorities, ...).
                _ => {}
            }
        }
        // A controller may also give its type in its own section.
        for key in sections.iter().map(|s| &s.key) {
            let name = key.rsplit('/').next().unwrap_or(key);
            if name == "**" || name == CONTROLLER_MANAGER || file.controllers.contains_key(name) {
                continue;
            }
            let Some(params) = section(name) else {
                continue;
            };
            if let Some(Value::String(type_name)) = params.get("type").filter(|_| !name.is_empty())
            {
                let type_name = type_name.clone();
                file.controllers
                    .insert(name.to_string(), DeclaredController::new(type_name, params));
            }
        }
        Ok(file)
    }

    /// The parameters params file `path` gives node `name` (those of `/**`, then its own),
    /// when it gives any: how a controller set up through the manager's parameters
    /// (`<name>.params_file`) gets its own.
    pub fn node_params_of(
        path: &Path,
        name: &str,
    ) -> Result<Option<Map<String, Value>>, ControllersError> {
        let text = std::fs::read_to_string(path)?;
        let tree: Value =
            serde_saphyr::from_str(&text).map_err(|e| ControllersError::Yaml(e.to_string()))?;
        let Value::Object(nodes) = tree else {
            return Err(ControllersError::NotNodes);
        };
        Ok(node_params(&node_sections(&nodes)?, name))
    }
}

/// The parameters of node `name` among a params file's `sections`: those of `/**`, then its
/// own over them; None when no section applies.
fn node_params(sections: &[NodeSection<'_>], name: &str) -> Option<Map<String, Value>> {
    let mut found: Option<Map<String, Value>> = None;
    let mut ordered: Vec<&NodeSection> = sections.iter().collect();
    ordered.sort_by_key(|section| !is_every_node(&section.key));
    for section in ordered.into_iter().filter(|s| applies_to(&s.key, name)) {
        let into = found.get_or_insert_with(Map::new);
        for (name, value) in section.params {
            into.insert(name.clone(), value.clone());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
/**:
  ros__parameters:
    use_sim_time: true
controller_manager:
  ros__parameters:
    update_rate: 500  # Hz
    joint_state_broadcaster:
      type: joint_state_broadcaster/JointStateBroadcaster
    forward_position_controller:
      type: position_controllers/JointGroupPositionController
/arm/forward_position_controller:
  ros__parameters:
    joints: [a, b]
    constraints: {goal_time: 0.5, a: {goal: 0.1}}
gripper_controller:
  ros__parameters:
    type: parallel_gripper_action_controller/GripperActionController
    joint: finger
";

    #[test]
    fn the_manager_names_the_controllers_and_their_sections_hold_their_parameters() {
        let file = ControllersFile::parse(FILE, "c.yaml").unwrap();
        assert_eq!(file.update_rate, Some(500.0));
        let names: Vec<&str> = file.controllers.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "joint_state_broadcaster",
                "forward_position_controller",
                "gripper_controller"
            ],
            "a type in the controller's own section declares it too"
        );
        let forward = &file.controllers["forward_position_controller"];
        assert_eq!(
            forward.type_name,
            "position_controllers/JointGroupPositionController"
        );
        assert_eq!(forward.params["joints"], serde_json::json!(["a", "b"]));
        assert_eq!(forward.params["constraints"]["a"]["goal"], 0.1);
        assert_eq!(
            forward.params["use_sim_time"], true,
            "/** applies to every node"
        );
        let broadcaster = &file.controllers["joint_state_broadcaster"];
        assert_eq!(broadcaster.params.len(), 1, "only /**: {broadcaster:?}");
    }

    #[test]
    fn a_wrong_file_is_refused_with_its_field() {
        let error = |text: &str| {
            ControllersFile::parse(text, "c.yaml")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            error("arm:\n  ros__parameters: {joints: [a]}\n"),
            "no controller_manager section (its ros__parameters name the controllers)"
        );
        assert_eq!(
            error("controller_manager:\n  ros__parameters:\n    update_rate: -5\n"),
            "controller_manager.ros__parameters.update_rate: must be a positive number of Hz, got -5"
        );
        assert_eq!(
            error("controller_manager:\n  ros__parameters:\n    arm: {type: ''}\n"),
            "controller_manager.ros__parameters.arm.type: must name the controller's type"
        );
        assert_eq!(
            error("controller_manager:\n  update_rate: 5\n"),
            "controller_manager: needs ros__parameters"
        );
        assert_eq!(
            error("[1, 2]"),
            "a controllers file maps node names to ros__parameters"
        );
    }

    #[test]
    fn node_names_nested_under_a_wildcard_are_sections() {
        let file = ControllersFile::parse(
            "/**:\n  controller_manager:\n    ros__parameters:\n      update_rate: 50\n      diffdrive_controller: {type: diff_drive_controller/DiffDriveController}\n  diffdrive_controller:\n    ros__parameters: {wheel_radius: 0.04}\n",
            "nested.yaml",
        )
        .unwrap();
        assert_eq!(file.update_rate, Some(50.0));
        let drive = &file.controllers["diffdrive_controller"];
        assert_eq!(drive.type_name, "diff_drive_controller/DiffDriveController");
        assert_eq!(drive.params["wheel_radius"], 0.04);
    }

    #[test]
    fn husarion_rosbot_controllers_are_read_as_they_are() {
        let path = crate::source_root().join(
            "../shared/robots/gazebo/rosbot/rosbot_controller/config/diff_drive_controller.yaml",
        );
        let Ok(file) = ControllersFile::read(&path) else {
            eprintln!("skipped: no {}", path.display());
            return;
        };
        assert_eq!(file.update_rate, Some(20.0));
        let drive = &file.controllers["rosbot_base_controller"];
        assert_eq!(
            drive.params["left_wheel_names"].as_array().unwrap().len(),
            2
        );
        assert_eq!(
            file.controllers["imu_broadcaster"].params["sensor_name"],
            "imu"
        );
    }

    #[test]
    fn universal_robots_gazebo_controllers_are_read_as_they_are() {
        let path = crate::source_root()
            .join("../shared/robots/ur/ur_simulation_gz/config/ur_controllers.yaml");
        let Ok(file) = ControllersFile::read(&path) else {
            eprintln!("skipped: no {}", path.display());
            return;
        };
        assert_eq!(file.update_rate, Some(500.0));
        assert_eq!(file.controllers.len(), 8);
        let trajectory = &file.controllers["joint_trajectory_controller"];
        assert_eq!(trajectory.params["joints"].as_array().unwrap().len(), 6);
        assert_eq!(
            trajectory.params["constraints"]["elbow_joint"]["trajectory"],
            0.2
        );
        assert_eq!(
            file.controllers["io_and_status_controller"].type_name,
            "ur_controllers/GPIOController"
        );
    }
}
