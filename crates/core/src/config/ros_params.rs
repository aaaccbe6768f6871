//! Node parameters in the standard ROS 2 forms, read from the `--ros-args` before the config
//! is loaded, so that a launch file can set anything a config holds:
//! `--params-file FILE` (`<node>: ros__parameters: ...`, where `<node>` is the node's name,
//! its namespaced name or `/**`) and `-p name:=value`. Parameter `config` names the robot
//! config (relative to the params file's folder); every other parameter is a config field
//! path such as `sim.mode` or `ros.rates.joint_states`, nested maps joined with dots.
use super::params_file::{applies_to, is_every_node, node_sections};
use crate::error::InputError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Parameters every ROS node may be given that say nothing about the simulation.
const STANDARD: [&str; 2] = ["use_sim_time", "start_type_description_service"];

#[derive(Debug, Default, PartialEq)]
pub struct RosParams {
    pub config: Option<PathBuf>,
    /// `robot_description`: URDF text, the robot when nothing else names one (as
    /// ros2_control's node and mujoco_ros2_control take it).
    pub robot_description: Option<String>,
    /// `field.path=value` config overrides, in the order given.
    pub overrides: Vec<String>,
}

/// The node's name before remaps.
pub const NODE_NAME: &str = "mujoco_bridge";

/// The `-r` (`--remap`) rules among the ROS arguments that apply to this node, as given:
/// its namespace (`__ns`), its name (`__node`), and name remaps (`from:=to`). A rule
/// `node:from:=to` applies only when `node` is this node's name before remaps.
#[derive(Debug, Default, PartialEq)]
pub struct Remaps {
    pub namespace: Option<String>,
    pub node: Option<String>,
    pub names: Vec<(String, String)>,
}

/// A `-r` rule that is not `from:=to`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("-r {0}: expected from:=to")]
pub struct RemapError(pub String);

impl Remaps {
    pub fn from_ros_args(ros_args: &[String]) -> Result<Self, RemapError> {
        let mut remaps = Self::default();
        for pair in ros_args.windows(2) {
            if pair[0] != "-r" && pair[0] != "--remap" {
                continue;
            }
            let rule = match pair[1].split_once(':') {
                Some((node, rest)) if !rest.starts_with('=') => {
                    if node != NODE_NAME {
                        continue;
                    }
                    rest
                }
                _ => pair[1].as_str(),
            };
            let (from, to) = rule
                .split_once(":=")
                .ok_or_else(|| RemapError(rule.to_string()))?;
            match from {
                "__ns" => remaps.namespace = Some(to.to_string()),
                "__node" | "__name" => remaps.node = Some(to.to_string()),
                _ => remaps.names.push((from.to_string(), to.to_string())),
            }
        }
        Ok(remaps)
    }

    /// The node's name after the remaps.
    pub fn node_name(&self) -> &str {
        self.node.as_deref().unwrap_or(NODE_NAME)
    }
}

/// Flattens nested maps into `a.b.c` names with their values.
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let name = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&name, inner, out);
            }
        }
        other => out.push((prefix.to_string(), other.clone())),
    }
}

impl RosParams {
    fn take(
        &mut self,
        name: &str,
        value: &Value,
        base: &Path,
        origin: &str,
    ) -> Result<(), InputError> {
        if STANDARD.contains(&name) || name.starts_with("qos_overrides.") {
            return Ok(());
        }
        if name == "config" {
            let Value::String(path) = value else {
                return Err(InputError::new(origin, "must be a file path").at("config"));
            };
            self.config = Some(base.join(path));
            return Ok(());
        }
        if name == "robot_description" {
            let Value::String(text) = value else {
                return Err(InputError::new(origin, "must be URDF text").at(name.to_string()));
            };
            self.robot_description = Some(text.clone());
            return Ok(());
        }
        // JSON text is YAML, which the override parser reads.
        self.overrides.push(format!("{name}={value}"));
        Ok(())
    }

