//! Resolution of `package://NAME/...` and `file://...` URIs in URDF files, in the order a ROS
//! user expects: the robot config's explicit packages, its search paths, then
//! AMENT_PREFIX_PATH (`<prefix>/share/NAME`) and ROS_PACKAGE_PATH.
use crate::config::against;
use indexmap::IndexMap;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct PackageResolver {
    /// Package name -> folder, from the robot config.
    pub explicit: IndexMap<String, PathBuf>,
    /// Folders searched like ROS_PACKAGE_PATH entries, from the robot config.
    pub search_paths: Vec<PathBuf>,
    /// Candidate folders by package name: a robot names the same package for every mesh,
    /// and crawling is file-system work.
    found: RefCell<HashMap<String, Vec<PathBuf>>>,
}

fn env_paths(var: &str) -> Vec<PathBuf> {
    std::env::var(var)
        .map(|v| {
            v.split(':')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The `<name>` in a package.xml, read without a full parser (it is a one-line element).
fn package_xml_name(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("package.xml")).ok()?;
    let start = text.find("<name>")? + "<name>".len();
    let end = start + text[start..].find("</name>")?;
    Some(text[start..end].trim().to_string())
}

/// Folders under `root` that are package `name`, nearest first, as ROS_PACKAGE_PATH crawling
/// finds them: a folder whose package.xml names it, or a folder of that name. Hidden folders
/// are skipped and the walk is bounded.
fn crawl(root: &Path, name: &str) -> Vec<PathBuf> {
    const MAX_DEPTH: usize = 6;
    const MAX_FOLDERS: usize = 20_000;
    let mut found = Vec::new();
    let mut level = vec![root.to_path_buf()];
    let mut visited = 0;
    for depth in 0..=MAX_DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            let named = depth > 0 && dir.file_name().is_some_and(|f| f == name);
            if named || package_xml_name(dir).as_deref() == Some(name) {
                found.push(dir.clone());
            }
            visited += 1;
            if visited > MAX_FOLDERS {
                return found;
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut children: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.is_dir()
                        && !p
                            .file_name()
                            .is_some_and(|f| f.to_string_lossy().starts_with('.'))
                })
                .collect();
            children.sort();
            next.extend(children);
        }
        level = next;
    }
    found
}

/// A `package://` name found on no path and beside no file of the URDF.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown package '{name}': not in the robot config's packages, nor under \
     package_search_paths {search_paths:?}, AMENT_PREFIX_PATH {ament_prefix_path:?} or \
     ROS_PACKAGE_PATH {ros_package_path:?}"
)]
pub struct UnknownPackage {
    pub name: String,
    pub search_paths: Vec<PathBuf>,
    pub ament_prefix_path: Vec<PathBuf>,
    pub ros_package_path: Vec<PathBuf>,
}

/// A mesh or file URI that names no file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    #[error("'{0}' names no package")]
    NoPackage(String),
    #[error("'{uri}': the '{scheme}://' scheme is not supported (package:// and file:// are)")]
    Scheme { uri: String, scheme: String },
    #[error("{0}")]
    Unknown(UnknownPackage),
}

impl PackageResolver {
    /// Every folder that may be package `name`, in the order a ROS user expects: the config's
    /// packages, its search paths, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH.
    fn candidates(&self, name: &str) -> Vec<PathBuf> {
        if let Some(known) = self.found.borrow().get(name) {
            return known.clone();
        }
        let out = self.search(name);
        self.found
            .borrow_mut()
            .insert(name.to_string(), out.clone());
        out
    }

    fn search(&self, name: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(dir) = self.explicit.get(name) {
            out.push(dir.clone());
        }
        for root in &self.search_paths {
            out.extend(crawl(root, name));
        }
        for prefix in env_paths("AMENT_PREFIX_PATH") {
            let share = prefix.join("share").join(name);
            if share.is_dir() {
                out.push(share);
            }
        }
        for root in env_paths("ROS_PACKAGE_PATH") {
            out.extend(crawl(&root, name));
        }
        out
    }

    pub fn find_package(&self, name: &str) -> Result<PathBuf, UnknownPackage> {
        self.candidates(name)
            .into_iter()
            .next()
            .ok_or_else(|| self.unknown(name))
    }

    fn unknown(&self, name: &str) -> UnknownPackage {
        UnknownPackage {
            name: name.to_string(),
            search_paths: self.search_paths.clone(),
            ament_prefix_path: env_paths("AMENT_PREFIX_PATH"),
            ros_package_path: env_paths("ROS_PACKAGE_PATH"),
        }
    }

