//! Path expansion for config values: `${VAR}` from the environment, `~`, and relative paths
//! against the config's folder. `${MUJOCO_BRIDGE_MODELS}` defaults to the folder where
//! `scripts/fetch-models.sh` puts the registry models.
use std::path::{Path, PathBuf};

/// The folder of the robot models fetched from the package registries.
pub fn models_dir() -> PathBuf {
    match std::env::var_os("MUJOCO_BRIDGE_MODELS") {
        Some(dir) => PathBuf::from(dir),
        None => crate::source_root().join(".deps/models"),
    }
}

/// The folder of the configs this package ships: `MUJOCO_BRIDGE_CONFIG_DIR`, else
/// `share/mujoco_bridge/config` of the install prefix the binary runs from (colcon), else
/// the source tree's `config/`.
pub fn config_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MUJOCO_BRIDGE_CONFIG_DIR") {
        return PathBuf::from(dir);
    }
    let installed = std::env::current_exe().ok().and_then(|exe| {
        // <prefix>/lib/mujoco_bridge/mujoco_bridge
        let prefix = exe.parent()?.parent()?.parent()?;
        let dir = prefix.join("share/mujoco_bridge/config");
        dir.is_dir().then_some(dir)
    });
    installed.unwrap_or_else(|| crate::source_root().join("config"))
}

/// A path of the config that cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("unclosed '${{' in path '{0}'")]
    Unclosed(String),
    #[error("environment variable '{variable}' in path '{path}' is not set")]
    Unset { variable: String, path: String },
}

pub fn expand_path(raw: &str, base_dir: &Path) -> Result<PathBuf, PathError> {
    let mut out = String::new();
    let mut rest = raw;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| PathError::Unclosed(raw.to_string()))?;
        let var = &after[..end];
        let value = match std::env::var(var) {
            Ok(v) => v,
            Err(_) if var == "MUJOCO_BRIDGE_MODELS" => models_dir().display().to_string(),
            Err(_) => {
                return Err(PathError::Unset {
                    variable: var.to_string(),
                    path: raw.to_string(),
                });
            }
        };
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if let Some(home_rel) = out.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        out = Path::new(&home).join(home_rel).display().to_string();
    }
    Ok(against(PathBuf::from(out), base_dir))
}

/// `path` itself when absolute, else `base_dir/path`.
pub fn against(path: PathBuf, base_dir: &Path) -> PathBuf {
    if path.is_absolute() {
        path
    } else {
        base_dir.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_variables_and_relative_paths() {
        // SAFETY: tests in this module are the only users of this variable.
        unsafe { std::env::set_var("MB_TEST_DIR", "/opt/x") };
        assert_eq!(
            expand_path("${MB_TEST_DIR}/a.xml", Path::new("/cfg")).unwrap(),
            PathBuf::from("/opt/x/a.xml")
        );
        assert_eq!(
            expand_path("a.xml", Path::new("/cfg")).unwrap(),
            PathBuf::from("/cfg/a.xml")
        );
        assert_eq!(
            expand_path("${MB_UNSET_VAR_X}/a", Path::new("/")).unwrap_err(),
            PathError::Unset {
                variable: "MB_UNSET_VAR_X".into(),
                path: "${MB_UNSET_VAR_X}/a".into()
            }
        );
    }
}
