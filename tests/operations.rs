//! Operations of the simulation core on real models: reset to a keyframe that holds,
//! snapshots (exact reproduction, files, wrong model refused), determinism with stamped
//! commands, CSV record and replay, wrenches, body poses, and refused bad operations.
mod common;

use common::*;
use mujoco_bridge::config::{ControlSource, SimMode};
use mujoco_bridge::control::Trajectory;
use mujoco_bridge::model::World;
use mujoco_bridge::sim::{Command, SimHandle, Simulation};

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// Robot joints (hinge and slide) with their qpos address and keyframe value.
fn keyframe_joints(world: &World, robot: usize, key: &str) -> Vec<(String, usize, f64)> {
    let m = &world.model;
    let k = world.robots[robot].keyframe(key).unwrap().id;
    let nq = m.ffi().nq as usize;
    world.robots[robot]
        .joints
        .iter()
        .filter(|j| world.robots[robot].floating_joint != Some(j.id))
        .map(|j| {
            let adr = m.jnt_qposadr()[j.id] as usize;
            (j.name.clone(), adr, m.key_qpos()[k * nq + adr])
        })
        .collect()
}

#[test]
fn reset_to_keyframe_then_two_seconds_stays_at_the_pose() {
    // Tolerances are the servos' sag under load (Spot stands on its knees), not a pull back.
    for (config, key, tolerance) in [
        ("default.yaml", "ready", 0.03),
        ("panda.yaml", "home", 0.01),
        ("spot.yaml", "home", 0.08),
    ] {
        let world = world_from_config_file(config);
        let sim = Simulation::start(&world, &paused()).unwrap();
        let h = sim.handle();
        h.step(200).unwrap(); // away from the initial state first
        h.reset_to_keyframe(Some(0), key).unwrap();
        let s = state(&h);
        for (name, adr, want) in keyframe_joints(&world, 0, key) {
            assert_eq!(s.qpos[adr], want, "{config}: {name} right after the reset");
        }
        h.step(1000).unwrap(); // 2 s
        let s = state(&h);
        for (name, adr, want) in keyframe_joints(&world, 0, key) {
            if name.contains("wheel") || name.contains("caster") {
                continue; // free-spinning joints have no pose to hold
            }
            assert!(
                (s.qpos[adr] - want).abs() < tolerance,
                "{config}: {name} drifted to {} from {want}",
                s.qpos[adr]
            );
        }
    }
}

/// A trajectory still running must not leave its setpoints behind as sticky commands when an
/// operation sets every command itself.
#[test]
fn reset_and_reset_to_keyframe_during_a_trajectory_leave_none_of_it_behind() {
    let world = world_from_config_file("panda.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    let trajectory = |h: &SimHandle| {
        h.follow_trajectory(
            0,
            &["joint1", "joint2"],
            Trajectory::through(&[2.0], &[0.8, 0.6], &[]),
        )
        .unwrap();
        h.step(500).unwrap(); // halfway
    };
    trajectory(&h);
    h.reset().unwrap();
    let status = h.control_status(0).unwrap();
    assert!(
        status.values.iter().all(|v| *v == 0.0),
        "reset zeroes every sticky command: {:?}",
        status.values
    );

    trajectory(&h);
    h.reset_to_keyframe(Some(0), "home").unwrap();
    h.step(1000).unwrap(); // 2 s: the old trajectory's halfway setpoint would pull joint1 away
    let s = state(&h);
    for (name, adr, want) in keyframe_joints(&world, 0, "home") {
        if name.starts_with("finger") {
            continue;
        }
        assert!(
            (s.qpos[adr] - want).abs() < 0.01,
            "{name} at {} instead of the keyframe's {want}",
            s.qpos[adr]
        );
    }
}

