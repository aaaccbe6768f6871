//! Worlds: the configs a user can load (the package's `config/` folder and the configured
//! search paths), loading one in place of the running world, and what can be spawned.
use super::spawn::ModelFormat;
use crate::config::{AccessError, Config, FileAccess, ModelKind};
use crate::error::InputError;
use crate::sim::{ChangeError, Changed, SimHandle};
use std::path::{Path, PathBuf};

/// A world config or a spawnable model on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub name: String,
    pub path: PathBuf,
    /// The file's first comment line (configs), or its format (models).
    pub description: String,
}

/// The folders searched: the package's configs, then `world.search_paths` of `config`, then
/// `extra` (a request's own sources: taken as written, and only folders requests may read).
fn folders(config: &Config, extra: &[String]) -> Result<Vec<PathBuf>, AccessError> {
    let mut folders = vec![crate::config::config_dir()];
    for raw in &config.world.search_paths {
        if let Ok(path) = crate::config::expand_path(raw, &config.base_dir) {
            folders.push(path);
        }
    }
    if !extra.is_empty() {
        let access = FileAccess::of(config);
        for raw in extra {
            let path = crate::config::against(PathBuf::from(raw), &config.base_dir);
            folders.push(access.folder(&path)?);
        }
    }
    Ok(folders)
}

/// The first `#` comment line of a config, without the mark.
fn first_comment(path: &Path, access: &FileAccess) -> String {
    access
        .read_text(path)
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix('#').map(|c| c.trim().to_string()))
        })
        .unwrap_or_default()
}

/// The files of `folder` that requests may read (a link that leads out is left out).
fn sorted_files(folder: &Path, access: &FileAccess) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| access.file(p).is_ok())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// A world config: a YAML file that is not a ROS parameters file.
fn is_world_config(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string());
    ModelFormat::of_path(path) == Some(ModelFormat::Config)
        && !name.is_some_and(|n| n.contains(".params."))
}

/// The world configs found, each once, in folder order.
pub fn available_worlds(config: &Config, extra: &[String]) -> Result<Vec<Listed>, AccessError> {
    let access = FileAccess::of(config);
    let mut worlds: Vec<Listed> = Vec::new();
    for folder in folders(config, extra)? {
        for path in sorted_files(&folder, &access) {
            if is_world_config(&path) && !worlds.iter().any(|w| w.path == path) {
                worlds.push(Listed {
                    name: super::file_stem(&path),
                    description: first_comment(&path, &access),
                    path,
                });
            }
        }
    }
    Ok(worlds)
}

/// What can be spawned: the robots of the world configs (spawned with their config
/// sections), and the MJCF, URDF and xacro files of the search paths.
pub fn spawnables(config: &Config, extra: &[String]) -> Result<Vec<Listed>, AccessError> {
    let mut found = available_worlds(config, extra)?;
    let access = FileAccess::of(config);
    for folder in folders(config, extra)?.into_iter().skip(1) {
        for path in sorted_files(&folder, &access) {
            if let Some(format) = ModelFormat::of_path(&path)
                && format != ModelFormat::Config
            {
                found.push(Listed {
                    name: super::file_stem(&path),
                    description: format!("{} model", format.name()),
                    path,
                });
            }
        }
    }
    Ok(found)
}

/// Why a world did not load.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("both uri and resource_string are empty")]
    NoResource,
    #[error("{0}")]
    UnsupportedFormat(String),
    #[error("{0}")]
    Parse(InputError),
    #[error("{0}")]
    Change(ChangeError),
    #[error("no world is loaded")]
    NoWorld,
    /// The file named is not one requests may read.
    #[error("{0}")]
    Access(String),
    /// World changes over the network are turned off.
    #[error("{0}")]
    TurnedOff(String),
}

