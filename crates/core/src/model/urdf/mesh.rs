//! Mesh files as URDFs reference them. MuJoCo reads binary STL, OBJ and MSH itself; COLLADA,
//! ASCII STL (which MuJoCo's STL reader refuses) and upper-case extensions are read with
//! `mesh-loader` (made for robot meshes: it applies COLLADA's unit and node transforms) and
//! handed to MuJoCo as vertices and faces. COLLADA's `<up_axis>`, which mesh-loader leaves
//! alone, is applied here, as RViz and Gazebo do.
use std::path::Path;

/// How a mesh reaches MuJoCo.
#[derive(Debug, Clone, PartialEq)]
pub enum MeshData {
    /// MuJoCo reads the file itself.
    File,
    /// Converted on load: vertices (x y z) and triangles (vertex indices), in metres and Z up.
    Converted {
        vertices: Vec<[f32; 3]>,
        faces: Vec<[u32; 3]>,
    },
}

/// Why a mesh could not be used.
#[derive(Debug, Clone, PartialEq)]
pub enum MeshError {
    /// A format neither MuJoCo nor mesh-loader reads (the extension).
    Unsupported(String),
    /// The file could not be read or parsed.
    Unreadable(String),
    /// The file holds no triangle.
    Empty,
}

impl std::fmt::Display for MeshError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unsupported(ext) => write!(
                f,
                "'.{ext}' is no mesh format MuJoCo or the converter reads (STL, OBJ, COLLADA, MSH)"
            ),
            Self::Unreadable(message) => write!(f, "cannot be read: {message}"),
            Self::Empty => write!(f, "holds no triangle"),
        }
    }
}

/// A binary STL: an 80-byte header, a triangle count, then 50 bytes per triangle. ASCII STL
/// starts with "solid" and does not match the size (some binary files start with "solid" too).
fn is_binary_stl(bytes: &[u8]) -> bool {
    if bytes.len() < 84 {
        return false;
    }
    let count = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize;
    bytes.len() == 84 + count * 50
}

/// The most triangles MuJoCo's own STL reader takes.
const MUJOCO_STL_FACES: usize = 200_000;

fn stl_faces(bytes: &[u8]) -> usize {
    u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize
}

/// COLLADA's up axis, read from its `<asset>`: `X_UP`, `Y_UP` or `Z_UP` (the default).
fn collada_up_axis(text: &str) -> &str {
    let Some(start) = text.find("<up_axis>") else {
        return "Z_UP";
    };
    let rest = &text[start + "<up_axis>".len()..];
    rest.find("</up_axis>")
        .map(|end| rest[..end].trim())
        .unwrap_or("Z_UP")
}

/// Rotates a Y-up or X-up model so that its up axis becomes Z.
fn to_z_up(up: &str, v: [f32; 3]) -> [f32; 3] {
    match up {
        "Y_UP" => [v[0], -v[2], v[1]],
        "X_UP" => [-v[2], v[1], v[0]],
        _ => v,
    }
}

/// Reads `path` (already known to exist) into what MuJoCo needs.
pub fn load(path: &Path) -> Result<MeshData, MeshError> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_string())
        .unwrap_or_default();
    let lower = ext.to_ascii_lowercase();
    let bytes = std::fs::read(path).map_err(|e| MeshError::Unreadable(e.to_string()))?;
    match (ext.as_str(), lower.as_str()) {
        // An OBJ without a vertex line holds no triangle; MuJoCo would refuse the model.
        ("obj", _) if !bytes.split(|b| *b == b'\n').any(|l| l.starts_with(b"v ")) => {
            return Err(MeshError::Empty);
        }
        ("obj" | "msh", _) if !bytes.is_empty() => return Ok(MeshData::File),
        ("stl", _) if is_binary_stl(&bytes) && stl_faces(&bytes) == 0 => {
            return Err(MeshError::Empty);
        }
        ("stl", _) if is_binary_stl(&bytes) && stl_faces(&bytes) <= MUJOCO_STL_FACES => {
            return Ok(MeshData::File);
        }
        ("msh", _) => return Err(MeshError::Empty),
        (_, "stl" | "obj" | "dae") => {}
        _ => return Err(MeshError::Unsupported(ext)),
    }
    let loader = mesh_loader::Loader::default().merge_meshes(true);
    let scene = match lower.as_str() {
        "stl" => loader.load_stl_from_slice(&bytes, path),
        "obj" => loader.load_obj_from_slice(&bytes, path),
        _ => loader.load_collada_from_slice(&bytes, path),
    }
    .map_err(|e| MeshError::Unreadable(e.to_string()))?;
    let up = if lower == "dae" {
        collada_up_axis(&String::from_utf8_lossy(&bytes)).to_string()
    } else {
        "Z_UP".to_string()
    };
    let mut vertices = Vec::new();
    let mut faces = Vec::new();
    for mesh in scene.meshes {
        let offset = vertices.len() as u32;
        vertices.extend(mesh.vertices.iter().map(|v| to_z_up(&up, *v)));
        faces.extend(mesh.faces.iter().map(|f| f.map(|i| i + offset)));
    }
    if faces.is_empty() || vertices.iter().flatten().any(|v| !v.is_finite()) {
        return Err(MeshError::Empty);
    }
    Ok(MeshData::Converted { vertices, faces })
}

