//! Spawning: a model from a file (`uri`) or a text, URDF, xacro or MJCF, or a robot section of
//! a config file, becomes one more robot of the world's config, placed at its initial pose.
//! Every request is checked before anything is built; a model that fails to load is
//! reported with the kind of failure (the standard's result codes) and its message.
use crate::config::{Config, RobotConfig};
use crate::error::InputError;
use crate::model::urdf::PackageResolver;
use crate::sim::{ChangeError, Changed, SimHandle};
use std::path::{Path, PathBuf};

/// Where the model comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum SpawnSource {
    /// A path, `file://` or `package://` URI.
    Uri(String),
    /// The model's text.
    Text(String),
}

/// What can be spawned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFormat {
    Mjcf,
    Urdf,
    Xacro,
    /// A config file: its first robot, with its control, ROS and camera sections.
    Config,
}

impl ModelFormat {
    /// Every format, as `GetSimulatorFeatures.spawn_formats` lists them.
    pub const ALL: [ModelFormat; 4] = [Self::Mjcf, Self::Urdf, Self::Xacro, Self::Config];

    pub fn name(self) -> &'static str {
        match self {
            Self::Mjcf => "mjcf",
            Self::Urdf => "urdf",
            Self::Xacro => "xacro",
            Self::Config => "yaml",
        }
    }

    /// The format of a file, by its extension.
    pub fn of_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        if name.ends_with(".urdf.xacro") || name.ends_with(".xacro") {
            Some(Self::Xacro)
        } else if name.ends_with(".urdf") {
            Some(Self::Urdf)
        } else if name.ends_with(".xml") || name.ends_with(".mjcf") {
            Some(Self::Mjcf)
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            Some(Self::Config)
        } else {
            None
        }
    }

    /// The format of a model text, by its root element.
    pub fn of_text(text: &str) -> Option<Self> {
        let root = crate::model::xml::parse(text).ok()?;
        match root.name.as_str() {
            "mujoco" => Some(Self::Mjcf),
            "robot" if text.contains("xmlns:xacro") || text.contains("<xacro:") => {
                Some(Self::Xacro)
            }
            "robot" => Some(Self::Urdf),
            _ => None,
        }
    }
}

/// A spawn as the standard asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SpawnRequest {
    /// Empty: the model's own name (URDF `robot name`, MJCF `model`) or the file's stem.
    pub name: String,
    /// A name already taken gets a suffix (`_2`, `_3`, ...) instead of being refused.
    pub allow_renaming: bool,
    pub source: SpawnSource,
    /// Where the entity's topics and actions go (empty: under its name).
    pub namespace: String,
    /// The frame of the pose: empty or `world`.
    pub frame: String,
    pub position: [f64; 3],
    /// ROS order (x, y, z, w).
    pub orientation_xyzw: [f64; 4],
}

/// Why a spawn did not happen, by the standard's result kinds. The running world is
/// untouched in every case.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpawnError {
    #[error("{0}")]
    NoResource(String),
    #[error("name '{0}' is taken; pick another or allow renaming")]
    NameNotUnique(String),
    #[error("{0}")]
    NameInvalid(String),
    #[error("namespace '{0}' is not a valid ROS namespace (letters, digits, '_' and '/')")]
    NamespaceInvalid(String),
    #[error("{0}")]
    UnsupportedFormat(String),
    #[error("{0}")]
    ParseError(String),
    #[error("{0}")]
    MissingAssets(String),
    #[error("{0}")]
    InvalidPose(String),
    /// The world could not change for another reason (a recording runs, a config rule).
    #[error("{0}")]
    Failed(String),
}

