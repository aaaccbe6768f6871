//! The MuJoCo library directory as an rpath for this crate's own test binaries (an rpath set
//! by a dependency's build script does not reach them) and, as `mujoco_lib_dir`, for the
//! crates built on this one; the plugin directory the simulation loads MuJoCo's plugins from.
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
    println!("cargo::metadata=mujoco_lib_dir={lib_dir}");
    let plugin_dir =
        std::env::var("MUJOCO_PLUGIN_DIR").unwrap_or_else(|_| format!("{lib_dir}/../plugin"));
    println!("cargo::rustc-env=MUJOCO_BRIDGE_PLUGIN_DIR={plugin_dir}");
}
