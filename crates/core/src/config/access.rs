//! Which files a request from the network may have read: those under the allowed roots (the
//! config's folders, the package's config folder, `world.search_paths`, the models folder,
//! the ROS package paths and `requests.file_roots`), canonicalised so that no `..` or link
//! leads out, regular files only, and no larger than `limits.resource_bytes`, checked
//! before anything is read.
use super::Config;
use std::path::{Path, PathBuf};

/// The roots and the size limit of one world's requests.
#[derive(Debug, Clone, PartialEq)]
pub struct FileAccess {
    /// Canonical folders.
    roots: Vec<PathBuf>,
    max_bytes: u64,
}

/// Why a request may not have a file read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    #[error("'{0}' does not exist")]
    Missing(String),
    #[error("'{0}' is outside the folders requests may read (requests.file_roots adds folders)")]
    Outside(String),
    #[error("'{0}' is not a regular file")]
    NotAFile(String),
    #[error("'{0}' is not a folder")]
    NotAFolder(String),
    #[error("'{path}' holds {bytes} bytes, more than limits.resource_bytes ({limit})")]
    TooLarge {
        path: String,
        bytes: u64,
        limit: u64,
    },
}

/// The folders in a `:`-separated environment variable (the server's own environment).
fn env_folders(var: &str) -> Vec<PathBuf> {
    std::env::var(var)
        .map(|v| {
            v.split(':')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default()
}

impl FileAccess {
    /// What requests to the world built from `config` may read. The config is the server's
    /// own (a file it was started with or loaded from within these roots), so its paths are
    /// expanded as the config says.
    pub fn of(config: &Config) -> Self {
        let mut folders = vec![
            config.base_dir.clone(),
            super::config_dir(),
            super::models_dir(),
        ];
        let expand = |raw: &String| super::expand_path(raw, &config.base_dir).ok();
        folders.extend(config.world.search_paths.iter().filter_map(expand));
        folders.extend(config.requests.file_roots.iter().filter_map(expand));
        // The folders of the robots' own model files (a URDF beside its meshes); not those
        // a request named.
        for robot in config.robots.iter().filter(|r| !r.from_request) {
            for path in [&robot.urdf, &robot.mjcf].into_iter().flatten() {
                if let Some(folder) = expand(path).and_then(|p| p.parent().map(Path::to_path_buf)) {
                    folders.push(folder);
                }
            }
        }
        folders.extend(
            env_folders("AMENT_PREFIX_PATH")
                .into_iter()
                .map(|p| p.join("share")),
        );
        folders.extend(env_folders("ROS_PACKAGE_PATH"));
        let mut roots: Vec<PathBuf> = folders
            .iter()
            .filter_map(|f| std::fs::canonicalize(f).ok())
            .filter(|f| f.is_dir())
            .collect();
        roots.sort();
        roots.dedup();
        Self {
            roots,
            max_bytes: config.limits.resource_bytes,
        }
    }

    /// The canonical form of `path`, when it lies under a root.
    fn within(&self, path: &Path) -> Result<PathBuf, AccessError> {
        let shown = || path.display().to_string();
        let canonical = std::fs::canonicalize(path).map_err(|_| AccessError::Missing(shown()))?;
        if !self.roots.iter().any(|root| canonical.starts_with(root)) {
            return Err(AccessError::Outside(shown()));
        }
        Ok(canonical)
    }

    /// A file a request names: under a root, a regular file, within the size limit.
    pub fn file(&self, path: &Path) -> Result<PathBuf, AccessError> {
        let canonical = self.within(path)?;
        let shown = || path.display().to_string();
        let metadata = std::fs::metadata(&canonical).map_err(|_| AccessError::Missing(shown()))?;
        if !metadata.is_file() {
            return Err(AccessError::NotAFile(shown()));
        }
        if metadata.len() > self.max_bytes {
            return Err(AccessError::TooLarge {
                path: shown(),
                bytes: metadata.len(),
                limit: self.max_bytes,
            });
        }
        Ok(canonical)
    }

    /// A folder a request names (a source to list).
    pub fn folder(&self, path: &Path) -> Result<PathBuf, AccessError> {
        let canonical = self.within(path)?;
        if !canonical.is_dir() {
            return Err(AccessError::NotAFolder(path.display().to_string()));
        }
        Ok(canonical)
    }

    /// Reads a text file a request names, once it passed `file`.
    pub fn read_text(&self, path: &Path) -> Result<String, ReadError> {
        let canonical = self.file(path)?;
        std::fs::read_to_string(canonical)
            .map_err(|e| ReadError::Io(path.display().to_string(), e.to_string()))
    }

    /// The largest file a request may have read, in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }
}

/// Why a file a request names was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error("'{0}': {1}")]
    Io(String, String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_under_the_roots_and_within_the_size_pass() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let mut config = Config::embedded_default(&[]).unwrap();
        config.requests.file_roots = vec![root.path().display().to_string()];
        config.limits.resource_bytes = 10;
        std::fs::write(root.path().join("small.xml"), "<a/>").unwrap();
        std::fs::write(root.path().join("big.xml"), "<aaaaaaaaaaaaaa/>").unwrap();
        std::fs::write(outside.path().join("secret.xml"), "<a/>").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.xml"),
            root.path().join("link.xml"),
        )
        .unwrap();
        let access = FileAccess::of(&config);
        assert!(access.file(&root.path().join("small.xml")).is_ok());
        assert!(matches!(
            access.file(&root.path().join("big.xml")),
            Err(AccessError::TooLarge { .. })
        ));
        assert!(matches!(
            access.file(&outside.path().join("secret.xml")),
            Err(AccessError::Outside(_))
        ));
        // A link that leads out, and a way up and out, are outside too.
        assert!(matches!(
            access.file(&root.path().join("link.xml")),
            Err(AccessError::Outside(_))
        ));
        let up = root
            .path()
            .join("..")
            .join(outside.path().file_name().unwrap())
            .join("secret.xml");
        assert!(matches!(access.file(&up), Err(AccessError::Outside(_))));
        assert!(matches!(
            access.file(Path::new("/etc/passwd")),
            Err(AccessError::Outside(_))
        ));
        assert!(matches!(
            access.file(&root.path().join("none.xml")),
            Err(AccessError::Missing(_))
        ));
        assert!(matches!(
            access.file(root.path()),
            Err(AccessError::NotAFile(_))
        ));
        assert!(access.folder(root.path()).is_ok());
        assert!(matches!(
            access.folder(Path::new("/")),
            Err(AccessError::Outside(_))
        ));
    }
}
