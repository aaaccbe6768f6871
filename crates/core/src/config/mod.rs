//! Robot and world configuration: YAML files in `config/`, validated with errors that name
//! the file and the field path (`robots[0].pose.xyz`).
mod access;
pub mod broadcasters;
pub mod controller_params;
pub mod controllers;
pub mod diff_drive;
pub mod gz_bridge;
pub mod params_file;
mod paths;
mod ros_params;
mod schema;

pub use access::{AccessError, FileAccess, ReadError};
pub use paths::{PathError, against, config_dir, expand_path, models_dir};
pub use ros_params::{NODE_NAME, RemapError, Remaps, RosParams};
pub use schema::*;

use crate::error::{InputError, InputResult};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The embedded default robot, so the main job runs offline from any directory.
pub const EMBEDDED_CONFIG_NAME: &str = "<embedded>/config/default.yaml";
pub const EMBEDDED_CONFIG: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../config/default.yaml"
));
pub const EMBEDDED_URDF_PATH: &str = "<embedded>/urdf/mobile_manipulator.urdf";
pub const EMBEDDED_URDF: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../urdf/mobile_manipulator.urdf"
));

/// Reads a text file, serving the embedded files under their `<embedded>/` names.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let path = &normalize(path);
    if path == Path::new(EMBEDDED_URDF_PATH) {
        return Ok(EMBEDDED_URDF.to_string());
    }
    if path == Path::new(EMBEDDED_CONFIG_NAME) {
        return Ok(EMBEDDED_CONFIG.to_string());
    }
    std::fs::read_to_string(path)
}

/// Removes `.` and `a/..` components without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

impl Config {
    /// Loads a config file; `overrides` are `field.path=value` pairs applied before validation.
    pub fn load(path: &Path, overrides: &[String]) -> InputResult<Config> {
        let origin = path.display().to_string();
        let text = read_text(path)
            .map_err(|e| InputError::new(&origin, format!("cannot read config: {e}")))?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::from_yaml(&text, &origin, &base_dir, overrides)
    }

    /// The embedded default robot's config.
    pub fn embedded_default(overrides: &[String]) -> InputResult<Config> {
        Self::from_yaml(
            EMBEDDED_CONFIG,
            EMBEDDED_CONFIG_NAME,
            Path::new("<embedded>/config"),
            overrides,
        )
    }

    /// Parses YAML text. Relative paths in it resolve against `base_dir`.
    pub fn from_yaml(
        text: &str,
        origin: &str,
        base_dir: &Path,
        overrides: &[String],
    ) -> InputResult<Config> {
        let mut tree: Value = serde_saphyr::from_str(text)
            .map_err(|e| InputError::new(origin, format!("invalid YAML: {e}")))?;
        if tree.is_null() {
            tree = Value::Object(Default::default());
        }
        for assignment in overrides {
            apply_override(&mut tree, assignment)
                .map_err(|message| InputError::new(origin, message).at(assignment.clone()))?;
        }
        let mut config: Config = serde_path_to_error::deserialize(tree).map_err(|e| {
            let field = e.path().to_string();
            let err = InputError::new(origin, e.into_inner().to_string());
            if field == "." { err } else { err.at(field) }
        })?;
        config.origin = origin.to_string();
        config.base_dir = base_dir.to_path_buf();
        config.validate()?;
        // Decided once, at load: robots spawned or deleted later leave it as it is.
        config.unprefixed_robot = Some(match config.robots.as_slice() {
            [only] => only.name.clone(),
            _ => String::new(),
        });
        Ok(config)
    }

