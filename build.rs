//! Embeds the MuJoCo library directory as an rpath so that the binary, the tests and the
//! benchmarks run without LD_LIBRARY_PATH (mujoco-rs sets none, and an rpath set by a
//! dependency's build script does not reach this crate's artifacts).
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-env-changed=MUJOCO_DYNAMIC_LINK_DIR");
    println!("cargo::rerun-if-env-changed=MUJOCO_PLUGIN_DIR");
    let Ok(lib_dir) = std::env::var("MUJOCO_DYNAMIC_LINK_DIR") else {
        return; // pkg-config or a static build: nothing to embed
    };
    if !Path::new(&lib_dir).join("libmujoco.so").exists() {
        panic!(
            "MuJoCo is not installed in {lib_dir}: run scripts/setup-mujoco.sh first \
             (it unpacks MuJoCo 3.17.0 from the PyPI wheel)"
        );
    }
    println!("cargo::rustc-link-arg=-Wl,-rpath,{lib_dir}");
    let plugin_dir =
        std::env::var("MUJOCO_PLUGIN_DIR").unwrap_or_else(|_| format!("{lib_dir}/../plugin"));
    println!("cargo::rustc-env=MUJOCO_BRIDGE_PLUGIN_DIR={plugin_dir}");
}