    /// Turns a URDF filename into a path: `package://`, `file://`, absolute, or relative to
    /// `base_dir`. A package that is on no path but whose file sits beside the URDF (in
    /// `base_dir` or a parent, directly or under a folder named after the package) is found
    /// there, as PyBullet and many tools resolve it (`Resolved::beside`); `package:///NAME`
    /// (three slashes) is repaired to `package://NAME`.
    pub fn resolve_uri(&self, uri: &str, base_dir: &Path) -> Result<Resolved, UriError> {
        let plain = |path| Resolved {
            path,
            repair: None,
            beside: None,
        };
        if let Some(rest) = uri.strip_prefix("package://") {
            let mut repair = None;
            let trimmed = rest.trim_start_matches('/');
            if trimmed.len() != rest.len() {
                repair = Some(format!("'{uri}' read as 'package://{trimmed}'"));
            }
            let (package, relative) = trimmed.split_once('/').unwrap_or((trimmed, ""));
            if package.is_empty() {
                return Err(UriError::NoPackage(uri.to_string()));
            }
            // Of several folders with the package's name, the one that holds the file; then
            // the file beside the URDF; else the first folder (the caller names the missing
            // file).
            let candidates = self.candidates(package);
            if let Some(dir) = candidates.iter().find(|d| d.join(relative).exists()) {
                return Ok(Resolved {
                    path: dir.join(relative),
                    repair,
                    beside: None,
                });
            }
            // `package://mesh.obj` (no package at all) names a file beside the URDF.
            let in_package = |dir: &Path| match relative {
                "" => dir.join(package),
                _ => dir.join(package).join(relative),
            };
            let beside = base_dir.ancestors().take(8).find_map(|dir| {
                [dir.join(relative), in_package(dir)]
                    .into_iter()
                    .find(|p| p.is_file())
            });
            return match (beside, candidates.first()) {
                (Some(path), _) => {
                    let note = format!(
                        "package '{package}' holds no '{relative}' on any package path; \
                         '{uri}' found beside the URDF at '{}'",
                        path.display()
                    );
                    Ok(Resolved {
                        path,
                        repair,
                        beside: Some(note),
                    })
                }
                (None, Some(dir)) => Ok(Resolved {
                    path: dir.join(relative),
                    repair,
                    beside: None,
                }),
                (None, None) => Err(UriError::Unknown(self.unknown(package))),
            };
        }
        if let Some(rest) = uri.strip_prefix("file://") {
            return Ok(plain(against(PathBuf::from(rest), base_dir)));
        }
        if let Some((scheme, _)) = uri.split_once("://") {
            return Err(UriError::Scheme {
                uri: uri.to_string(),
                scheme: scheme.to_string(),
            });
        }
        Ok(plain(against(PathBuf::from(uri), base_dir)))
    }
}

/// Where a URDF filename points, and how it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub path: PathBuf,
    /// What was repaired in the name (`package:///NAME` read as `package://NAME`).
    pub repair: Option<String>,
    /// How the file was found beside the URDF, when its package is on no path.
    pub beside: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_explicit_and_searched_packages() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("ws/src/my_robot");
        std::fs::create_dir_all(pkg.join("meshes")).unwrap();
        std::fs::write(
            pkg.join("package.xml"),
            "<package><name>my_robot</name></package>",
        )
        .unwrap();
        let resolver = PackageResolver {
            explicit: [("other".to_string(), PathBuf::from("/opt/other"))]
                .into_iter()
                .collect(),
            search_paths: vec![dir.path().join("ws")],
            ..Default::default()
        };
        assert_eq!(
            resolver
                .resolve_uri("package://my_robot/meshes/a.stl", Path::new("/"))
                .unwrap()
                .path,
            pkg.join("meshes/a.stl")
        );
        assert_eq!(
            resolver
                .resolve_uri("package://other/x.obj", Path::new("/"))
                .unwrap()
                .path,
            PathBuf::from("/opt/other/x.obj")
        );
        assert_eq!(
            resolver
                .resolve_uri("file:///abs/m.stl", Path::new("/"))
                .unwrap()
                .path,
            PathBuf::from("/abs/m.stl")
        );
        assert_eq!(
            resolver
                .resolve_uri("m.stl", Path::new("/base"))
                .unwrap()
                .path,
            PathBuf::from("/base/m.stl")
        );
        let err = resolver
            .resolve_uri("package://nope/a.stl", Path::new("/"))
            .unwrap_err();
        assert!(err.to_string().contains("unknown package 'nope'"), "{err}");
        assert!(
            resolver
                .resolve_uri("http://x/a.stl", Path::new("/"))
                .is_err()
        );
        // Three slashes, and an unknown package whose files sit beside the URDF.
        let resolved = resolver
            .resolve_uri("package:///my_robot/meshes/a.stl", Path::new("/"))
            .unwrap();
        assert_eq!(resolved.path, pkg.join("meshes/a.stl"));
        assert!(
            resolved
                .repair
                .unwrap()
                .contains("read as 'package://my_robot/")
        );
        std::fs::write(pkg.join("meshes/a.stl"), "x").unwrap();
        let urdf_dir = pkg.join("urdf");
        std::fs::create_dir_all(&urdf_dir).unwrap();
        let resolved = resolver
            .resolve_uri("package://renamed_pkg/meshes/a.stl", &urdf_dir)
            .unwrap();
        assert_eq!(resolved.path, pkg.join("meshes/a.stl"));
        assert_eq!(resolved.repair, None, "found beside: not a repair");
        assert!(resolved.beside.unwrap().contains("on any package path"));
    }
}