/// A world from a file (a config, or a model as `--mjcf` / `--urdf` would load it) or a
/// config's YAML text, as a request names it in the world `running`: the file must be one
/// requests may read; a text's robots are taken as a request's (paths as written, files
/// checked). The node's request settings (`limits`, `requests`, `world.search_paths`) stay
/// those of the running world.
fn world_config(uri: &str, text: &str, running: &Config) -> Result<Config, LoadError> {
    let mut config = if uri.is_empty() {
        if text.trim().is_empty() {
            return Err(LoadError::NoResource);
        }
        let limit = running.limits.resource_bytes;
        if text.len() as u64 > limit {
            return Err(LoadError::Parse(InputError::new(
                "<resource_string>",
                format!(
                    "{} bytes, more than limits.resource_bytes ({limit})",
                    text.len()
                ),
            )));
        }
        let mut config = Config::from_yaml(text, "<resource_string>", &running.base_dir, &[])
            .map_err(LoadError::Parse)?;
        for robot in &mut config.robots {
            robot.from_request = true;
        }
        config
    } else {
        let path = PathBuf::from(uri.strip_prefix("file://").unwrap_or(uri));
        let format = ModelFormat::of_path(&path).ok_or_else(|| {
            LoadError::UnsupportedFormat(format!(
                "'{uri}': a world is a config (.yaml) or a model (.xml, .urdf, .xacro)"
            ))
        })?;
        let path = FileAccess::of(running)
            .file(&crate::config::against(path, &running.base_dir))
            .map_err(|e| LoadError::Access(format!("uri '{uri}': {e}")))?;
        match format {
            ModelFormat::Config => Config::load(&path, &[]),
            ModelFormat::Mjcf => Config::single_model(ModelKind::Mjcf, &path, &[]),
            ModelFormat::Urdf | ModelFormat::Xacro => {
                Config::single_model(ModelKind::Urdf, &path, &[])
            }
        }
        .map_err(LoadError::Parse)?
    };
    config.limits = running.limits.clone();
    config.requests = running.requests.clone();
    config.world.search_paths = running.world.search_paths.clone();
    Ok(config)
}

/// Replaces the running world with another and leaves the simulation paused, as the
/// standard asks. Nothing of the old world carries over but the node's settings.
pub fn load_world(handle: &SimHandle, uri: &str, text: &str) -> Result<Changed, LoadError> {
    let config = world_config(uri, text, &handle.world().config)?;
    handle
        .pause()
        .map_err(|e| LoadError::Change(ChangeError::Refused(e)))?;
    handle
        .change_world(config, true, super::check)
        .map_err(|e| match e {
            ChangeError::Input(e) => LoadError::Parse(e),
            other => LoadError::Change(other),
        })
}

/// What the world config of an unloaded world is called.
pub const NO_WORLD: &str = "<no world>";

/// Whether `config` is the empty world `unload_world` leaves.
pub fn is_unloaded(config: &Config) -> bool {
    config.origin == NO_WORLD && config.robots.is_empty()
}

/// Removes everything: an empty world (no robot, no floor), paused, until a world is loaded
/// or something is spawned. The node's settings stay.
pub fn unload_world(handle: &SimHandle) -> Result<Changed, LoadError> {
    let edit = handle.edit_world();
    let current = edit.world.clone();
    if is_unloaded(&current.config) {
        return Err(LoadError::NoWorld);
    }
    let mut config = current.config.clone();
    config.robots.clear();
    config.spawned.clear();
    config.world.floor = false;
    config.world.timestep = Some(current.model.opt().timestep);
    config.origin = NO_WORLD.to_string();
    handle
        .pause()
        .map_err(|e| LoadError::Change(ChangeError::Refused(e)))?;
    edit.change(config, true, super::check)
        .map_err(LoadError::Change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_configs_are_worlds_and_parameter_files_are_not() {
        let config = Config::embedded_default(&[]).unwrap();
        let names: Vec<String> = available_worlds(&config, &[])
            .unwrap()
            .into_iter()
            .map(|w| w.name)
            .collect();
        for name in ["default", "go1", "panda"] {
            assert!(names.contains(&name.to_string()), "{names:?}");
        }
        assert_eq!(names.iter().filter(|n| *n == "panda").count(), 1);
    }

    #[test]
    fn a_world_comes_from_a_config_or_a_model() {
        let running = Config::embedded_default(&[]).unwrap();
        assert!(matches!(
            world_config("", " ", &running),
            Err(LoadError::NoResource)
        ));
        assert!(matches!(
            world_config("/tmp/world.sdf", "", &running),
            Err(LoadError::UnsupportedFormat(_))
        ));
        // Files outside the roots, and environment variables, are not a request's.
        assert!(matches!(
            world_config("/etc/passwd.yaml", "", &running),
            Err(LoadError::Access(_))
        ));
        let named = world_config("${HOME}/world.yaml", "", &running).unwrap_err();
        assert!(named.to_string().contains("${HOME}"), "{named}");
        let config = world_config(
            "",
            "robots:\n  - name: ball\n    mjcf_string: \"<mujoco><worldbody><body>\
             <freejoint/><geom size='.1'/></body></worldbody></mujoco>\"\n",
            &running,
        )
        .unwrap();
        assert_eq!(config.robots[0].name, "ball");
        assert!(config.robots[0].from_request);
    }
}