/// A box standing in for a flat mesh (all vertices in one plane), which MuJoCo cannot build a
/// convex hull from for collisions: centre and orientation in the mesh frame, half sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlatBox {
    pub center: [f64; 3],
    /// (w, x, y, z)
    pub quat: [f64; 4],
    pub half: [f64; 3],
}

/// Thickness given to the box standing in for a flat mesh, as a half size in m.
const FLAT_HALF_THICKNESS: f64 = 0.0005;

/// The vertices (scaled) and triangles of a mesh file, in any format this module reads.
type Triangles = (Vec<[f64; 3]>, Vec<[u32; 3]>);

fn triangles(path: &Path, data: &MeshData, scale: &[f64; 3]) -> Option<Triangles> {
    let (raw, faces): (Vec<[f32; 3]>, Vec<[u32; 3]>) = match data {
        MeshData::Converted { vertices, faces } => (vertices.clone(), faces.clone()),
        MeshData::File => {
            let loader = mesh_loader::Loader::default().merge_meshes(true);
            let mesh = loader.load(path).ok()?.meshes.into_iter().next()?;
            (mesh.vertices, mesh.faces)
        }
    };
    let scaled = raw
        .iter()
        .map(|v| {
            [
                v[0] as f64 * scale[0],
                v[1] as f64 * scale[1],
                v[2] as f64 * scale[2],
            ]
        })
        .collect();
    Some((scaled, faces))
}

