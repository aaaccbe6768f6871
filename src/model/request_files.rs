//! The files an MJCF text from a request names (meshes, textures, height fields, skins,
//! included files): MuJoCo would open each itself, so each one that exists is checked
//! against the world's `FileAccess` first. One that does not exist is left to MuJoCo, which
//! reports it missing.
use super::xml::{self, Element};
use crate::config::FileAccess;
use std::path::{Path, PathBuf};

/// Attributes through which MJCF names a file.
fn is_file_attribute(key: &str) -> bool {
    key == "file" || key.starts_with("file") && key.len() > 4
}

/// Where `<compiler>` says assets of element `kind` live, relative to the model's folder.
fn asset_folder(compiler: &[(String, String)], kind: &str) -> Option<String> {
    let get = |key: &str| {
        compiler
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let specific = match kind {
        "mesh" | "skin" => get("meshdir"),
        "texture" | "hfield" => get("texturedir"),
        _ => None,
    };
    specific.or_else(|| get("assetdir"))
}

fn collect<'a>(element: &'a Element, out: &mut Vec<&'a Element>) {
    let mut stack = vec![element];
    while let Some(e) = stack.pop() {
        out.push(e);
        stack.extend(e.children.iter());
    }
}

/// Checks every file `text` (MJCF, its files relative to `model_dir`) names.
pub fn check_mjcf(text: &str, model_dir: &Path, access: &FileAccess) -> Result<(), String> {
    let root = xml::parse(text).map_err(|e| e.to_string())?;
    let mut elements = Vec::new();
    collect(&root, &mut elements);
    let compiler: Vec<(String, String)> = elements
        .iter()
        .filter(|e| e.name == "compiler")
        .flat_map(|e| e.attributes.iter().cloned())
        .collect();
    for element in elements {
        for (key, value) in element
            .attributes
            .iter()
            .filter(|(k, _)| is_file_attribute(k))
        {
            let written = PathBuf::from(value);
            let path = if written.is_absolute() {
                written
            } else {
                let folder = asset_folder(&compiler, &element.name)
                    .filter(|_| element.name != "include")
                    .map(|dir| crate::config::against(PathBuf::from(dir), model_dir))
                    .unwrap_or_else(|| model_dir.to_path_buf());
                folder.join(written)
            };
            if path.exists() {
                access
                    .file(&path)
                    .map_err(|e| format!("line {}: <{}> {key}: {e}", element.line, element.name))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn files_outside_the_roots_are_refused_and_missing_ones_left_to_mujoco() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("meshes")).unwrap();
        std::fs::write(root.path().join("meshes/part.stl"), "solid x\nendsolid x\n").unwrap();
        let mut config = Config::embedded_default(&[]).unwrap();
        config.requests.file_roots = vec![root.path().display().to_string()];
        let access = FileAccess::of(&config);
        let ok = "<mujoco><compiler meshdir='meshes'/><asset><mesh file='part.stl'/>\
                  <mesh name='gone' file='missing.stl'/></asset></mujoco>";
        assert_eq!(check_mjcf(ok, root.path(), &access), Ok(()));
        let out = "<mujoco><asset><mesh file='/etc/passwd'/></asset></mujoco>";
        let error = check_mjcf(out, root.path(), &access).unwrap_err();
        assert!(
            error.contains("<mesh> file") && error.contains("outside"),
            "{error}"
        );
        let include = "<mujoco><include file='../../../../../../etc/passwd'/></mujoco>";
        assert!(check_mjcf(include, root.path(), &access).is_err());
        let skybox = "<mujoco><asset><texture type='skybox' fileup='/dev/zero'/></asset></mujoco>";
        assert!(check_mjcf(skybox, root.path(), &access).is_err());
    }
}
