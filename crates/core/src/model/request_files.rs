//! What an MJCF text from a request (a spawn's resource_string, a robot of a loaded world's
//! text, the `<mujoco>` blocks of a request's URDF) may make MuJoCo do before it is compiled:
//! the files it names (meshes, textures, height fields, skins) must lie in folders requests
//! may read, and exist there as regular files within the size limit (one that does not exist
//! is left to MuJoCo, which reports it missing); it may include no file; and what it asks
//! MuJoCo to allocate (the arena, built-in textures, height fields) stays within the limits.
use super::xml::{self, Element};
use crate::config::{FileAccess, LimitsConfig};
use std::path::{Path, PathBuf};

/// Attributes through which MJCF names a file.
fn is_file_attribute(key: &str) -> bool {
    key == "file" || key.starts_with("file") && key.len() > 4
}

fn attribute<'a>(attributes: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attributes
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Where `<compiler>` says assets of element `kind` live (relative to the model's folder).
fn asset_folder(compiler: &[(String, String)], kind: &str) -> Option<String> {
    let specific = match kind {
        "mesh" | "skin" => attribute(compiler, "meshdir"),
        "texture" | "hfield" => attribute(compiler, "texturedir"),
        _ => None,
    };
    specific
        .or_else(|| attribute(compiler, "assetdir"))
        .map(str::to_string)
}

fn collect<'a>(element: &'a Element, out: &mut Vec<&'a Element>) {
    let mut stack = vec![element];
    while let Some(e) = stack.pop() {
        out.push(e);
        stack.extend(e.children.iter());
    }
}

/// A byte count as MJCF writes it (`8K`, `1M`, `2G` or plain bytes).
fn bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, scale) = match text.chars().last()? {
        'K' | 'k' => (&text[..text.len() - 1], 1u64 << 10),
        'M' | 'm' => (&text[..text.len() - 1], 1 << 20),
        'G' | 'g' => (&text[..text.len() - 1], 1 << 30),
        'T' | 't' => (&text[..text.len() - 1], 1 << 40),
        _ => (text, 1),
    };
    number.trim().parse::<u64>().ok()?.checked_mul(scale)
}

/// Why a built-in grid (a texture's pixels, a height field's points: `sides` multiplied)
/// is more than `limits.texture_pixels` allows; None when it is not.
fn grid_over(
    element: &Element,
    sides: (&str, &str),
    noun: &str,
    limits: &LimitsConfig,
) -> Option<String> {
    let cells = product(element, sides.0, sides.1);
    (cells > limits.texture_pixels).then(|| {
        format!(
            "{cells} {noun}, more than limits.texture_pixels ({})",
            limits.texture_pixels
        )
    })
}

/// The product of two integer attributes of `element` (0 when either is missing).
fn product(element: &Element, a: &str, b: &str) -> u64 {
    let get = |key| {
        element
            .attr(key)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    get(a).saturating_mul(get(b))
}

/// Checks an MJCF text a request brings, its files relative to `model_dir`.
pub fn check_mjcf(
    text: &str,
    model_dir: &Path,
    access: &FileAccess,
    limits: &LimitsConfig,
) -> Result<(), String> {
    let root = xml::parse_limited(text, limits.xml_depth).map_err(|e| e.to_string())?;
    let mut elements = Vec::new();
    collect(&root, &mut elements);
    let compiler: Vec<(String, String)> = elements
        .iter()
        .filter(|e| e.name == "compiler")
        .flat_map(|e| e.attributes.iter().cloned())
        .collect();
    let strip = attribute(&compiler, "strippath").is_some_and(|v| v.trim() == "true");
    let at = |e: &Element| format!("line {}: <{}>", e.line, e.name);
    for element in elements {
        if element.name == "include" {
            return Err(format!(
                "{}: a request's model text cannot include files",
                at(element)
            ));
        }
        let too_large = match element.name.as_str() {
            "size" => element
                .attr("memory")
                .and_then(bytes)
                .filter(|b| *b > limits.arena_bytes)
                .map(|b| {
                    format!(
                        "memory {b} bytes, more than limits.arena_bytes ({})",
                        limits.arena_bytes
                    )
                }),
            "texture" => grid_over(element, ("width", "height"), "pixels", limits),
            "hfield" => grid_over(element, ("nrow", "ncol"), "points", limits),
            _ => None,
        };
        if let Some(why) = too_large {
            return Err(format!("{}: {why}", at(element)));
        }
        for (key, value) in element
            .attributes
            .iter()
            .filter(|(k, _)| is_file_attribute(k))
        {
            // As MuJoCo reads it: `strippath` keeps the file name only, a relative name lies
            // in the compiler's folder for its kind, relative to the model's folder.
            let mut written = PathBuf::from(value);
            if strip && let Some(name) = written.file_name() {
                written = PathBuf::from(name);
            }
            let path = if written.is_absolute() {
                written
            } else {
                let folder = asset_folder(&compiler, &element.name)
                    .map(|dir| crate::config::against(PathBuf::from(dir), model_dir))
                    .unwrap_or_else(|| model_dir.to_path_buf());
                folder.join(written)
            };
            let refused = |e: crate::config::AccessError| format!("{} {key}: {e}", at(element));
            if path.exists() {
                access.file(&path).map_err(refused)?;
            } else {
                // Missing: MuJoCo says so, but only about a folder requests may read.
                let folder = path.parent().unwrap_or(Path::new("/"));
                access.folder(folder).map_err(refused)?;
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
    fn files_outside_the_roots_includes_and_oversized_requests_are_refused() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("meshes")).unwrap();
        std::fs::write(root.path().join("meshes/part.stl"), "solid x\nendsolid x\n").unwrap();
        let mut config = Config::embedded_default(&[]).unwrap();
        config.requests.file_roots = vec![root.path().display().to_string()];
        let access = FileAccess::of(&config);
        let limits = &config.limits;
        let check = |text: &str| check_mjcf(text, root.path(), &access, limits);
        let ok = "<mujoco><compiler meshdir='meshes'/><asset><mesh file='part.stl'/>\
                  <mesh name='gone' file='missing.stl'/></asset></mujoco>";
        assert_eq!(check(ok), Ok(()));
        let out = check("<mujoco><asset><mesh file='/etc/passwd'/></asset></mujoco>").unwrap_err();
        assert!(
            out.contains("<mesh> file") && out.contains("outside"),
            "{out}"
        );
        // A missing file outside, and one reached through strippath and a compiler folder.
        assert!(
            check("<mujoco><asset><mesh file='/nonexistent/x.stl'/></asset></mujoco>").is_err()
        );
        let stripped = "<mujoco><compiler meshdir='/etc' strippath='true'/><asset>\
                        <mesh file='/nonexistent/passwd'/></asset></mujoco>";
        assert!(check(stripped).is_err());
        assert!(check("<mujoco><include file='meshes/part.stl'/></mujoco>").is_err());
        let skybox = "<mujoco><asset><texture type='skybox' fileup='/dev/zero'/></asset></mujoco>";
        assert!(check(skybox).is_err());
        let arena = check("<mujoco><size memory='64G'/></mujoco>").unwrap_err();
        assert!(arena.contains("limits.arena_bytes"), "{arena}");
        let texture = "<mujoco><asset><texture name='t' builtin='checker' width='100000' \
                       height='100000'/></asset></mujoco>";
        assert!(
            check(texture)
                .unwrap_err()
                .contains("limits.texture_pixels")
        );
        assert_eq!(bytes("8K"), Some(8192));
        assert_eq!(bytes("2G"), Some(2 << 30));
    }
}
