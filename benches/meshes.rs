//! Mesh loading on the URDF corpus (scripts/fetch-urdf-corpus.sh): mesh-loader, which reads
//! the formats MuJoCo cannot (COLLADA, ASCII STL), beside MuJoCo's own readers on the formats
//! both read (binary STL, OBJ), in one run with alternating rounds. Prints wall and CPU time
//! per format and their ratio, so the cost of converting on load is known.
//!
//!     cargo bench --profile release-no-ros --no-default-features --bench meshes
use mujoco_rs::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

const ROUNDS: usize = 5;

fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    // SAFETY: initialised above (zeroed, then filled).
    let u = unsafe { usage.assume_init() };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// A binary STL within MuJoCo's 200,000 triangles: what MuJoCo's STL reader takes.
fn mujoco_reads_stl(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    bytes.len() >= 84 && {
        let n = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize;
        bytes.len() == 84 + n * 50 && n <= 200_000
    }
}

/// MuJoCo decodes the file (a model holding only that mesh, compiled); returns triangles.
fn with_mujoco(path: &Path) -> usize {
    let xml = format!(
        "<mujoco><asset><mesh name=\"m\" file=\"{}\" inertia=\"shell\"/></asset></mujoco>",
        path.display()
    );
    let Ok(mut spec) = MjSpec::from_xml_string(&xml) else {
        return 0;
    };
    spec.compile()
        .map(|m| m.ffi().nmeshface as usize)
        .unwrap_or(0)
}

fn with_mesh_loader(path: &Path) -> usize {
    mesh_loader::Loader::default()
        .merge_meshes(true)
        .load(path)
        .map(|s| s.meshes.iter().map(|m| m.faces.len()).sum())
        .unwrap_or(0)
}

/// What loading a COLLADA mesh costs in the bridge: mesh-loader, then MuJoCo compiling the
/// triangles set on the spec.
fn converted_and_compiled(path: &Path) -> usize {
    let Ok(scene) = mesh_loader::Loader::default().merge_meshes(true).load(path) else {
        return 0;
    };
    let Some(mesh) = scene.meshes.first().filter(|m| !m.faces.is_empty()) else {
        return 0;
    };
    let xml = "<mujoco><asset><mesh name=\"m\" inertia=\"shell\"/></asset></mujoco>";
    let Ok(mut spec) = MjSpec::from_xml_string(xml) else {
        return 0;
    };
    if let Some(m) = spec.mesh_mut("m") {
        let vertices: Vec<f32> = mesh.vertices.iter().flatten().copied().collect();
        let faces: Vec<i32> = mesh.faces.iter().flatten().map(|i| *i as i32).collect();
        m.set_uservert(&vertices);
        m.set_userface(&faces);
    }
    spec.compile()
        .map(|m| m.ffi().nmeshface as usize)
        .unwrap_or(0)
}

/// The same with the triangles written into the MJCF text as `vertex` and `face`, the first
/// way this was built: kept to show what the spec route saves.
fn converted_as_text_and_compiled(path: &Path) -> usize {
    use std::fmt::Write;
    let Ok(scene) = mesh_loader::Loader::default().merge_meshes(true).load(path) else {
        return 0;
    };
    let Some(mesh) = scene.meshes.first().filter(|m| !m.faces.is_empty()) else {
        return 0;
    };
    let mut xml = String::from("<mujoco><asset><mesh name=\"m\" inertia=\"shell\" vertex=\"");
    for v in &mesh.vertices {
        let _ = write!(xml, "{} {} {} ", v[0], v[1], v[2]);
    }
    xml.push_str("\" face=\"");
    for f in &mesh.faces {
        let _ = write!(xml, "{} {} {} ", f[0], f[1], f[2]);
    }
    xml.push_str("\"/></asset></mujoco>");
    let Ok(mut spec) = MjSpec::from_xml_string(&xml) else {
        return 0;
    };
    spec.compile()
        .map(|m| m.ffi().nmeshface as usize)
        .unwrap_or(0)
}