/// A name the world accepts: it becomes an element prefix, a ROS namespace and a legacy
/// articulation name.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn valid_namespace(namespace: &str) -> bool {
    namespace.trim_matches('/').split('/').all(|part| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A model text a request brings, within the size and nesting limits of `world`.
fn checked_text(text: &str, world: &Config, what: &str) -> Result<(), SpawnError> {
    let limit = world.limits.resource_bytes;
    if text.len() as u64 > limit {
        return Err(SpawnError::ParseError(format!(
            "{what} holds {} bytes, more than limits.resource_bytes ({limit})",
            text.len()
        )));
    }
    crate::model::xml::parse_limited(text, world.limits.xml_depth)
        .map(drop)
        .map_err(|e| SpawnError::ParseError(format!("{what}: {e}")))
}

/// The path a URI names: `file://`, `package://` (found as ROS tools find packages) or a
/// plain path, taken as written (no environment substitution).
fn resolve_uri(uri: &str) -> Result<PathBuf, SpawnError> {
    if uri.starts_with("package://") || uri.starts_with("file://") {
        let cwd = std::env::current_dir().unwrap_or_default();
        return PackageResolver::default()
            .resolve_uri(uri, &cwd)
            .map(|resolved| resolved.path)
            .map_err(|e| SpawnError::NoResource(format!("uri '{uri}': {e}")));
    }
    if let Some((scheme, _)) = uri.split_once("://") {
        return Err(SpawnError::UnsupportedFormat(format!(
            "uri '{uri}': the '{scheme}://' scheme is not supported (a path, file:// or package://)"
        )));
    }
    Ok(PathBuf::from(uri))
}

/// The robot a config file describes first, with its paths made absolute.
fn robot_of_config(path: &Path) -> Result<RobotConfig, SpawnError> {
    let config = Config::load(path, &[]).map_err(|e| SpawnError::ParseError(e.to_string()))?;
    let mut robot = config.robots.into_iter().next().ok_or_else(|| {
        SpawnError::ParseError(format!("{}: the config has no robot", path.display()))
    })?;
    let absolute = |raw: &Option<String>, field: &str| -> Result<Option<String>, SpawnError> {
        raw.as_ref()
            .map(|p| {
                crate::config::expand_path(p, &config.base_dir)
                    .map(|p| p.display().to_string())
                    .map_err(|m| {
                        SpawnError::NoResource(format!(
                            "{}: robots[0].{field}: {m}",
                            path.display()
                        ))
                    })
            })
            .transpose()
    };
    robot.mjcf = absolute(&robot.mjcf, "mjcf")?;
    robot.urdf = absolute(&robot.urdf, "urdf")?;
    robot.base_dir = absolute(
        &robot
            .base_dir
            .clone()
            .or_else(|| Some(config.base_dir.display().to_string())),
        "base_dir",
    )?;
    Ok(robot)
}

/// A robot config holding only a model (every other section at its defaults).
fn bare_robot(name: &str, model_key: &str, model: &str) -> Result<RobotConfig, SpawnError> {
    let mut fields = serde_json::Map::new();
    fields.insert("name".into(), name.into());
    fields.insert(model_key.into(), model.into());
    serde_json::from_value(serde_json::Value::Object(fields))
        .map_err(|e| SpawnError::Failed(format!("internal: {e}")))
}

/// The model's own name: URDF `<robot name>`, MJCF `<mujoco model>`.
fn own_name(text: &str) -> Option<String> {
    let root = crate::model::xml::parse(text).ok()?;
    let key = if root.name == "mujoco" {
        "model"
    } else {
        "name"
    };
    let name: String = root
        .attr(key)?
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    valid_name(&name).then_some(name)
}

/// Classifies a model that did not load: a file it needs is missing, or it does not parse.
fn load_failure(error: InputError, source: &SpawnSource) -> SpawnError {
    // A text has no file to name: its messages would name the world config's new entry.
    let text = match source {
        SpawnSource::Text(_) => format!("resource_string: {}", error.message),
        SpawnSource::Uri(_) => error.to_string(),
    };
    let lower = text.to_ascii_lowercase();
    // MuJoCo says "resource not found" / "could not open file" for a mesh, texture or
    // included file; the URDF reader says "does not exist" for a mesh it cannot find.
    let missing = [
        "resource not found",
        "could not open",
        "error opening file",
        "does not exist",
        "no such file",
    ]
    .iter()
    .any(|m| lower.contains(m));
    if missing {
        SpawnError::MissingAssets(text)
    } else {
        SpawnError::ParseError(text)
    }
}

/// Checks and turns a request into the robot config it adds, named uniquely in `world`.
fn robot_config(request: &SpawnRequest, world: &Config) -> Result<RobotConfig, SpawnError> {
    let (format, mut robot, model_text) = match &request.source {
        SpawnSource::Uri(uri) if !uri.is_empty() => robot_from_uri(uri, world)?,
        SpawnSource::Text(text) if !text.trim().is_empty() => robot_from_text(text, world)?,
        _ => {
            return Err(SpawnError::NoResource(
                "both uri and resource_string are empty".into(),
            ));
        }
    };
    let wanted = wanted_name(request, format, &robot, model_text.as_ref())?;
    if world.robots.len() >= world.limits.robots {
        return Err(SpawnError::Failed(format!(
            "the world holds {} robots and objects, limits.robots",
            world.robots.len()
        )));
    }
    let taken = |name: &str| world.robots.iter().any(|r| r.name == name);
    let name = if !taken(&wanted) {
        wanted
    } else if request.allow_renaming {
        (2..)
            .map(|k| format!("{wanted}_{k}"))
            .find(|n| !taken(n))
            .unwrap_or_default()
    } else {
        return Err(SpawnError::NameNotUnique(wanted));
    };
    if !request.namespace.is_empty() {
        if !valid_namespace(&request.namespace) {
            return Err(SpawnError::NamespaceInvalid(request.namespace.clone()));
        }
        robot.ros.namespace = Some(request.namespace.trim_matches('/').to_string());
    }
    robot.name = name;
    robot.pose = pose(request, world.limits.world_bound)?;
    Ok(robot)
}

/// A spawn's model as read: its format, the robot it makes, and its text with the file's
/// stem (None for a config, whose robot names itself).
type SpawnModel = (ModelFormat, RobotConfig, Option<(String, String)>);

/// A model by its `uri`, read as `world`'s file access allows.
fn robot_from_uri(uri: &str, world: &Config) -> Result<SpawnModel, SpawnError> {
    let path = resolve_uri(uri)?;
    let format = ModelFormat::of_path(&path).ok_or_else(|| {
        SpawnError::UnsupportedFormat(format!(
            "uri '{uri}': unknown file type; spawnable: .xml/.mjcf (MJCF), .urdf, \
             .xacro, .yaml (a config's first robot)"
        ))
    })?;
    if !path.is_file() {
        return Err(SpawnError::NoResource(format!(
            "uri '{uri}': no such file ({})",
            path.display()
        )));
    }
    let access = crate::config::FileAccess::of(world);
    let absolute = access
        .file(&path)
        .map_err(|e| SpawnError::NoResource(format!("uri '{uri}': {e}")))?;
    let shown = absolute.display().to_string();
    let text = match format {
        ModelFormat::Mjcf | ModelFormat::Urdf => access
            .read_text(&absolute)
            .map_err(|e| SpawnError::NoResource(e.to_string()))?,
        _ => String::new(),
    };
    if matches!(format, ModelFormat::Mjcf | ModelFormat::Urdf) {
        checked_text(&text, world, &shown)?;
    }
    let robot = match format {
        ModelFormat::Mjcf => bare_robot("", "mjcf", &shown)?,
        ModelFormat::Urdf | ModelFormat::Xacro => bare_robot("", "urdf", &shown)?,
        ModelFormat::Config => robot_of_config(&absolute)?,
    };
    let stem = super::file_stem(&absolute);
    Ok((format, robot, Some((text, stem))))
}

/// A model given as text (MJCF or URDF), whose paths are checked before its files are read.
fn robot_from_text(text: &str, world: &Config) -> Result<SpawnModel, SpawnError> {
    checked_text(text, world, "resource_string")?;
    let format = ModelFormat::of_text(text).ok_or_else(|| {
        SpawnError::UnsupportedFormat(
            "resource_string: not MJCF (<mujoco>) nor URDF (<robot>)".into(),
        )
    })?;
    let key = match format {
        ModelFormat::Mjcf => "mjcf_string",
        ModelFormat::Urdf => "urdf_string",
        _ => {
            return Err(SpawnError::UnsupportedFormat(
                "resource_string: xacro text is not supported; spawn the .xacro file by \
                 its uri"
                    .into(),
            ));
        }
    };
    let mut robot = bare_robot("", key, text)?;
    // Its paths are taken as written and its files checked before they are read.
    robot.from_request = true;
    Ok((format, robot, Some((text.to_string(), String::new()))))
}

/// The name: asked for, else the model's own (a config's robot name, URDF `robot name`, MJCF
/// `model`), else one made from the file's name when renaming is allowed; checked.
fn wanted_name(
    request: &SpawnRequest,
    format: ModelFormat,
    robot: &RobotConfig,
    model_text: Option<&(String, String)>,
) -> Result<String, SpawnError> {
    let (own, stem) = match (model_text, format) {
        (_, ModelFormat::Config) => (Some(robot.name.clone()).filter(|n| valid_name(n)), None),
        (Some((text, stem)), _) => {
            let stem: String = stem
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            (own_name(text), valid_name(&stem).then_some(stem))
        }
        (None, _) => (None, None),
    };
    let wanted = match (request.name.is_empty(), own) {
        (false, _) => request.name.clone(),
        (true, Some(own)) => own,
        (true, None) if request.allow_renaming => stem.unwrap_or_else(|| "entity".into()),
        (true, None) => {
            return Err(SpawnError::NameInvalid(
                "the name is empty and the model names itself nowhere (allow renaming for a \
                 made-up name)"
                    .into(),
            ));
        }
    };
    if !valid_name(&wanted) {
        return Err(SpawnError::NameInvalid(format!(
            "name '{wanted}' must start with a letter and hold only letters, digits and '_'"
        )));
    }
    Ok(wanted)
}

/// The request's pose as a placement, checked.
fn pose(request: &SpawnRequest, world_bound: f64) -> Result<crate::config::PoseConfig, SpawnError> {
    if !(request.frame.is_empty() || request.frame == "world") {
        return Err(SpawnError::InvalidPose(format!(
            "initial_pose: frame '{}' is not known; poses are in 'world'",
            request.frame
        )));
    }
    let [x, y, z, w] = request.orientation_xyzw;
    let values = request.position.iter().chain(&request.orientation_xyzw);
    if values.clone().any(|v| !v.is_finite()) {
        return Err(SpawnError::InvalidPose(
            "initial_pose: NaN or infinite value".into(),
        ));
    }
    let [px, py, pz] = request.position;
    let distance = (px * px + py * py + pz * pz).sqrt();
    if distance > world_bound {
        return Err(SpawnError::InvalidPose(format!(
            "initial_pose: {distance:.6e} m from the origin, beyond limits.world_bound \
             ({world_bound} m)"
        )));
    }
    let norm = (x * x + y * y + z * z + w * w).sqrt();
    // An all-zero quaternion is what a message left unset carries: the identity.
    let rotation = if norm == 0.0 {
        nalgebra::UnitQuaternion::identity()
    } else if (norm - 1.0).abs() > 1e-3 {
        return Err(SpawnError::InvalidPose(format!(
            "initial_pose: the orientation quaternion has norm {norm:.6}, not 1"
        )));
    } else {
        nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(w, x, y, z))
    };
    let (roll, pitch, yaw) = rotation.euler_angles();
    Ok(crate::config::PoseConfig {
        xyz: request.position,
        rpy: [roll, pitch, yaw],
    })
}