    /// Reads the parameters in `ros_args` (the arguments after `--ros-args`).
    pub fn from_ros_args(ros_args: &[String]) -> Result<Self, InputError> {
        let remaps =
            Remaps::from_ros_args(ros_args).map_err(|m| InputError::new("--ros-args", m))?;
        let node = remaps.node_name();
        let mut params = Self::default();
        let mut args = ros_args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--params-file" => {
                    let Some(file) = args.next() else {
                        return Err(InputError::new("--ros-args", "--params-file needs a file"));
                    };
                    params.read_file(Path::new(file), node)?;
                }
                "-p" | "--param" => {
                    let Some(assignment) = args.next() else {
                        return Err(InputError::new("--ros-args", "-p needs name:=value"));
                    };
                    let (name, raw) = assignment.split_once(":=").ok_or_else(|| {
                        InputError::new(
                            "--ros-args",
                            format!("-p '{assignment}' must be name:=value"),
                        )
                    })?;
                    let value: Value = serde_saphyr::from_str(raw).map_err(|e| {
                        InputError::new(
                            "--ros-args",
                            format!("-p {name}: '{raw}' is not valid YAML: {e}"),
                        )
                    })?;
                    let cwd = std::env::current_dir().unwrap_or_default();
                    params.take(name, &value, &cwd, "--ros-args")?;
                }
                _ => {}
            }
        }
        Ok(params)
    }

    fn read_file(&mut self, file: &Path, node: &str) -> Result<(), InputError> {
        let origin = file.display().to_string();
        let text = std::fs::read_to_string(file)
            .map_err(|e| InputError::new(&origin, format!("cannot read the params file: {e}")))?;
        let tree: Value = serde_saphyr::from_str(&text)
            .map_err(|e| InputError::new(&origin, format!("invalid YAML: {e}")))?;
        let Value::Object(nodes) = tree else {
            return Err(InputError::new(
                &origin,
                "a params file maps node names to ros__parameters",
            ));
        };
        let base = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let sections = node_sections(&nodes)
            .map_err(|e| InputError::new(&origin, "needs ros__parameters").at(e.key))?;
        // A file that names controllers for ros2_control_node's controller manager (as a
        // bringup gives it to ros2_control_node) is the first robot's controllers file.
        let declares_controllers = sections.iter().any(|section| {
            !is_every_node(&section.key)
                && applies_to(&section.key, super::controllers::CONTROLLER_MANAGER)
                && section.params.values().any(|v| v.get("type").is_some())
        });
        if declares_controllers {
            let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
            let quoted = Value::String(absolute.display().to_string());
            self.overrides
                .push(format!("robots.0.controllers={quoted}"));
        }
        for section in sections.iter().filter(|s| applies_to(&s.key, node)) {
            let mut flat = Vec::new();
            for (name, value) in section.params {
                flatten(name, value, &mut flat);
            }
            for (name, value) in flat {
                self.take(&name, &value, &base, &origin)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn params_files_and_single_params_become_config_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("panda.params.yaml");
        std::fs::write(
            &file,
            "/**:\n  ros__parameters:\n    use_sim_time: false\nmujoco_bridge:\n  ros__parameters:\n    config: panda.yaml\n    sim:\n      mode: fast\n    ros:\n      rates: {joint_states: 250}\nother_node:\n  ros__parameters:\n    sim: {speed: 3}\n",
        )
        .unwrap();
        let params = RosParams::from_ros_args(&args(&[
            "--params-file",
            file.to_str().unwrap(),
            "-p",
            "world.timestep:=0.001",
        ]))
        .unwrap();
        assert_eq!(params.config, Some(dir.path().join("panda.yaml")));
        assert_eq!(
            params.overrides,
            [
                "sim.mode=\"fast\"",
                "ros.rates.joint_states=250",
                "world.timestep=0.001"
            ]
        );
    }

    #[test]
    fn a_params_file_with_the_controller_managers_section_is_the_controllers_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("controllers.yaml");
        std::fs::write(
            &file,
            "controller_manager:\n  ros__parameters:\n    update_rate: 100\n    arm: {type: position_controllers/JointGroupPositionController}\narm:\n  ros__parameters: {joints: [a]}\n",
        )
        .unwrap();
        let path = file.to_str().unwrap();
        let params = RosParams::from_ros_args(&args(&["--params-file", path])).unwrap();
        assert_eq!(
            params.overrides,
            [format!("robots.0.controllers=\"{path}\"")]
        );
    }

    #[test]
    fn node_names_nested_under_a_wildcard_are_read_as_rcl_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("robot.yaml");
        std::fs::write(
            &file,
            "/**:\n  controller_manager:\n    ros__parameters:\n      drive: {type: diff_drive_controller/DiffDriveController}\n  drive:\n    ros__parameters: {wheel_radius: 0.04}\n  mujoco_bridge:\n    ros__parameters:\n      sim: {speed: 2}\n",
        )
        .unwrap();
        let path = file.to_str().unwrap();
        let params = RosParams::from_ros_args(&args(&["--params-file", path])).unwrap();
        assert_eq!(
            params.overrides,
            [
                format!("robots.0.controllers=\"{path}\""),
                "sim.speed=2".into()
            ]
        );
        std::fs::write(&file, "/**:\n  mujoco_bridge:\n    sim: {speed: 2}\n").unwrap();
        let e = RosParams::from_ros_args(&args(&["--params-file", path])).unwrap_err();
        assert!(e.to_string().contains("/**/mujoco_bridge"), "{e}");
    }

    #[test]
    fn a_remapped_node_name_selects_its_section() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.yaml");
        std::fs::write(
            &file,
            "/sim/bridge:\n  ros__parameters:\n    sim: {speed: 2}\n",
        )
        .unwrap();
        let path = file.to_str().unwrap();
        let mine =
            RosParams::from_ros_args(&args(&["-r", "__node:=bridge", "--params-file", path]));
        assert_eq!(mine.unwrap().overrides, ["sim.speed=2"]);
        let other = RosParams::from_ros_args(&args(&["--params-file", path])).unwrap();
        assert!(other.overrides.is_empty());
    }

    #[test]
    fn remaps_that_apply_to_this_node() {
        let remaps = Remaps::from_ros_args(&args(&[
            "--ros-args",
            "-r",
            "__ns:=/sim",
            "--remap",
            "mujoco_bridge:__node:=bridge",
            "-r",
            "cmd_vel:=/teleop/cmd_vel",
            "-r",
            "other_node:joint_states:=x",
        ]))
        .unwrap();
        assert_eq!(remaps.namespace.as_deref(), Some("/sim"));
        assert_eq!(remaps.node_name(), "bridge");
        assert_eq!(
            remaps.names,
            [("cmd_vel".to_string(), "/teleop/cmd_vel".to_string())]
        );
        assert_eq!(Remaps::default().node_name(), NODE_NAME);
        let e = RosParams::from_ros_args(&args(&["-r", "nonsense"])).unwrap_err();
        assert!(
            e.message.contains("nonsense") && e.message.contains("from:=to"),
            "{e}"
        );
    }

    #[test]
    fn bad_params_name_the_file() {
        let e = RosParams::from_ros_args(&args(&["--params-file", "/no/such.yaml"])).unwrap_err();
        assert_eq!(e.origin, "/no/such.yaml");
        let e = RosParams::from_ros_args(&args(&["-p", "sim.speed=2"])).unwrap_err();
        assert!(e.message.contains("name:=value"), "{e}");
    }
}
