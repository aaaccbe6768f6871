//! A step that diverges never resets the world silently: each `sim.on_divergence` answer,
//! counted, with sim time going on; and a batch run that diverged ends with a message
//! instead of waiting for steps that will not come.
mod common;

use common::*;
use mujoco_bridge::sim::{SimHandle, Simulation};

/// A hinge so stiff that a 10 ms step cannot follow its spring: the first step diverges.
const STIFF: &str = "<mujoco><option timestep='0.01'/><worldbody>\
    <body name='arm' pos='0 0 1'><joint name='hinge' stiffness='1e12' springref='1'/>\
    <geom type='capsule' fromto='0 0 0 0.3 0 0' size='.02' mass='0.01'/></body>\
    <body name='ball' pos='1 0 1'><freejoint/><geom size='0.1' mass='1'/></body>\
    </worldbody></mujoco>";

fn start(policy: &str) -> (Simulation, SimHandle) {
    let yaml = format!(
        "sim: {{on_divergence: {policy}}}\nrobots:\n  - name: rig\n    mjcf_string: \"{STIFF}\"\n"
    );
    let world = world_from_yaml(&yaml, &repo());
    let sim = Simulation::start(&world, &paused()).unwrap();
    let handle = sim.handle();
    (sim, handle)
}

#[test]
fn restore_puts_back_a_good_state_pauses_and_time_goes_on() {
    let (_sim, handle) = start("restore");
    // The request ends early: the physics thread paused itself on the divergence.
    let _ = handle.step(20);
    let stats = handle.stats();
    assert_eq!(stats.instabilities, 1, "counted once");
    assert!(
        stats.sim_time > 0.0,
        "time did not go back to 0: {}",
        stats.sim_time
    );
    let state = state(&handle);
    assert!(state.qpos.iter().all(|v| v.is_finite()), "{:?}", state.qpos);
    let said = handle.last_divergence().unwrap();
    println!("{said}");
    assert!(
        said.contains("joint 'rig_hinge'") && said.contains("put back"),
        "{said}"
    );
}

#[test]
fn reset_runs_on_from_the_initial_state_with_time_increasing() {
    let (_sim, handle) = start("reset");
    let mut last = 0.0;
    for _ in 0..5 {
        handle.step(2).unwrap();
        let time = handle.stats().sim_time;
        assert!(time > last, "sim time went back: {time} after {last}");
        last = time;
    }
    let stats = handle.stats();
    assert!(stats.instabilities >= 5, "{}", stats.instabilities);
    // The free ball fell only since the last reset: it starts over each time.
    let ball = state(&handle).qpos[3];
    assert!(ball > 0.99, "{ball}");
}

#[test]
fn a_batch_run_that_diverges_says_so_and_ends() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("stiff.xml");
    std::fs::write(&model, STIFF).unwrap();
    let out = run_bridge(&["--mjcf", model.to_str().unwrap(), "--steps", "50"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a step diverged"), "{stderr}");
    assert!(
        stderr.contains("stopped short of its last step"),
        "{stderr}"
    );
    assert!(stdout.contains("instabilities 1"), "{stdout}");
}
