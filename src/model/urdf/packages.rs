//! Resolution of `package://NAME/...` and `file://...` URIs in URDF files, in the order a ROS
//! user expects: the robot config's explicit packages, its search paths, then
//! AMENT_PREFIX_PATH (`<prefix>/share/NAME`) and ROS_PACKAGE_PATH.
use crate::config::against;
use indexmap::IndexMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct PackageResolver {
    /// Package name -> folder, from the robot config.
    pub explicit: IndexMap<String, PathBuf>,
    /// Folders searched like ROS_PACKAGE_PATH entries, from the robot config.
    pub search_paths: Vec<PathBuf>,
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

/// Looks for package `name` under `root`, as ROS_PACKAGE_PATH crawling does (a few levels).
fn crawl(root: &Path, name: &str, depth: usize) -> Option<PathBuf> {
    if package_xml_name(root).as_deref() == Some(name) {
        return Some(root.to_path_buf());
    }
    let direct = root.join(name);
    if direct.is_dir() {
        return Some(direct);
    }
    if depth == 0 {
        return None;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .find_map(|dir| crawl(&dir, name, depth - 1))
}

impl PackageResolver {
    pub fn find_package(&self, name: &str) -> Result<PathBuf, String> {
        if let Some(dir) = self.explicit.get(name) {
            return Ok(dir.clone());
        }
        for root in &self.search_paths {
            if let Some(found) = crawl(root, name, 2) {
                return Ok(found);
            }
        }
        let ament = env_paths("AMENT_PREFIX_PATH");
        for prefix in &ament {
            let share = prefix.join("share").join(name);
            if share.is_dir() {
                return Ok(share);
            }
        }
        let ros = env_paths("ROS_PACKAGE_PATH");
        for root in &ros {
            if let Some(found) = crawl(root, name, 2) {
                return Ok(found);
            }
        }
        Err(format!(
            "unknown package '{name}': not in the robot config's packages, nor under \
             package_search_paths {:?}, AMENT_PREFIX_PATH {:?} or ROS_PACKAGE_PATH {:?}",
            self.search_paths, ament, ros
        ))
    }

    /// Turns a URDF filename into a path: `package://`, `file://`, absolute, or relative to
    /// `base_dir`.
    pub fn resolve_uri(&self, uri: &str, base_dir: &Path) -> Result<PathBuf, String> {
        if let Some(rest) = uri.strip_prefix("package://") {
            let (package, relative) = rest.split_once('/').unwrap_or((rest, ""));
            if package.is_empty() {
                return Err(format!("'{uri}' names no package"));
            }
            return Ok(self.find_package(package)?.join(relative));
        }
        if let Some(rest) = uri.strip_prefix("file://") {
            return Ok(against(PathBuf::from(rest), base_dir));
        }
        if let Some((scheme, _)) = uri.split_once("://") {
            return Err(format!(
                "'{uri}': the '{scheme}://' scheme is not supported (package:// and file:// are)"
            ));
        }
        Ok(against(PathBuf::from(uri), base_dir))
    }
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
        };
        assert_eq!(
            resolver
                .resolve_uri("package://my_robot/meshes/a.stl", Path::new("/"))
                .unwrap(),
            pkg.join("meshes/a.stl")
        );
        assert_eq!(
            resolver
                .resolve_uri("package://other/x.obj", Path::new("/"))
                .unwrap(),
            PathBuf::from("/opt/other/x.obj")
        );
        assert_eq!(
            resolver
                .resolve_uri("file:///abs/m.stl", Path::new("/"))
                .unwrap(),
            PathBuf::from("/abs/m.stl")
        );
        assert_eq!(
            resolver.resolve_uri("m.stl", Path::new("/base")).unwrap(),
            PathBuf::from("/base/m.stl")
        );
        let err = resolver
            .resolve_uri("package://nope/a.stl", Path::new("/"))
            .unwrap_err();
        assert!(err.contains("unknown package 'nope'"), "{err}");
        assert!(
            resolver
                .resolve_uri("http://x/a.stl", Path::new("/"))
                .is_err()
        );
    }
}