/// Step N runs one step per turn of the physics loop: other operations are answered meanwhile,
/// and a mode change ends it early, so no step count can hold the physics thread.
#[test]
fn a_huge_step_request_keeps_the_thread_responsive_and_ends_on_pause() {
    let world = world_from_config_file("panda.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    let stepper = h.clone();
    let running = std::thread::spawn(move || stepper.step(u64::MAX / 2));
    while h.stats().steps < 200 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Answered while the steps run.
    h.hold_keyframe(Some(0), "home").unwrap();
    assert!(
        h.step(10)
            .unwrap_err()
            .to_string()
            .contains("already running")
    );
    h.set_mode(SimMode::Paused).unwrap();
    let e = running.join().unwrap().unwrap_err().to_string();
    assert!(e.contains("interrupted"), "{e}");
    let steps = h.stats().steps;
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(h.stats().steps, steps, "paused again");
    let done = h.step(5).unwrap();
    assert_eq!(done.step, steps + 5);
}

#[test]
fn hold_keyframe_drives_to_the_pose_without_a_reset() {
    let world = world_from_config_file("panda.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.step(100).unwrap();
    let time_before = h.stats().sim_time;
    h.hold_keyframe(Some(0), "home").unwrap();
    assert_eq!(h.stats().sim_time, time_before, "no reset");
    h.step(1500).unwrap();
    let s = state(&h);
    for (name, adr, want) in keyframe_joints(&world, 0, "home") {
        if name.starts_with("finger") {
            continue; // the fingers follow the tendon actuator
        }
        assert!(
            (s.qpos[adr] - want).abs() < 0.02,
            "{name}: {} vs {want}",
            s.qpos[adr]
        );
    }
}

/// Drives the default robot (base twist, arm servo, PD with gravity compensation) and
/// returns qpos bits every 50 steps over `steps` steps.
fn trajectory_bits(h: &SimHandle, steps: u64) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    for k in 0..steps / 50 {
        h.command_twist(ControlSource::Ros, 0, 0.2, 0.0, 0.3 * (k % 3) as f64)
            .unwrap();
        h.step(50).unwrap();
        out.push(bits(&state(h).qpos));
    }
    out
}

#[test]
fn snapshot_restore_reproduces_the_later_trajectory_exactly() {
    let world = world_from_config_file("default.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.command_actuators(
        ControlSource::Ros,
        0,
        &["arm_elbow", "arm_shoulder_yaw"],
        &[1.0, 0.5],
    )
    .unwrap();
    h.command_twist(ControlSource::Ros, 0, 0.3, 0.0, 0.2)
        .unwrap();
    h.step(300).unwrap();
    let snapshot = h.capture().unwrap();
    let first = trajectory_bits(&h, 500);
    h.restore(snapshot.clone()).unwrap();
    let second = trajectory_bits(&h, 500);
    assert!(first == second, "bit-identical after restore");
    // Named in-memory snapshots and files, too.
    h.restore(snapshot.clone()).unwrap();
    h.save_named_snapshot("before").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("state.snap");
    h.save_snapshot_file(&file).unwrap();
    let third = trajectory_bits(&h, 500);
    h.restore_named_snapshot("before").unwrap();
    assert_eq!(trajectory_bits(&h, 500), third);
    h.load_snapshot_file(&file).unwrap();
    assert_eq!(trajectory_bits(&h, 500), third);
    assert_eq!(h.snapshot_names(), ["before"]);
    assert!(h.restore_named_snapshot("nope").is_err());
}

#[test]
fn snapshot_with_pd_and_gravity_compensation_restores_exactly() {
    let world = panda_with_motors("      mode: pd\n      gravity_compensation: true\n");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.command_actuators(ControlSource::Ros, 0, &["joint2", "joint4"], &[0.6, -1.2])
        .unwrap();
    h.step(200).unwrap();
    let snapshot = h.capture().unwrap();
    h.step(400).unwrap();
    let first = bits(&state(&h).qpos);
    h.restore(snapshot).unwrap();
    h.step(400).unwrap();
    assert_eq!(bits(&state(&h).qpos), first);
}

#[test]
fn a_snapshot_of_another_model_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("panda.snap");
    let panda = world_from_config_file("panda.yaml");
    let sim = Simulation::start(&panda, &paused()).unwrap();
    sim.handle().step(10).unwrap();
    sim.handle().save_snapshot_file(&file).unwrap();
    drop(sim);
    let go1 = world_from_config_file("go1.yaml");
    let sim = Simulation::start(&go1, &paused()).unwrap();
    let h = sim.handle();
    let e = h.load_snapshot_file(&file).unwrap_err().to_string();
    assert!(
        e.contains("another model") && e.contains("fingerprint"),
        "{e}"
    );
    // A corrupt file names the problem.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[60] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let e = h.load_snapshot_file(&file).unwrap_err().to_string();
    assert!(e.contains("panda.snap") && e.contains("corrupt"), "{e}");
    assert_eq!(h.step(5).unwrap().step, 5, "still running");
}