/// Some(box) when the mesh's vertices lie in one plane (their extent across the plane is a
/// millionth of their extent along it). The plane's normal comes from the vertices'
/// principal axes; in the plane, the box is turned to the mesh edge that gives the least area.
pub fn flat_box(path: &Path, data: &MeshData, scale: &[f64; 3]) -> Option<FlatBox> {
    use nalgebra::{Matrix3, Rotation3, SymmetricEigen, UnitQuaternion, Vector3};
    let (vertices, faces) = triangles(path, data, scale)?;
    let points: Vec<Vector3<f64>> = vertices.into_iter().map(Vector3::from).collect();
    if points.len() < 3 {
        return None;
    }
    let mean = points.iter().sum::<Vector3<f64>>() / points.len() as f64;
    let covariance = points
        .iter()
        .map(|p| (p - mean) * (p - mean).transpose())
        .sum::<Matrix3<f64>>();
    let eigen = SymmetricEigen::new(covariance);
    let thin = eigen.eigenvalues.imin();
    // Most meshes have volume: the variance across their thinnest direction tells at once,
    // and only flat ones pay for the search below.
    let spread = eigen.eigenvalues.max();
    if spread.is_nan() || spread <= 0.0 || eigen.eigenvalues[thin] > spread * 1e-10 {
        return None;
    }
    let normal = eigen.eigenvectors.column(thin).into_owned();
    // Extents of the points along the axes (u, v, normal), and their low corner.
    let extents = |u: &Vector3<f64>| {
        let axes = Matrix3::from_columns(&[*u, normal.cross(u), normal]);
        let mut low = [f64::INFINITY; 3];
        let mut high = [f64::NEG_INFINITY; 3];
        for p in &points {
            let local = axes.transpose() * (p - mean);
            for k in 0..3 {
                low[k] = low[k].min(local[k]);
                high[k] = high[k].max(local[k]);
            }
        }
        (axes, low, high)
    };
    let in_plane = |d: Vector3<f64>| {
        let d = d - normal * normal.dot(&d);
        (d.norm() > 1e-12).then(|| d.normalize())
    };
    let first_axis = eigen.eigenvectors.column((thin + 1) % 3).into_owned();
    let candidates = std::iter::once(first_axis).chain(faces.iter().take(64).flat_map(|f| {
        let [a, b, c] = f.map(|i| points.get(i as usize).copied().unwrap_or(mean));
        [b - a, c - b, a - c]
    }));
    let (axes, low, high) = candidates
        .filter_map(in_plane)
        .map(|u| extents(&u))
        .min_by(|(_, l1, h1), (_, l2, h2)| {
            let area = |l: &[f64; 3], h: &[f64; 3]| (h[0] - l[0]) * (h[1] - l[1]);
            area(l1, h1).total_cmp(&area(l2, h2))
        })?;
    let extent: [f64; 3] = std::array::from_fn(|k| high[k] - low[k]);
    let largest = extent.iter().cloned().fold(0.0, f64::max);
    if largest.is_nan() || largest <= 0.0 || extent[2] > largest * 1e-6 {
        return None;
    }
    let mid = Vector3::from(std::array::from_fn::<f64, 3, _>(|k| {
        (low[k] + high[k]) / 2.0
    }));
    let center = mean + axes * mid;
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(axes));
    Some(FlatBox {
        center: center.into(),
        quat: [q.w, q.i, q.j, q.k],
        half: extent.map(|e| (e / 2.0).max(FLAT_HALF_THICKNESS)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRIANGLE_DAE: &str = r##"<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="0.001" name="millimeter"/><up_axis>Y_UP</up_axis></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="9">0 0 0 1000 0 0 0 1000 0</float_array>
      <technique_common><accessor source="#pa" count="3" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
      </accessor></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n"><instance_geometry url="#g"/></node>
  </visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>"##;

    #[test]
    fn collada_unit_and_up_axis_are_applied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tri.dae");
        std::fs::write(&path, TRIANGLE_DAE).unwrap();
        let MeshData::Converted { vertices, faces } = load(&path).unwrap() else {
            panic!("a COLLADA mesh is converted");
        };
        assert_eq!(faces, [[0, 1, 2]]);
        // 1000 mm along Y (up in the file) becomes 1 m along Z.
        let close = |a: [f32; 3], b: [f32; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
        assert!(close(vertices[1], [1.0, 0.0, 0.0]), "{vertices:?}");
        assert!(close(vertices[2], [0.0, 0.0, 1.0]), "{vertices:?}");
    }

    #[test]
    fn a_flat_mesh_gets_a_thin_box() {
        let flat = MeshData::Converted {
            vertices: vec![
                [0.0, 0.0, 0.1],
                [0.2, 0.0, 0.1],
                [0.0, 0.1, 0.1],
                [0.2, 0.1, 0.1],
            ],
            faces: vec![[0, 1, 2], [1, 3, 2]],
        };
        let b = flat_box(Path::new("x"), &flat, &[1.0; 3]).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(
            close(b.center[0], 0.1) && close(b.center[1], 0.05) && close(b.center[2], 0.1),
            "{b:?}"
        );
        let mut half = b.half;
        half.sort_by(f64::total_cmp);
        assert!(close(half[0], FLAT_HALF_THICKNESS) && close(half[1], 0.05) && close(half[2], 0.1));
        let solid = MeshData::Converted {
            vertices: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
            ],
            faces: vec![[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]],
        };
        assert_eq!(flat_box(Path::new("x"), &solid, &[1.0; 3]), None);
    }

    #[test]
    fn binary_stl_goes_to_mujoco_and_ascii_stl_is_converted() {
        let dir = tempfile::tempdir().unwrap();
        let mut binary = vec![0u8; 80];
        binary.extend(1u32.to_le_bytes());
        binary.extend([0u8; 50]);
        let b = dir.path().join("b.stl");
        std::fs::write(&b, &binary).unwrap();
        assert_eq!(load(&b).unwrap(), MeshData::File);
        let a = dir.path().join("a.STL");
        std::fs::write(
            &a,
            "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n\
             endloop\nendfacet\nendsolid t\n",
        )
        .unwrap();
        assert!(matches!(load(&a).unwrap(), MeshData::Converted { .. }));
        let p = dir.path().join("m.ply");
        std::fs::write(&p, "ply").unwrap();
        assert_eq!(load(&p).unwrap_err(), MeshError::Unsupported("ply".into()));
    }
}
