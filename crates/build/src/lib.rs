//! What every mujoco_bridge crate's build script does, written once: the rpaths its test
//! binaries, benchmarks and the node load MuJoCo and the ROS 2 libraries through, so that
//! nothing needs LD_LIBRARY_PATH (mujoco-rs sets none, and an rpath a dependency's build
//! script sets does not reach another crate's artifacts).
use std::path::Path;

/// The rpaths of a crate built on `mujoco_bridge_core`: MuJoCo's folder, which the core's
/// build script checked and passed on, and with the `ros` feature the ROS 2 libraries'.
pub fn link() {
    if std::env::var_os("CARGO_FEATURE_ROS").is_some() {
        ros_link_args();
    }
    if let Ok(lib_dir) = std::env::var("DEP_MUJOCO_BRIDGE_CORE_MUJOCO_LIB_DIR") {
        println!("cargo::rustc-link-arg=-Wl,-rpath,{lib_dir}");
    }
}

/// rpaths for the ROS 2 libraries of every prefix on AMENT_PREFIX_PATH. Old-style RPATH
/// (not RUNPATH) so that the wheel libraries, whose own RPATHs point elsewhere, find each
/// other; `site-packages/*.libs` hold the wheels' bundled dependencies.
fn ros_link_args() {
    println!("cargo::rerun-if-env-changed=AMENT_PREFIX_PATH");
    println!("cargo::rustc-link-arg=-Wl,--disable-new-dtags");
    println!("cargo::rerun-if-env-changed=MUJOCO_BRIDGE_ROS_WHEELS");
    if std::env::var_os("MUJOCO_BRIDGE_ROS_WHEELS").is_some() {
        link_libpython();
    }
    let prefixes = std::env::var("AMENT_PREFIX_PATH").unwrap_or_default();
    for prefix in prefixes.split(':').filter(|p| !p.is_empty()) {
        let lib = Path::new(prefix).join("lib");
        if lib.is_dir() {
            println!("cargo::rustc-link-arg=-Wl,-rpath,{}", lib.display());
        }
        let Ok(entries) = std::fs::read_dir(&lib) else {
            continue;
        };
        for python in entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        {
            let Ok(site) = std::fs::read_dir(python.path().join("site-packages")) else {
                continue;
            };
            for dir in site
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".libs"))
            {
                println!("cargo::rustc-link-arg=-Wl,-rpath,{}", dir.path().display());
            }
        }
    }
}

/// The PyPI wheels' librcl loads `*__rosidl_generator_py` libraries that need CPython's
/// symbols; a process that is not Python links libpython so that they resolve.
fn link_libpython() {
    let query = "import sysconfig; print(sysconfig.get_config_var('LIBDIR')); print(sysconfig.get_config_var('LDLIBRARY'))";
    let output = std::process::Command::new("python3")
        .args(["-c", query])
        .output()
        .expect("python3 is needed to link the ROS 2 wheels");
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let (Some(dir), Some(library)) = (lines.next(), lines.next()) else {
        panic!("python3 did not say where libpython is");
    };
    let name = library
        .trim_start_matches("lib")
        .split(".so")
        .next()
        .unwrap_or("python3");
    println!("cargo::rustc-link-arg=-Wl,--no-as-needed");
    println!("cargo::rustc-link-arg=-L{dir}");
    println!("cargo::rustc-link-arg=-l{name}");
    println!("cargo::rustc-link-arg=-Wl,--as-needed");
    println!("cargo::rustc-link-arg=-Wl,-rpath,{dir}");
}
