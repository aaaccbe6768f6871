//! `.xacro` robot files, expanded by the `xacro` program (the ROS tool, PyPI `xacro`) with
//! the config's arguments. Its `$(find pkg)` looks packages up in the ament index; the
//! packages the files name are resolved here like `package://` (config packages, search
//! paths, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH) and handed to xacro through a temporary
//! ament prefix, so no sourced ROS is needed.
use crate::model::urdf::PackageResolver;
use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether a model path names a xacro file.
pub fn is_xacro(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xacro"))
        || path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".urdf.xacro"))
}

/// The xacro program: `MUJOCO_BRIDGE_XACRO`, then `xacro` on PATH, then the one the set-up
/// scripts install into this checkout's `.deps/venv`.
fn program() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("MUJOCO_BRIDGE_XACRO") {
        return Some(PathBuf::from(path));
    }
    let on_path = std::env::var("PATH").ok().and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("xacro"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let installed = crate::source_root().join(".deps/venv/bin/xacro");
        installed.is_file().then_some(installed)
    })
}

/// Names in `$(find NAME)` in `text`.
fn found_packages(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("$(find ") {
        rest = &rest[at + "$(find ".len()..];
        if let Some(end) = rest.find(')') {
            names.push(rest[..end].trim().to_string());
        }
    }
    names
}

/// `filename="..."` values without substitutions: includes relative to the including file.
fn included_files(text: &str) -> Vec<String> {
    text.split("filename=")
        .skip(1)
        .filter_map(|rest| {
            let quote = rest.chars().next().filter(|q| *q == '"' || *q == '\'')?;
            let value = rest[1..].split(quote).next()?;
            (!value.contains("$(") && !value.contains("://") && value.ends_with("xacro"))
                .then(|| value.to_string())
        })
        .collect()
}

/// Every package the file and the files it includes through `$(find pkg)/...` name, resolved.
fn packages_named(path: &Path, resolver: &PackageResolver) -> BTreeMap<String, PathBuf> {
    let mut found = BTreeMap::new();
    let mut files = vec![path.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    while let Some(file) = files.pop() {
        if !seen.insert(file.clone()) || seen.len() > 200 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        // Files included by a relative path, resolved against the including file's folder.
        let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for relative in included_files(&text) {
            files.push(folder.join(relative));
        }
        for name in found_packages(&text) {
            if found.contains_key(&name) {
                continue;
            }
            if let Ok(dir) = resolver.find_package(&name) {
                // Follow the package's xacro files named in this one.
                let marker = format!("$(find {name})");
                let mut rest = text.as_str();
                while let Some(at) = rest.find(&marker) {
                    rest = &rest[at + marker.len()..];
                    let relative: String = rest
                        .chars()
                        .take_while(|c| !matches!(c, '"' | '\'' | ' ' | '<' | '>'))
                        .collect();
                    files.push(dir.join(relative.trim_start_matches('/')));
                }
                found.insert(name, dir);
            }
        }
    }
    found
}

/// Why a xacro file could not be expanded.
#[derive(Debug, thiserror::Error)]
pub enum XacroError {
    #[error(
        "cannot expand a .xacro file: the xacro program was not found (install it with \
         'pip install xacro', source a ROS 2 installation, or set MUJOCO_BRIDGE_XACRO)"
    )]
    NoProgram,
    #[error("cannot make a temporary ament prefix for xacro: {0}")]
    Prefix(std::io::Error),
    #[error("cannot run '{program}': {error}")]
    Run {
        program: PathBuf,
        error: std::io::Error,
    },
    #[error("xacro failed ({status}): {message}")]
    Failed {
        status: std::process::ExitStatus,
        message: String,
    },
    #[error("xacro wrote text that is not UTF-8")]
    NotUtf8,
}

/// Expands `path` and returns the URDF text.
pub fn expand(
    path: &Path,
    args: &IndexMap<String, String>,
    resolver: &PackageResolver,
) -> Result<String, XacroError> {
    let program = program().ok_or(XacroError::NoProgram)?;
    let prefix = tempfile::tempdir().map_err(XacroError::Prefix)?;
    let index = prefix
        .path()
        .join("share/ament_index/resource_index/packages");
    std::fs::create_dir_all(&index).map_err(XacroError::Prefix)?;
    for (name, dir) in packages_named(path, resolver) {
        let _ = std::fs::write(index.join(&name), "");
        let _ = std::os::unix::fs::symlink(&dir, prefix.path().join("share").join(&name));
    }
    let ament = match std::env::var("AMENT_PREFIX_PATH") {
        Ok(existing) if !existing.is_empty() => format!("{}:{existing}", prefix.path().display()),
        _ => prefix.path().display().to_string(),
    };
    let mut command = Command::new(&program);
    command.arg(path).env("AMENT_PREFIX_PATH", ament);
    for (name, value) in args {
        command.arg(format!("{name}:={value}"));
    }
    let output = command.output().map_err(|error| XacroError::Run {
        program: program.clone(),
        error,
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message: Vec<&str> = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        return Err(XacroError::Failed {
            status: output.status,
            message: message.join(" "),
        });
    }
    String::from_utf8(output.stdout).map_err(|_| XacroError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_package_names_and_xacro_paths() {
        assert_eq!(
            found_packages("<a f=\"$(find my_pkg)/urdf/x.xacro\"/> $(find other )"),
            ["my_pkg", "other"]
        );
        assert!(is_xacro(Path::new("/a/robot.urdf.xacro")));
        assert!(is_xacro(Path::new("robot.XACRO")));
        assert!(!is_xacro(Path::new("robot.urdf")));
    }
}