    /// A config holding one robot loaded from a model file, as the CLI's `--mjcf` / `--urdf`.
    pub fn single_model(kind: ModelKind, path: &Path, overrides: &[String]) -> InputResult<Config> {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "robot".into());
        let name = robot_name_from(&stem);
        let key = match kind {
            ModelKind::Mjcf => "mjcf",
            ModelKind::Urdf => "urdf",
        };
        // The model's folder is the config's: its own files lie there (and for a world a
        // request loads, it is the folder that request may read).
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let text = format!(
            "robots:\n  - name: {name}\n    {key}: {}\n",
            serde_json::to_string(&path.display().to_string()).unwrap_or_default()
        );
        let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::from_yaml(&text, "<command line>", &folder, overrides)
    }

    /// One robot from URDF text, such as the `robot_description` parameter a bringup gives
    /// ros2_control's node, named `robot_name` (the URDF's own name); relative paths in it
    /// resolve against the working folder.
    pub fn urdf_description(
        robot_name: &str,
        text: &str,
        overrides: &[String],
    ) -> InputResult<Config> {
        let yaml = format!(
            "robots:\n  - name: {}\n    urdf_string: {}\n",
            robot_name_from(robot_name),
            serde_json::to_string(text).unwrap_or_default()
        );
        let folder = std::env::current_dir().unwrap_or_default();
        Self::from_yaml(&yaml, "<robot_description>", &folder, overrides)
    }

    /// Resolves a path written for robot `index`: as `resolve_path`, but a robot that came
    /// from a request's text gets no environment substitution and only files its world's
    /// `FileAccess` allows.
    pub fn resolve_robot_path(&self, index: usize, raw: &str, field: &str) -> InputResult<PathBuf> {
        if !self.robots.get(index).is_some_and(|r| r.from_request) {
            return self.resolve_path(raw, field);
        }
        Ok(against(PathBuf::from(raw), &self.base_dir))
    }

    /// Resolves a path written in this config (env variables, relative to the config's folder).
    pub fn resolve_path(&self, raw: &str, field: &str) -> InputResult<PathBuf> {
        expand_path(raw, &self.base_dir)
            .map_err(|message| InputError::new(&self.origin, message).at(field.to_string()))
    }

    /// Checks the config's own rules, one group at a time; the first problem is the error,
    /// naming its field.
    pub(crate) fn validate(&self) -> InputResult<()> {
        let checks: [Check; 10] = [
            Self::check_robots_given,
            Self::check_world,
            Self::check_dds,
            Self::check_capacity,
            Self::check_pacing,
            Self::check_ros,
            Self::check_robot_topics,
            Self::check_robot_sensors,
            Self::check_endpoints,
            Self::check_robot_definitions,
        ];
        for check in checks {
            check(self)
                .map_err(|(field, message)| InputError::new(&self.origin, message).at(field))?;
        }
        Ok(())
    }

    /// At least one robot.
    fn check_robots_given(&self) -> Result<(), Problem> {
        if self.robots.is_empty() {
            return problem("robots".into(), "at least one robot is required".into());
        }
        Ok(())
    }

    /// The world's timestep and gravity, the speed, the contacts each state carries.
    fn check_world(&self) -> Result<(), Problem> {
        if let Some(ts) = self.world.timestep
            && !(ts.is_finite() && ts > 0.0 && ts <= 0.1)
        {
            return problem(
                "world.timestep".into(),
                format!("must be in (0, 0.1] seconds, got {ts}"),
            );
        }
        if let Some(g) = self.world.gravity
            && g.iter().any(|v| !v.is_finite())
        {
            return problem("world.gravity".into(), "values must be finite".into());
        }
        if let Some((field, message)) = self.world.origin.problem() {
            return problem(format!("world.origin.{field}"), message);
        }
        if let Some((field, message)) = schema::classes_problem(&self.world.classes) {
            return problem(format!("world.classes{field}"), message);
        }
        if !SPEED_RANGE.contains(&self.sim.speed) {
            return problem(
                "sim.speed".into(),
                format!(
                    "must be a real-time factor from {} to {}, got {}",
                    SPEED_RANGE.start(),
                    SPEED_RANGE.end(),
                    self.sim.speed
                ),
            );
        }
        if self.sim.export_contacts > 1000 {
            return problem(
                "sim.export_contacts".into(),
                format!("must be at most 1000, got {}", self.sim.export_contacts),
            );
        }
        Ok(())
    }

    /// The contact markers' scale and the DDS domain and interfaces.
    fn check_dds(&self) -> Result<(), Problem> {
        if !(self.ros.contact_force_scale.is_finite() && self.ros.contact_force_scale > 0.0) {
            return problem(
                "ros.contact_force_scale".into(),
                "must be a positive number of meters per newton".into(),
            );
        }
        if let Some(domain) = self.ros.dds.domain_id
            && domain > MAX_DOMAIN_ID
        {
            return problem(
                "ros.dds.domain_id".into(),
                format!("must be 0..={MAX_DOMAIN_ID} (ROS 2 on Linux), got {domain}"),
            );
        }
        if self.ros.dds.interfaces.as_ref().is_some_and(Vec::is_empty) {
            return problem(
                "ros.dds.interfaces".into(),
                "must name at least one interface (leave it out for the default)".into(),
            );
        }
        for (i, address) in self.ros.dds.interfaces.iter().flatten().enumerate() {
            if address.parse::<std::net::Ipv4Addr>().is_err() {
                return problem(
                    format!("ros.dds.interfaces[{i}]"),
                    format!("must be an IPv4 address such as 127.0.0.1, got {address:?}"),
                );
            }
        }
        Ok(())
    }

    /// The limits, the render threads, and the robots against `limits.robots`.
    fn check_capacity(&self) -> Result<(), Problem> {
        if let Some((field, message)) = self.limits.problem() {
            return problem(format!("limits.{field}"), message);
        }
        let idle = self.render.idle_release;
        if !(idle.is_finite() && idle >= 0.0) {
            return problem(
                "render.idle_release".into(),
                format!("must be 0 (never) or a positive number of seconds, got {idle}"),
            );
        }
        if self.render.nice > 19 {
            return problem(
                "render.nice".into(),
                format!("must be 0 to 19, got {}", self.render.nice),
            );
        }
        if self.robots.len() > self.limits.robots {
            return problem(
                "robots".into(),
                format!(
                    "{} robots, more than limits.robots ({})",
                    self.robots.len(),
                    self.limits.robots
                ),
            );
        }
        Ok(())
    }

    /// Substeps, catch-up and the physics thread's priority.
    fn check_pacing(&self) -> Result<(), Problem> {
        if self.sim.substeps == 0 {
            return problem("sim.substeps".into(), "must be at least 1".into());
        }
        if !(self.sim.catch_up.is_finite() && (0.0..=60.0).contains(&self.sim.catch_up)) {
            return problem(
                "sim.catch_up".into(),
                format!("must be 0 to 60 seconds, got {}", self.sim.catch_up),
            );
        }
        if self.sim.realtime_priority > 99 {
            return problem(
                "sim.realtime_priority".into(),
                format!("must be 0 to 99, got {}", self.sim.realtime_priority),
            );
        }
        Ok(())
    }

    /// The ROS rates, the wrench duration and the node's niceness.
    fn check_ros(&self) -> Result<(), Problem> {
        for (key, rate) in self.ros.rates.fields() {
            if !RosRates::valid(rate) {
                return problem(
                    format!("ros.rates.{key}"),
                    format!("must be 0 (off) or a rate from 0.001 to 100000 Hz, got {rate}"),
                );
            }
        }
        if !(self.ros.wrench_duration.is_finite() && self.ros.wrench_duration > 0.0) {
            return problem(
                "ros.wrench_duration".into(),
                format!(
                    "must be a positive number of seconds, got {}",
                    self.ros.wrench_duration
                ),
            );
        }
        if self.ros.nice > 19 {
            return problem(
                "ros.nice".into(),
                format!("must be 0 to 19, got {}", self.ros.nice),
            );
        }
        Ok(())
    }

    /// Each robot's sensor topics and their rates.
    fn check_robot_topics(&self) -> Result<(), Problem> {
        for (i, robot) in self.robots.iter().enumerate() {
            let rates = robot
                .ros
                .imu
                .iter()
                .map(|t| ("imu", &t.topic, t.rate))
                .chain(
                    robot
                        .ros
                        .force_torque
                        .iter()
                        .map(|t| ("force_torque", &t.topic, t.rate)),
                )
                .chain(robot.ros.range.iter().map(|t| ("range", &t.topic, t.rate)))
                .chain(
                    robot
                        .ros
                        .magnetometers
                        .iter()
                        .map(|t| ("magnetometers", &t.topic, t.rate)),
                )
                .chain(
                    robot
                        .ros
                        .laser_scans
                        .iter()
                        .map(|t| ("laser_scans", &t.topic, t.rate)),
                );
            for (kind, topic, rate) in rates {
                let field = format!("robots[{i}].ros.{kind} (topic '{topic}')");
                if topic.is_empty() {
                    return problem(field, "needs a topic".into());
                }
                if let Some(rate) = rate
                    && !RosRates::valid(rate)
                {
                    return problem(
                        format!("{field}.rate"),
                        format!("must be 0 (off) or a rate from 0.001 to 100000 Hz, got {rate}"),
                    );
                }
            }
        }
        Ok(())
    }

    /// Each robot's odometry topic, URDF gains, cameras and lidars.
    fn check_robot_sensors(&self) -> Result<(), Problem> {
        for (i, robot) in self.robots.iter().enumerate() {
            if robot.ros.odometry.topic.is_empty() {
                return problem(
                    format!("robots[{i}].ros.odometry.topic"),
                    "needs a topic".into(),
                );
            }
            if let Some((name, gain)) = robot.urdf_gains.invalid() {
                return problem(
                    format!("robots[{i}].urdf_gains.{name}"),
                    format!("must be a positive number, got {gain}"),
                );
            }
            for (sensor, latency) in &robot.latency {
                if !(0.0..=10.0).contains(latency) {
                    return problem(
                        format!("robots[{i}].latency.{sensor}"),
                        format!("must be between 0 and 10 seconds, got {latency}"),
                    );
                }
            }
            for (sensor, noise) in &robot.noise {
                if let Some((field, message)) = noise.problem() {
                    return problem(
                        format!("robots[{i}].noise.{sensor}.{field}"),
                        message.into(),
                    );
                }
            }
            let mut names = std::collections::HashSet::new();
            for (k, camera) in robot.listed_cameras().iter().enumerate() {
                if let Some((field, message)) = camera.problem() {
                    return problem(format!("robots[{i}].cameras[{k}].{field}"), message);
                }
                if !names.insert(camera.name()) {
                    return problem(
                        format!("robots[{i}].cameras[{k}].name"),
                        format!("'{}' is already the name of another camera", camera.name()),
                    );
                }
            }
            // Point sensors, then contact sensors: (key, index, name, first problem).
            let points = robot.point_sensors().into_iter().flat_map(|(key, list)| {
                let each = list.iter().enumerate();
                each.map(move |(k, s)| (key, k, &s.name, s.problem()))
            });
            let contacts = robot.contacts.iter().enumerate();
            let contacts = contacts.map(|(k, s)| ("contacts", k, &s.name, s.problem()));
            for (key, k, name, found) in points.chain(contacts) {
                if let Some((field, message)) = found {
                    return problem(format!("robots[{i}].{key}[{k}].{field}"), message);
                }
                if !names.insert(name) {
                    return problem(
                        format!("robots[{i}].{key}[{k}].name"),
                        format!("'{name}' is already the name of another sensor"),
                    );
                }
            }
            for (k, lidar) in robot.lidars.iter().enumerate() {
                if let Some((field, message)) = lidar.problem() {
                    return problem(format!("robots[{i}].lidars[{k}].{field}"), message);
                }
                if !names.insert(&lidar.name) {
                    return problem(
                        format!("robots[{i}].lidars[{k}].name"),
                        format!(
                            "'{}' is already the name of another camera or lidar",
                            lidar.name
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// The ZMQ divider and endpoints, and the Foxglove address.
    fn check_endpoints(&self) -> Result<(), Problem> {
        if self.zmq.divider == 0 {
            return problem("zmq.divider".into(), "must be at least 1".into());
        }
        if let Err(message) = self.foxglove.socket() {
            return problem("foxglove.address".into(), message);
        }
        let mut endpoints = vec![
            ("zmq.state".to_string(), &self.zmq.state),
            ("zmq.control".to_string(), &self.zmq.control),
            ("zmq.info".to_string(), &self.zmq.info),
        ];
        for (i, robot) in self.robots.iter().enumerate() {
            for (key, value) in [
                ("state", &robot.zmq.state),
                ("control", &robot.zmq.control),
                ("info", &robot.zmq.info),
            ] {
                if let Some(v) = value {
                    endpoints.push((format!("robots[{i}].zmq.{key}"), v));
                }
            }
        }
        for (field, endpoint) in endpoints {
            if !["tcp://", "ipc://", "inproc://"]
                .iter()
                .any(|s| endpoint.starts_with(s))
            {
                return problem(
                    field,
                    format!("'{endpoint}' must start with tcp://, ipc:// or inproc://"),
                );
            }
            let all = endpoint.starts_with("tcp://*") || endpoint.starts_with("tcp://0.0.0.0");
            if all && !self.zmq.allow_all_interfaces {
                return problem(
                    field,
                    format!(
                        "'{endpoint}' binds every interface; use tcp://127.0.0.1:PORT, or set zmq.allow_all_interfaces: true"
                    ),
                );
            }
        }
        Ok(())
    }

    /// Each robot's name, model source, pose, actuator groups and keyframes.
    fn check_robot_definitions(&self) -> Result<(), Problem> {
        let mut names = std::collections::BTreeSet::new();
        for (i, robot) in self.robots.iter().enumerate() {
            let at = |f: &str| format!("robots[{i}].{f}");
            if robot.name.is_empty()
                || !robot
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return problem(
                    at("name"),
                    format!(
                        "'{}' must be non-empty and use only letters, digits and '_' \
                         (it becomes a name prefix and a ROS namespace)",
                        robot.name
                    ),
                );
            }
            if !names.insert(robot.name.clone()) {
                return problem(at("name"), format!("duplicate robot name '{}'", robot.name));
            }
            // Elements belong to a robot by their `<name>_` prefix: `a` would claim `a_b`'s.
            if let Some(other) = self.robots[..i].iter().find(|o| {
                robot.name.starts_with(&format!("{}_", o.name))
                    || o.name.starts_with(&format!("{}_", robot.name))
            }) {
                return problem(
                    at("name"),
                    format!(
                        "'{}' and '{}': one robot name followed by '_' begins the other, so \
                         their element names would mix; rename one",
                        robot.name, other.name
                    ),
                );
            }
            let sources = [
                robot.mjcf.is_some(),
                robot.urdf.is_some(),
                robot.mjcf_string.is_some(),
                robot.urdf_string.is_some(),
            ];
            if sources.iter().filter(|s| **s).count() != 1 {
                return problem(
                    format!("robots[{i}]"),
                    "give exactly one of mjcf, urdf, mjcf_string, urdf_string".into(),
                );
            }
            for (f, v) in [("pose.xyz", &robot.pose.xyz), ("pose.rpy", &robot.pose.rpy)] {
                if v.iter().any(|x| !x.is_finite()) {
                    return problem(at(f), "values must be finite".into());
                }
            }
            for (k, group) in robot.actuators.iter().enumerate() {
                group
                    .validate()
                    .or_else(|(f, m)| problem(at(&format!("actuators[{k}].{f}")), m))?;
            }
            for (key, frame) in &robot.keyframes {
                for (pattern, value) in &frame.joints {
                    if !value.is_finite() {
                        return problem(
                            at(&format!("keyframes.{key}.joints.{pattern}")),
                            "value must be finite".into(),
                        );
                    }
                    if let Err(e) = full_match_regex(pattern) {
                        return problem(at(&format!("keyframes.{key}.joints")), e.to_string());
                    }
                }
            }
        }
        Ok(())
    }
}

/// A config field and what is wrong with it.
type Problem = (String, String);

/// One group of the config's rules.
type Check = fn(&Config) -> Result<(), Problem>;

fn problem(field: String, message: String) -> Result<(), Problem> {
    Err((field, message))
}

/// A name pattern that is not a regular expression.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid pattern '{pattern}': {error}")]
pub struct PatternError {
    pub pattern: String,
    pub error: regex::Error,
}

/// Compiles a pattern that must match a whole name.
/// A robot name from a file stem or a model's own name: what is not a letter or a digit
/// becomes `_`, since the name prefixes MuJoCo element names and ROS topics.
fn robot_name_from(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if name.is_empty() {
        "robot".into()
    } else {
        name
    }
}

pub fn full_match_regex(pattern: &str) -> Result<regex::Regex, PatternError> {
    regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|error| PatternError {
        pattern: pattern.to_string(),
        error,
    })
}

/// A `--set` override that cannot be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum OverrideError {
    #[error("an override must look like field.path=value")]
    Shape,
    #[error("value '{raw}' is not valid YAML: {reason}")]
    Yaml { raw: String, reason: String },
    #[error("'{0}' must be a list index")]
    NotAnIndex(String),
    #[error("list index {0} is out of range")]
    OutOfRange(usize),
    #[error("'{0}' is inside a value that is not a map")]
    NotAMap(String),
}

/// Applies one `a.b.0.c=value` override to the YAML tree; the value is parsed as YAML.
fn apply_override(tree: &mut Value, assignment: &str) -> Result<(), OverrideError> {
    let (path, raw) = assignment.split_once('=').ok_or(OverrideError::Shape)?;
    let value: Value = serde_saphyr::from_str(raw).map_err(|e| OverrideError::Yaml {
        raw: raw.to_string(),
        reason: e.to_string(),
    })?;
    let mut node = tree;
    let segments: Vec<&str> = path.split('.').collect();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        node = match node {
            Value::Array(items) => {
                let index: usize = segment
                    .parse()
                    .map_err(|_| OverrideError::NotAnIndex(segment.to_string()))?;
                items
                    .get_mut(index)
                    .ok_or(OverrideError::OutOfRange(index))?
            }
            Value::Object(map) => map.entry(segment.to_string()).or_insert(if last {
                Value::Null
            } else {
                Value::Object(Default::default())
            }),
            _ => return Err(OverrideError::NotAMap(segment.to_string())),
        };
        if last {
            *node = value;
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_parses() {
        let config = Config::embedded_default(&[]).unwrap();
        assert_eq!(config.robots.len(), 1);
        assert!(config.robots[0].urdf.is_some());
    }

    #[test]
    fn unknown_field_names_its_path() {
        let text = "robots:\n  - name: a\n    mjcf: x.xml\n    floting_base: true\n";
        let err = Config::from_yaml(text, "c.yaml", Path::new("."), &[]).unwrap_err();
        assert_eq!(err.origin, "c.yaml");
        assert_eq!(err.location.as_deref(), Some("robots[0].floting_base"));
        assert!(err.message.contains("unknown field"), "{err}");
    }

    #[test]
    fn wrong_type_names_its_path() {
        let text = "world:\n  timestep: fast\nrobots:\n  - name: a\n    mjcf: x.xml\n";
        let err = Config::from_yaml(text, "c.yaml", Path::new("."), &[]).unwrap_err();
        assert_eq!(err.location.as_deref(), Some("world.timestep"), "{err}");
    }

    #[test]
    fn overrides_apply_before_validation() {
        let text = "robots:\n  - name: a\n    mjcf: x.xml\n";
        let config = Config::from_yaml(
            text,
            "c.yaml",
            Path::new("."),
            &[
                "world.timestep=0.001".into(),
                "robots.0.floating_base=true".into(),
            ],
        )
        .unwrap();
        assert_eq!(config.world.timestep, Some(0.001));
        assert_eq!(config.robots[0].floating_base, Some(true));
        let err = Config::from_yaml(text, "c.yaml", Path::new("."), &["sim.speed=-1".into()])
            .unwrap_err();
        assert_eq!(err.location.as_deref(), Some("sim.speed"));
    }

    #[test]
    fn exactly_one_model_source() {
        let text = "robots:\n  - name: a\n    mjcf: x.xml\n    urdf: y.urdf\n";
        let err = Config::from_yaml(text, "c.yaml", Path::new("."), &[]).unwrap_err();
        assert_eq!(err.location.as_deref(), Some("robots[0]"));
    }
}
