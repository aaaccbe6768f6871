//! Helpers shared by the integration tests.
#![allow(dead_code)]
use mujoco_bridge::config::{Config, SimConfig, SimMode};
use mujoco_bridge::model::{World, build_world};
use mujoco_bridge::sim::{SimHandle, StateSnapshot};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The registry models unpacked by scripts/fetch-models.sh.
pub fn models() -> PathBuf {
    mujoco_bridge::config::models_dir()
}

/// Simulation options that start paused (tests step explicitly).
pub fn paused() -> SimConfig {
    SimConfig {
        mode: SimMode::Paused,
        ..Default::default()
    }
}

/// The newest published state.
pub fn state(handle: &SimHandle) -> StateSnapshot {
    let mut s = handle.latest_state_buffer();
    assert!(handle.latest_state(&mut s));
    s
}

/// Loads a world from inline YAML; relative paths resolve against `base_dir`.
pub fn world_from_yaml(yaml: &str, base_dir: &Path) -> World {
    let config = Config::from_yaml(yaml, "test.yaml", base_dir, &[]).expect("config");
    build_world(&config).unwrap_or_else(|e| panic!("world: {e}"))
}

pub fn world_from_config_file(name: &str) -> World {
    let config = Config::load(&repo().join("config").join(name), &[]).expect("config");
    build_world(&config).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Menagerie's Panda with torque motors on its seven arm joints (instead of its position
/// servos), and `control` as the YAML lines of its control section.
pub fn panda_with_motors(control: &str) -> World {
    let yaml = format!(
        "world: {{floor: true}}\nrobots:\n  - name: panda\n    mjcf: {}\n    actuators:\n      - joints: \"joint[1-7]\"\n        type: motor\n        effort_limit: 87\n    control:\n{control}",
        models()
            .join("menagerie/franka_emika_panda/panda.xml")
            .display()
    );
    world_from_yaml(&yaml, Path::new("."))
}

/// Runs the real binary with `args` (and extra environment) and returns its output.
pub fn run_bridge(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mujoco_bridge"));
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .current_dir(repo());
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("run mujoco_bridge")
}

/// A binary STL of an axis-aligned cube with half-size `h`.
pub fn write_cube_stl(path: &Path, h: f32) {
    let v = |x: f32, y: f32, z: f32| [x * h, y * h, z * h];
    let quads = [
        (
            [0., 0., -1.],
            [
                v(-1., -1., -1.),
                v(-1., 1., -1.),
                v(1., 1., -1.),
                v(1., -1., -1.),
            ],
        ),
        (
            [0., 0., 1.],
            [
                v(-1., -1., 1.),
                v(1., -1., 1.),
                v(1., 1., 1.),
                v(-1., 1., 1.),
            ],
        ),
        (
            [0., -1., 0.],
            [
                v(-1., -1., -1.),
                v(1., -1., -1.),
                v(1., -1., 1.),
                v(-1., -1., 1.),
            ],
        ),
        (
            [0., 1., 0.],
            [
                v(-1., 1., -1.),
                v(-1., 1., 1.),
                v(1., 1., 1.),
                v(1., 1., -1.),
            ],
        ),
        (
            [-1., 0., 0.],
            [
                v(-1., -1., -1.),
                v(-1., -1., 1.),
                v(-1., 1., 1.),
                v(-1., 1., -1.),
            ],
        ),
        (
            [1., 0., 0.],
            [
                v(1., -1., -1.),
                v(1., 1., -1.),
                v(1., 1., 1.),
                v(1., -1., 1.),
            ],
        ),
    ];
    let mut bytes = vec![0u8; 80];
    bytes.extend_from_slice(&12u32.to_le_bytes());
    for (normal, [a, b, c, d]) in quads {
        for tri in [[a, b, c], [a, c, d]] {
            for f in normal.iter().chain(tri.iter().flatten()) {
                bytes.extend_from_slice(&f.to_le_bytes());
            }
            bytes.extend_from_slice(&[0, 0]);
        }
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}
