//! ROS names where no rcl resolves them (the DDS backend, the Foxglove view, MCAP files): the node's namespace
//! and name from the `--ros-args` remaps (`config::Remaps`), private (`~/x`) and relative
//! names made absolute, then the `-r from:=to` remaps applied, as rcl does.
use crate::config::Remaps;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct Names {
    namespace: String,
    node: String,
    remaps: HashMap<String, String>,
}

impl Names {
    /// The node's namespace, name and name remaps after `remaps`.
    pub fn new(remaps: &Remaps) -> Self {
        let namespace = remaps
            .namespace
            .as_ref()
            .map_or("/".to_string(), |ns| format!("/{}", ns.trim_matches('/')));
        let mut names = Self {
            namespace,
            node: remaps.node_name().to_string(),
            remaps: HashMap::new(),
        };
        // Both sides of a remap are resolved against the final namespace.
        for (from, to) in &remaps.names {
            let from = names.absolute(from);
            let to = names.absolute(to);
            names.remaps.insert(from, to);
        }
        names
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    /// The logger name rcl gives the node: the namespace's segments and the node name,
    /// joined with dots (`sim.mujoco_bridge`).
    pub fn logger(&self) -> String {
        self.namespace
            .split('/')
            .filter(|s| !s.is_empty())
            .chain([self.node.as_str()])
            .collect::<Vec<_>>()
            .join(".")
    }

    fn absolute(&self, name: &str) -> String {
        let under = |prefix: &str, rest: &str| {
            format!(
                "{}/{}",
                prefix.trim_end_matches('/'),
                rest.trim_start_matches('/')
            )
        };
        if let Some(private) = name.strip_prefix('~') {
            under(&under(&self.namespace, &self.node), private)
        } else if name.starts_with('/') {
            name.to_string()
        } else {
            under(&self.namespace, name)
        }
    }

    /// `name` as the absolute name the graph sees.
    pub fn resolve(&self, name: &str) -> String {
        let name = self.absolute(name);
        self.remaps.get(&name).cloned().unwrap_or(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_resolve_as_rcl_resolves_them() {
        let names = Names::new(&Remaps::default());
        assert_eq!(names.resolve("joint_states"), "/joint_states");
        assert_eq!(names.resolve("~/reset"), "/mujoco_bridge/reset");
        assert_eq!(names.resolve("/clock"), "/clock");
        assert_eq!(names.logger(), "mujoco_bridge");

        let ros_args = args(&[
            "--ros-args",
            "-r",
            "__ns:=/sim",
            "-r",
            "__node:=bridge",
            "-r",
            "cmd_vel:=/teleop/cmd_vel",
            "-r",
            "other_node:joint_states:=x",
        ]);
        let names = Names::new(&Remaps::from_ros_args(&ros_args).unwrap());
        assert_eq!(names.resolve("joint_states"), "/sim/joint_states");
        assert_eq!(names.resolve("cmd_vel"), "/teleop/cmd_vel");
        assert_eq!(names.resolve("~/reset"), "/sim/bridge/reset");
        assert_eq!(names.resolve("/clock"), "/clock");
        assert_eq!(names.logger(), "sim.bridge");
    }
}