/// One run of the lockstep test: stamped commands sent in the given order, then stepping.
fn lockstep_run(world: &World, log: &[(u64, Command)], send_all_first: bool) -> Vec<Vec<u64>> {
    let sim = Simulation::start(world, &paused()).unwrap();
    let h = sim.handle();
    if send_all_first {
        for (step, command) in log.iter().rev() {
            h.send_at(*step, *command);
        }
    }
    let mut out = Vec::new();
    for block in 0..20u64 {
        if !send_all_first {
            // Block b runs steps 100 b + 1 ..= 100 (b + 1): send each command before its block.
            for (step, command) in log.iter().filter(|(s, _)| (s - 1) / 100 == block) {
                h.send_at(*step, *command);
            }
        }
        h.step(100).unwrap();
        out.push(bits(&state(&h).qpos));
    }
    assert_eq!(h.stats().late_commands, 0);
    out
}

#[test]
fn lockstep_runs_with_the_same_command_log_are_bit_identical() {
    let world = world_from_config_file("g1.yaml");
    let robot = &world.robots[0];
    let actuator = |name: &str| robot.actuator(name).unwrap().id as u32;
    let joints = [
        "left_knee_joint",
        "right_knee_joint",
        "left_hip_pitch_joint",
        "waist_yaw_joint",
    ];
    let mut log = Vec::new();
    for (k, name) in joints.iter().enumerate() {
        for step in [37u64, 400, 1234, 1777] {
            let value = ((step as f64) * 0.01 + k as f64).sin() * 20.0;
            // G1's config gives its control to legacy ZMQ clients.
            let command = Command::Actuator {
                source: ControlSource::Zmq,
                actuator: actuator(name),
                value,
            };
            log.push((step + k as u64, command));
        }
    }
    let a = lockstep_run(&world, &log, true);
    let b = lockstep_run(&world, &log, false);
    let first_difference =
        |x: &[Vec<u64>], y: &[Vec<u64>]| x.iter().zip(y).position(|(p, q)| p != q);
    assert_eq!(
        first_difference(&a, &b),
        None,
        "same model, start state and command log: identical bits"
    );
    let c = lockstep_run(&world, &log[1..], true);
    assert!(
        first_difference(&a, &c).is_some(),
        "and the commands do matter"
    );
}