/// Spawns what `request` describes into the running world and returns the entity's name.
pub fn spawn(handle: &SimHandle, request: &SpawnRequest) -> Result<(String, Changed), SpawnError> {
    let edit = handle.edit_world();
    let robot = robot_config(request, &edit.world.config)?;
    let name = robot.name.clone();
    let mut config = edit.world.config.clone();
    config.robots.push(robot);
    config.spawned.push(name.clone());
    let changed = edit
        .change(config, false, super::check)
        .map_err(|e| match e {
            ChangeError::Input(e) => load_failure(e, &request.source),
            other => SpawnError::Failed(other.to_string()),
        })?;
    Ok((name, changed))
}

/// Spawns several entities in one world change (one build, one swap); when that fails, each
/// alone, so every request gets its own result.
pub fn spawn_all(handle: &SimHandle, requests: &[SpawnRequest]) -> Vec<Result<String, SpawnError>> {
    let edit = handle.edit_world();
    let mut config = edit.world.config.clone();
    let mut results = Vec::with_capacity(requests.len());
    for request in requests {
        let result = robot_config(request, &config).map(|robot| {
            let name = robot.name.clone();
            config.robots.push(robot);
            config.spawned.push(name.clone());
            name
        });
        results.push(result);
    }
    let spawned = results.iter().filter(|r| r.is_ok()).count();
    if spawned == 0 {
        return results;
    }
    if spawned > 1 && handle.change_world(config, false, super::check).is_ok() {
        return results;
    }
    requests
        .iter()
        .zip(results)
        .map(|(request, checked)| {
            checked.and_then(|_| spawn(handle, request).map(|(name, _)| name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(source: SpawnSource) -> SpawnRequest {
        SpawnRequest {
            name: "box".into(),
            allow_renaming: false,
            source,
            namespace: String::new(),
            frame: String::new(),
            position: [0.0; 3],
            orientation_xyzw: [0.0, 0.0, 0.0, 1.0],
        }
    }

    const BOX: &str = "<mujoco model='crate'><worldbody><body><freejoint/>\
                       <geom type='box' size='.1 .1 .1'/></body></worldbody></mujoco>";

    fn world() -> Config {
        Config::embedded_default(&[]).unwrap()
    }

    #[test]
    fn formats_names_and_poses_are_checked_before_anything_loads() {
        let world = world();
        let text = SpawnSource::Text(BOX.into());
        assert_eq!(
            robot_config(&request(SpawnSource::Text(String::new())), &world).err(),
            Some(SpawnError::NoResource(
                "both uri and resource_string are empty".into()
            ))
        );
        let mut r = request(text.clone());
        r.name = "mobile".into();
        assert_eq!(
            robot_config(&r, &world).err(),
            Some(SpawnError::NameNotUnique("mobile".into()))
        );
        r.allow_renaming = true;
        assert_eq!(robot_config(&r, &world).unwrap().name, "mobile_2");
        r.name = "2fast".into();
        assert!(matches!(
            robot_config(&r, &world),
            Err(SpawnError::NameInvalid(_))
        ));
        r.name = String::new();
        r.allow_renaming = false;
        assert_eq!(robot_config(&r, &world).unwrap().name, "crate");
        let mut nameless = request(SpawnSource::Text(BOX.replace(" model='crate'", "")));
        nameless.name = String::new();
        assert!(matches!(
            robot_config(&nameless, &world),
            Err(SpawnError::NameInvalid(_))
        ));
        nameless.allow_renaming = true;
        assert_eq!(robot_config(&nameless, &world).unwrap().name, "entity");
        let mut r = request(text.clone());
        r.orientation_xyzw = [0.0, 0.0, 0.5, 0.5];
        assert!(matches!(
            robot_config(&r, &world),
            Err(SpawnError::InvalidPose(_))
        ));
        r.orientation_xyzw = [0.0, 0.0, f64::NAN, 1.0];
        assert!(matches!(
            robot_config(&r, &world),
            Err(SpawnError::InvalidPose(_))
        ));
        let mut r = request(text);
        r.namespace = "bad ns".into();
        assert!(matches!(
            robot_config(&r, &world),
            Err(SpawnError::NamespaceInvalid(_))
        ));
        let r = request(SpawnSource::Text("<sdf version='1.9'/>".into()));
        assert!(matches!(
            robot_config(&r, &world),
            Err(SpawnError::UnsupportedFormat(_))
        ));
        let r = request(SpawnSource::Text("<mujoco><worldbody>".into()));
        assert!(matches!(
            robot_config(&r, &world),
            Err(SpawnError::ParseError(_))
        ));
        let r = request(SpawnSource::Uri("/nonexistent/thing.urdf".into()));
        assert!(matches!(
            robot_config(&r, &world),
            Err(SpawnError::NoResource(_))
        ));
        let r = request(SpawnSource::Uri("http://example.com/a.urdf".into()));
        assert!(matches!(
            robot_config(&r, &world),
            Err(SpawnError::UnsupportedFormat(_))
        ));
    }

    #[test]
    fn a_pose_becomes_the_placement() {
        let mut r = request(SpawnSource::Text(BOX.into()));
        r.position = [1.0, 2.0, 0.5];
        let half = std::f64::consts::FRAC_1_SQRT_2;
        r.orientation_xyzw = [0.0, 0.0, half, half];
        let robot = robot_config(&r, &world()).unwrap();
        assert_eq!(robot.pose.xyz, [1.0, 2.0, 0.5]);
        assert!((robot.pose.rpy[2] - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!(robot.mjcf_string.as_deref(), Some(BOX));
    }
}
