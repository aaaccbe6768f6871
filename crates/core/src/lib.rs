//! mujoco_bridge's simulation core: the config, the models and what is built from them, the
//! physics thread and its operations, worlds, control laws and step records. It knows no ROS,
//! no network and no GL: the adapters in the `mujoco_bridge` crate (the ROS 2 node, the
//! streams, the legacy ZMQ server, the renderer and the viewer) are built on it.
pub mod census;
pub mod config;
pub mod control;
pub mod controllers;
pub mod error;
pub mod logging;
pub mod model;
pub mod rate_limit;
pub mod record;
pub mod sim;
pub mod supervise;
pub mod world;

/// The repository's root folder, where the config files, the installed tools (`.deps`) and
/// the upstream packages beside it are found when nothing installed says otherwise.
pub fn source_root() -> &'static std::path::Path {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}