/// Runs `load` over `files`; returns (wall s, CPU s, triangles).
fn time(files: &[PathBuf], load: fn(&Path) -> usize) -> (f64, f64, usize) {
    let (wall, cpu) = (Instant::now(), cpu_seconds());
    let triangles = files.iter().map(|f| load(f)).sum();
    (wall.elapsed().as_secs_f64(), cpu_seconds() - cpu, triangles)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    mujoco_bridge::model::init_mujoco();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join(".deps/urdf-corpus");
    let mut files = Vec::new();
    walk(&corpus, &mut files);
    if files.is_empty() {
        println!(
            "no corpus in {}: run scripts/fetch-urdf-corpus.sh",
            corpus.display()
        );
        return;
    }
    let pick = |ext: &str, both: bool| -> Vec<PathBuf> {
        files
            .iter()
            .filter(|f| extension(f) == ext && (!both || ext != "stl" || mujoco_reads_stl(f)))
            .cloned()
            .collect()
    };
    let bytes = |set: &[PathBuf]| -> f64 {
        set.iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len() as f64)
            .sum::<f64>()
            / 1e6
    };
    println!("== mesh loading on the URDF corpus, {ROUNDS} alternating rounds, medians");
    for ext in ["stl", "obj"] {
        let set = pick(ext, true);
        let (mut mj, mut ml, mut mj_cpu, mut ml_cpu) = (vec![], vec![], vec![], vec![]);
        let (mut mj_tris, mut ml_tris) = (0, 0);
        for _ in 0..ROUNDS {
            let (w, c, t) = time(&set, with_mujoco);
            mj.push(w);
            mj_cpu.push(c);
            mj_tris = t;
            let (w, c, t) = time(&set, with_mesh_loader);
            ml.push(w);
            ml_cpu.push(c);
            ml_tris = t;
        }
        let (mj, ml) = (median(mj), median(ml));
        println!(
            "{:<7} {} files, {:.1} MB: MuJoCo's reader {:.3} s ({:.3} s CPU, {} triangles), \
             mesh-loader {:.3} s ({:.3} s CPU, {} triangles); mesh-loader / MuJoCo {:.2}",
            ext.to_uppercase(),
            set.len(),
            bytes(&set),
            mj,
            median(mj_cpu),
            mj_tris,
            ml,
            median(ml_cpu),
            ml_tris,
            ml / mj
        );
    }
    println!("        (MuJoCo's side: decoding and compiling a model that holds only the mesh)");
    let dae = pick("dae", false);
    let runs: Vec<(f64, f64, usize)> = (0..ROUNDS).map(|_| time(&dae, with_mesh_loader)).collect();
    let wall = median(runs.iter().map(|r| r.0).collect());
    println!(
        "COLLADA {} files, {:.1} MB: mesh-loader {:.3} s ({:.3} s CPU, {} triangles, {:.1} MB/s); \
         MuJoCo has no COLLADA reader",
        dae.len(),
        bytes(&dae),
        wall,
        median(runs.iter().map(|r| r.1).collect()),
        runs[0].2,
        bytes(&dae) / wall
    );
    let (mut spec, mut text) = (vec![], vec![]);
    for _ in 0..ROUNDS {
        spec.push(time(&dae, converted_and_compiled));
        text.push(time(&dae, converted_as_text_and_compiled));
    }
    let wall = |runs: &[(f64, f64, usize)]| median(runs.iter().map(|r| r.0).collect());
    let cpu = |runs: &[(f64, f64, usize)]| median(runs.iter().map(|r| r.1).collect());
    println!(
        "COLLADA as the bridge loads it (mesh-loader, triangles set on the spec, compiled): \
         {:.3} s ({:.3} s CPU, {} triangles); the triangles as MJCF text instead: {:.3} s \
         ({:.3} s CPU); spec / text {:.2}",
        wall(&spec),
        cpu(&spec),
        spec[0].2,
        wall(&text),
        cpu(&text),
        wall(&spec) / wall(&text)
    );
}