#[test]
fn csv_round_trip_record_then_kinematic_replay() {
    let world = world_from_config_file("default.yaml");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let recorded: Vec<Vec<f64>> = {
        let sim = Simulation::start(&world, &paused()).unwrap();
        let h = sim.handle();
        h.command_twist(ControlSource::Ros, 0, 0.3, 0.0, 0.4)
            .unwrap();
        h.command_actuators(ControlSource::Ros, 0, &["arm_elbow"], &[1.0])
            .unwrap();
        h.start_recording(&csv).unwrap();
        let mut rows = Vec::new();
        for _ in 0..300 {
            h.step(1).unwrap();
            rows.push(state(&h).qpos);
        }
        let summary = h.stop_recording().unwrap();
        assert_eq!((summary.rows, summary.dropped), (300, 0));
        rows
    };
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("time,mobile_floating_base[0],"),
        "{header}"
    );
    assert!(
        header.contains(",mobile_arm_elbow,") && header.contains(",mobile_arm_elbow.vel"),
        "{header}"
    );
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(first[0], "0.002000", "time %.6f");
    assert_eq!(first[1].split('.').nth(1).unwrap().len(), 8, "values %.8f");
    assert_eq!(text.lines().count(), 301);

    // Replay on a fresh simulation: every step shows the recorded row (to CSV precision).
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.play_csv(&csv).unwrap();
    for (i, row) in recorded.iter().enumerate() {
        h.step(1).unwrap();
        let q = state(&h).qpos;
        for (a, b) in q.iter().zip(row) {
            assert!((a - b).abs() < 2e-8, "step {i}: {a} vs {b}");
        }
    }
    h.step(1).unwrap();
    assert_eq!(h.mode(), SimMode::Paused, "playback ended");

    // An external CSV naming joints without the robot prefix, a subset of them.
    let external = dir.path().join("external.csv");
    std::fs::write(
        &external,
        "time,arm_elbow,arm_wrist\n0.0,0.0,0.0\n1.0,1.0,-0.5\n",
    )
    .unwrap();
    h.play_csv(&external).unwrap();
    h.step(251).unwrap(); // the first step shows the row at 0.0, step 251 the time 0.5
    let q = state(&h).qpos;
    let elbow = world.model.jnt_qposadr()[world.robots[0].joint("arm_elbow").unwrap().id] as usize;
    assert!((q[elbow] - 0.5).abs() < 1e-9, "interpolated: {}", q[elbow]);
    // Bad files name the column or line.
    std::fs::write(&external, "time,no_such_joint\n0,1\n").unwrap();
    let e = h.play_csv(&external).unwrap_err().to_string();
    assert!(e.contains("no_such_joint"), "{e}");
    std::fs::write(&external, "time,arm_elbow\n0,1\n1,inf\n").unwrap();
    let e = h.play_csv(&external).unwrap_err().to_string();
    assert!(e.contains("line 3"), "{e}");
}

#[test]
fn wrench_for_a_duration_and_body_pose() {
    let world = world_from_config_file("go1.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    let trunk = world.robots[0].body("trunk").unwrap().id;
    h.set_body_pose(Some(0), "trunk", [1.0, 2.0, 0.6], [1.0, 0.0, 0.0, 0.0])
        .unwrap();
    let s = state(&h);
    assert_eq!(
        &s.xpos[3 * trunk..3 * trunk + 3],
        &[1.0, 2.0, 0.6],
        "placed at once"
    );
    // 400 N up for 0.1 s lifts the 12 kg robot; then it falls back.
    h.apply_wrench(Some(0), "trunk", [0.0, 0.0, 400.0], [0.0; 3], 0.1)
        .unwrap();
    h.step(50).unwrap();
    let z_pushed = state(&h).xpos[3 * trunk + 2];
    assert!(z_pushed > 0.62, "lifted to {z_pushed}");
    h.step(500).unwrap();
    let z_after = state(&h).xpos[3 * trunk + 2];
    assert!(
        z_after < 0.5,
        "the wrench ended; the robot fell to {z_after}"
    );
    // Bad operations are refused with a reason, and nothing stops the physics thread.
    let errors = [
        h.apply_wrench(Some(0), "trunk", [f64::NAN, 0.0, 0.0], [0.0; 3], 0.1)
            .unwrap_err(),
        h.apply_wrench(Some(0), "trunk", [1.0, 0.0, 0.0], [0.0; 3], -1.0)
            .unwrap_err(),
        h.apply_wrench(Some(0), "no_body", [1.0, 0.0, 0.0], [0.0; 3], 1.0)
            .unwrap_err(),
        h.set_body_pose(Some(0), "FR_calf", [0.0; 3], [1.0, 0.0, 0.0, 0.0])
            .unwrap_err(),
        h.set_body_pose(Some(0), "trunk", [0.0; 3], [0.0; 4])
            .unwrap_err(),
        h.reset_to_keyframe(Some(0), "no_key").unwrap_err(),
    ];
    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert!(text[3].contains("free joint"), "{}", text[3]);
    assert!(
        text[5].contains("no_key") && text[5].contains("go1_home"),
        "{}",
        text[5]
    );
    assert_eq!(h.step(3).unwrap().step, 553);
}
