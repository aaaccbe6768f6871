//! The physics thread through its handle: every shipped config loads and steps; pausing,
//! stepping N, pacing modes, commands (with clamping and rejection), and consistent snapshots
//! read while the thread runs.
mod common;

use common::*;
use mujoco_bridge::config::{ControlSource, SimConfig, SimMode};
use mujoco_bridge::model::World;
use mujoco_bridge::sim::{Command, SimHandle, Simulation};
use std::time::{Duration, Instant};

/// Every robot config shipped in config/.
const SHIPPED_CONFIGS: [&str; 6] = [
    "default.yaml",
    "panda.yaml",
    "go1.yaml",
    "spot.yaml",
    "barkour.yaml",
    "g1.yaml",
];

fn base_height(world: &World, handle: &SimHandle) -> f64 {
    let mut state = handle.latest_state_buffer();
    assert!(handle.latest_state(&mut state));
    let root = world.robots[0].root_body.unwrap();
    state.xpos[3 * root + 2]
}

#[test]
fn every_config_loads_and_steps_stably() {
    for name in SHIPPED_CONFIGS {
        let world = world_from_config_file(name);
        let sim = Simulation::start(&world, &paused()).unwrap();
        let handle = sim.handle();
        let done = handle.step(1500).unwrap();
        assert_eq!(done.step, 1500, "{name}");
        let mut state = handle.latest_state_buffer();
        assert!(handle.latest_state(&mut state));
        assert_eq!(state.step, 1500);
        assert!(
            state.qpos.iter().chain(&state.qvel).all(|v| v.is_finite()),
            "{name}: finite state"
        );
        assert_eq!(
            handle.stats().instabilities,
            0,
            "{name}: MuJoCo reported no instability"
        );
        if world.robots[0].floating_joint.is_some() {
            let z = base_height(&world, &handle);
            assert!(
                z > 0.05,
                "{name}: the floating base rests above the floor (z = {z})"
            );
        }
    }
}

#[test]
fn every_config_runs_through_the_binary() {
    for name in SHIPPED_CONFIGS {
        let path = repo().join("config").join(name);
        let out = run_bridge(
            &[
                "--config",
                path.to_str().unwrap(),
                "--mode",
                "fast",
                "--steps",
                "500",
            ],
            &[],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("steps 500,") && stdout.contains("sim time 1.000000 s"),
            "{name}: {stdout}"
        );
    }
    // The embedded default robot needs no file at all: run it from an empty folder.
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mujoco_bridge"))
        .args(["--duration", "0.2"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("steps 100,"));
}

#[test]
fn paused_holds_and_step_n_is_exact() {
    let world = world_from_config_file("default.yaml");
    let dt = world.model.opt().timestep;
    let sim = Simulation::start(&world, &paused()).unwrap();
    let handle = sim.handle();
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(handle.stats().steps, 0, "no step while paused");
    let done = handle.step(37).unwrap();
    assert_eq!(done.step, 37);
    assert!((done.time - 37.0 * dt).abs() < 1e-12);
    let done = handle.step(3).unwrap();
    assert_eq!(done.step, 40);
    // Step N is refused while running.
    handle.set_mode(SimMode::Fast).unwrap();
    assert!(handle.step(1).is_err());
    handle.pause().unwrap();
    let held = handle.stats().steps;
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(handle.stats().steps, held, "pause holds");
}

#[test]
fn commands_are_applied_clamped_or_rejected() {
    let world = world_from_config_file("default.yaml");
    let robot = &world.robots[0];
    let elbow = robot.actuator("arm_elbow").unwrap().id as u32;
    let finger = robot.actuator("finger_left_joint").unwrap().id as u32;
    let sim = Simulation::start(&world, &paused()).unwrap();
    let handle = sim.handle();
    handle.send(Command::Actuator {
        source: ControlSource::Ros,
        actuator: elbow,
        value: 1.0,
    });
    handle.send(Command::Actuator {
        source: ControlSource::Ros,
        actuator: finger,
        value: 5.0,
    }); // above ctrlrange [0, 0.04]
    handle.send(Command::Actuator {
        source: ControlSource::Ros,
        actuator: elbow + 1000,
        value: 1.0,
    }); // unknown id
    handle.send(Command::Actuator {
        source: ControlSource::Ros,
        actuator: elbow,
        value: f64::NAN,
    }); // rejected, 1.0 stays
    handle.step(1000).unwrap();
    let mut state = handle.latest_state_buffer();
    handle.latest_state(&mut state);
    assert_eq!(
        state.ctrl[elbow as usize], 1.0,
        "sticky, NaN did not overwrite it"
    );
    assert_eq!(state.ctrl[finger as usize], 0.04, "clamped to ctrlrange");
    assert_eq!(handle.stats().rejected_commands, 2);
    // The position servo brings the elbow to its target; the mimic finger follows the other.
    let m = &world.model;
    let qadr = |j: &str| m.jnt_qposadr()[robot.joint(j).unwrap().id] as usize;
    assert!(
        (state.qpos[qadr("arm_elbow")] - 1.0).abs() < 0.05,
        "elbow {}",
        state.qpos[qadr("arm_elbow")]
    );
    let (left, right) = (
        state.qpos[qadr("finger_left_joint")],
        state.qpos[qadr("finger_right_joint")],
    );
    assert!(
        left > 0.03 && (left - right).abs() < 2e-3,
        "fingers {left} {right}"
    );
    // The mobile base stands on its wheels and caster.
    let z = base_height(&world, &handle);
    assert!((z - 0.08).abs() < 0.01, "base height {z}");
}

#[test]
fn snapshots_are_consistent_while_the_thread_runs() {
    let world = world_from_config_file("go1.yaml");
    let dt = world.model.opt().timestep;
    let sim = Simulation::start(
        &world,
        &SimConfig {
            mode: SimMode::Fast,
            ..Default::default()
        },
    )
    .unwrap();
    let handle = sim.handle();
    let mut state = handle.latest_state_buffer();
    let mut reads = 0;
    let mut last_step = 0;
    let until = Instant::now() + Duration::from_millis(400);
    while Instant::now() < until {
        assert!(handle.latest_state(&mut state));
        // time and step are written by the same publish: a torn read would break this.
        assert!(
            (state.time - state.step as f64 * dt).abs() < 1e-9,
            "step {} time {}",
            state.step,
            state.time
        );
        assert!(state.step >= last_step, "steps never go back");
        last_step = state.step;
        reads += 1;
    }
    assert!(
        reads > 100 && last_step > 100,
        "{reads} reads, {last_step} steps"
    );
}

#[test]
fn substeps_run_every_phase_and_batch_ends_exactly() {
    let world = world_from_config_file("default.yaml");
    let config = SimConfig {
        mode: SimMode::Paused,
        substeps: 4,
        ..Default::default()
    };
    let sim = Simulation::start(&world, &config).unwrap();
    let handle = sim.handle();
    // A batch end that falls inside a tick of four substeps still stops on the exact step.
    handle.pause_at_step(10);
    handle.set_mode(SimMode::Fast).unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while handle.mode() != SimMode::Paused && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(handle.mode(), SimMode::Paused);
    let mut state = handle.latest_state_buffer();
    handle.latest_state(&mut state);
    assert_eq!(
        (handle.stats().steps, state.step),
        (10, 10),
        "every substep publishes"
    );
}
