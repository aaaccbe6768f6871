//! Controllers at physics rate on real robot models: PD (legacy semantics) with gravity
//! compensation, the trajectory follower, the keyframe sequencer with built-in presets,
//! differential-drive and planar bases, control sources, set_gains, reset, bad commands.
mod common;

use common::*;
use mujoco_bridge::config::{ControlMode, ControlSource};
use mujoco_bridge::control::{PdGains, Trajectory};
use mujoco_bridge::model::World;
use mujoco_bridge::sim::{GainsUpdate, Simulation, StateSnapshot};
use std::path::Path;

fn joint_q(world: &World, s: &StateSnapshot, robot: usize, joint: &str) -> f64 {
    s.qpos[world.model.jnt_qposadr()[world.robots[robot].joint(joint).unwrap().id] as usize]
}

/// Yaw of the robot's root body, from its world quaternion (w, x, y, z).
fn base_pose(world: &World, s: &StateSnapshot) -> (f64, f64, f64) {
    let b = world.robots[0].root_body.unwrap();
    let q = &s.xquat_wxyz[4 * b..4 * b + 4];
    let yaw = (2.0 * (q[0] * q[3] + q[1] * q[2])).atan2(1.0 - 2.0 * (q[2] * q[2] + q[3] * q[3]));
    (s.xpos[3 * b], s.xpos[3 * b + 1], yaw)
}

#[test]
fn pd_reaches_its_targets_with_gravity_compensation() {
    let world = panda_with_motors("      mode: pd\n      gravity_compensation: true\n");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    let joints = ["joint1", "joint2", "joint4", "joint6"];
    let targets = [0.4, 0.5, -1.6, 1.8];
    h.command_actuators(ControlSource::Ros, 0, &joints, &targets)
        .unwrap();
    // joint4's range is [-3.07, -0.07]: a target of +1 is clamped to the range by the PD law.
    h.command_actuators(ControlSource::Ros, 0, &["joint4"], &[1.0])
        .unwrap();
    h.step(1500).unwrap();
    let s = state(&h);
    for (joint, target) in joints.iter().zip(targets) {
        let q = joint_q(&world, &s, 0, joint);
        let want = if *joint == "joint4" { -0.0698 } else { target };
        assert!((q - want).abs() < 0.02, "{joint}: {q} vs {want}");
    }
    let status = h.control_status(0).unwrap();
    assert_eq!(status.mode, ControlMode::Pd);
    assert_eq!(
        status.gains[0],
        PdGains {
            kp: 100.0,
            kv: 5.0,
            torque_limit: 200.0
        },
        "legacy defaults"
    );
}

#[test]
fn trajectory_follower_reaches_the_goal_through_its_points() {
    let world = world_from_config_file("panda.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    // Two points, with velocities (cubic Hermite); Menagerie's Panda has position servos.
    h.follow_trajectory(
        0,
        &["joint1", "joint2"],
        Trajectory::through(&[1.0, 2.0], &[0.3, 0.2, 0.6, 0.4], &[0.3, 0.2, 0.0, 0.0]),
    )
    .unwrap();
    h.step(500).unwrap(); // t = 1.0 s: the first point
    let s = state(&h);
    assert!((joint_q(&world, &s, 0, "joint1") - 0.3).abs() < 0.05);
    h.step(1000).unwrap(); // t = 3.0 s: a second after the goal
    let s = state(&h);
    assert!(
        (joint_q(&world, &s, 0, "joint1") - 0.6).abs() < 0.01,
        "{}",
        joint_q(&world, &s, 0, "joint1")
    );
    assert!((joint_q(&world, &s, 0, "joint2") - 0.4).abs() < 0.01);
    // After the goal the last point is held as the sticky command.
    h.cancel_trajectory(0).unwrap();
    h.step(500).unwrap();
    assert!((joint_q(&world, &state(&h), 0, "joint1") - 0.6).abs() < 0.01);
    // Bad trajectories are refused with a reason.
    let e = h
        .follow_trajectory(
            0,
            &["joint1"],
            Trajectory::through(&[1.0, 0.5], &[0.1, 0.2], &[]),
        )
        .unwrap_err();
    assert!(e.to_string().contains("increasing"), "{e}");
    let e = h
        .follow_trajectory(0, &["elbow"], Trajectory::through(&[1.0], &[0.1], &[]))
        .unwrap_err();
    assert!(e.to_string().contains("'elbow'"), "{e}");
    let e = h
        .follow_trajectory(
            0,
            &["joint1"],
            Trajectory::through(&[1.0], &[f64::NAN], &[]),
        )
        .unwrap_err();
    assert!(e.to_string().contains("NaN"), "{e}");
}

#[test]
fn keyframe_sequencer_plays_builtin_presets() {
    let world = world_from_config_file("panda.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.load_preset(0, "Franka: Reach-Grasp-Lift").unwrap();
    h.go_to_pose(0, 1).unwrap(); // Reach: blend 1.5 s, hold 0.5 s
    h.step(900).unwrap(); // 1.8 s: blended in, holding
    let s = state(&h);
    for (joint, want) in [("joint2", 0.5), ("joint4", -1.0), ("joint6", 1.5)] {
        let q = joint_q(&world, &s, 0, joint);
        assert!((q - want).abs() < 0.03, "{joint}: {q} vs {want}");
    }
    h.step(350).unwrap(); // 2.5 s: the next pose (Grasp) has begun
    h.stop_preset(0).unwrap();
    // Stopped, the robot holds the pose it had reached: the targets stay sticky.
    let held = h.control_status(0).unwrap().values;
    assert!((held[1] - 0.5).abs() < 1e-9, "joint2 target {}", held[1]);
    assert!((held[3] + 1.0).abs() < 1e-9, "joint4 target {}", held[3]);
    h.step(500).unwrap();
    let s = state(&h);
    assert!((joint_q(&world, &s, 0, "joint2") - 0.5).abs() < 0.03);
    assert!((joint_q(&world, &s, 0, "joint4") + 1.0).abs() < 0.03);
    assert!(h.load_preset(0, "No such preset").is_err());

    // Spot's knee cycle: pose 1 extends the front-right knee (blend 0.5 s, hold 1.5 s).
    let world = world_from_config_file("spot.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.reset_to_keyframe(Some(0), "home").unwrap();
    h.load_preset(0, "Spot: FR Knee Cycle").unwrap();
    h.go_to_pose(0, 1).unwrap();
    h.step(600).unwrap();
    let s = state(&h);
    let fr_kn = joint_q(&world, &s, 0, "fr_kn");
    assert!(
        (fr_kn + 0.256).abs() < 0.05,
        "fr_kn {fr_kn} (target -0.248, range limit -0.256)"
    );
    assert!(
        (joint_q(&world, &s, 0, "fl_kn") + 1.8).abs() < 0.1,
        "the other legs stay home"
    );
}

#[test]
fn user_presets_come_from_the_config() {
    let yaml = format!(
        "robots:\n  - name: panda\n    mjcf: {}\n    control:\n      source: player\n      preset: nod\n      autoplay: true\n      presets:\n        - name: nod\n          loop: false\n          poses:\n            - {{name: down, targets: [0, 0.6, 0, -1.2, 0, 1.8, 0.8, 0], hold: 0.5, blend: 0.5}}\n",
        models()
            .join("menagerie/franka_emika_panda/panda.xml")
            .display()
    );
    let world = world_from_yaml(&yaml, Path::new("."));
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.step(1500).unwrap(); // 0.5 s delay + 0.5 s blend, then held
    assert!((joint_q(&world, &state(&h), 0, "joint2") - 0.6).abs() < 0.03);
    // The player drives this robot: ROS commands are ignored (and counted).
    h.command_actuators(ControlSource::Ros, 0, &["joint2"], &[0.0])
        .unwrap();
    h.step(10).unwrap();
    assert_eq!(h.stats().ignored_commands, 1);
}

/// A robot without a base controller (its twist only goes to legacy clients) reads zeros
/// again half a second of sim time after the last twist: nobody drives any more.
#[test]
fn the_twist_of_a_robot_without_a_base_times_out() {
    let world = world_from_config_file("panda.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.command_twist(ControlSource::Ros, 0, 0.4, -0.2, 0.8)
        .unwrap();
    h.step(1).unwrap();
    assert_eq!(h.twist(0), [0.4, -0.2, 0.8]);
    h.step(240).unwrap(); // 0.48 s after it
    assert_eq!(h.twist(0), [0.4, -0.2, 0.8]);
    h.step(20).unwrap(); // 0.52 s
    assert_eq!(h.twist(0), [0.0, 0.0, 0.0]);
}

#[test]
fn diff_drive_moves_the_default_robot_as_commanded() {
    let world = world_from_config_file("default.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    let start = base_pose(&world, &state(&h));
    // 0.3 m/s for 2 s, re-sent every 0.2 s like a teleop node (the timeout is 0.5 s).
    for _ in 0..10 {
        h.command_twist(ControlSource::Ros, 0, 0.3, 0.0, 0.0)
            .unwrap();
        h.step(100).unwrap();
    }
    let (x, y, yaw) = base_pose(&world, &state(&h));
    assert!((x - start.0 - 0.6).abs() < 0.08, "forward {}", x - start.0);
    assert!(
        (y - start.1).abs() < 0.02 && yaw.abs() < 0.05,
        "straight: y {y}, yaw {yaw}"
    );
    assert_eq!(h.twist(0), [0.3, 0.0, 0.0]);
    // Turning in place at 0.5 rad/s for 2 s.
    for _ in 0..10 {
        h.command_twist(ControlSource::Ros, 0, 0.0, 0.0, 0.5)
            .unwrap();
        h.step(100).unwrap();
    }
    let (x2, _, yaw2) = base_pose(&world, &state(&h));
    assert!((yaw2 - 1.0).abs() < 0.15, "turned {yaw2}");
    assert!((x2 - x).abs() < 0.05, "in place");
    // Without a new twist the base stops after the timeout; the twist reads zero.
    h.step(500).unwrap();
    assert_eq!(h.twist(0), [0.0, 0.0, 0.0]);
    let before = base_pose(&world, &state(&h));
    h.step(250).unwrap();
    let after = base_pose(&world, &state(&h));
    assert!((after.2 - before.2).abs() < 0.01, "stopped");
}

#[test]
fn planar_base_follows_the_twist() {
    let yaml = format!(
        "world: {{floor: true}}\nrobots:\n  - name: mobile\n    urdf: {}\n    floating_base: true\n    pose: {{xyz: [0, 0, 0.0805]}}\n    control:\n      base: {{type: planar, cmd_vel_timeout: 0}}\n",
        repo().join("urdf/mobile_manipulator.urdf").display()
    );
    let world = world_from_yaml(&yaml, Path::new("."));
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.command_twist(ControlSource::Ros, 0, 0.0, 0.2, 0.0)
        .unwrap(); // sideways, sticky
    h.step(500).unwrap();
    let (x, y, _) = base_pose(&world, &state(&h));
    assert!((y - 0.2).abs() < 0.02 && x.abs() < 0.02, "x {x} y {y}");
}

#[test]
fn control_sources_switch_at_run_time() {
    let world = world_from_config_file("default.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    h.command_actuators(ControlSource::Zmq, 0, &["arm_elbow"], &[0.8])
        .unwrap();
    h.step(5).unwrap();
    assert_eq!(
        h.stats().ignored_commands,
        1,
        "zmq does not drive this robot"
    );
    assert_eq!(h.control_status(0).unwrap().values[4], 0.0);
    h.set_source(0, ControlSource::Zmq).unwrap();
    h.command_actuators(ControlSource::Zmq, 0, &["arm_elbow"], &[0.8])
        .unwrap();
    h.step(5).unwrap();
    let status = h.control_status(0).unwrap();
    assert_eq!(status.source, ControlSource::Zmq);
    assert_eq!(status.values[4], 0.8, "sticky until overwritten");
    h.reset().unwrap();
    assert_eq!(
        h.control_status(0).unwrap().values[4],
        0.0,
        "reset zeroes commands"
    );
}

#[test]
fn set_gains_follows_the_legacy_semantics() {
    let world = world_from_config_file("g1.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    let knee = h.actuator_index(0, "left_knee_joint").unwrap();
    let hip = h.actuator_index(0, "left_hip_pitch_joint").unwrap();
    let elbow = h.actuator_index(0, "left_elbow_joint").unwrap();
    h.set_gains(
        0,
        &[(
            "left_knee_joint".into(),
            GainsUpdate {
                kp: Some(120.0),
                kv: Some(6.0),
                torque_limit: Some(150.0),
            },
        )],
    )
    .unwrap();
    // A second message: the knee is not named any more and returns to the defaults; a full
    // name works too; missing inner keys take their defaults.
    h.set_gains(
        0,
        &[(
            "g1_left_hip_pitch_joint".into(),
            GainsUpdate {
                kp: Some(80.0),
                ..Default::default()
            },
        )],
    )
    .unwrap();
    let status = h.control_status(0).unwrap();
    assert_eq!(status.mode, ControlMode::Pd, "receiving gains enables PD");
    assert_eq!(
        status.gains[hip],
        PdGains {
            kp: 80.0,
            kv: 5.0,
            torque_limit: 200.0
        }
    );
    assert_eq!(
        status.gains[knee],
        PdGains::DEFAULT,
        "unnamed actuators reset to the defaults"
    );
    assert_eq!(status.gains[elbow], PdGains::DEFAULT);
    assert!(
        h.set_gains(0, &[("no_such_joint".into(), GainsUpdate::default())])
            .is_err()
    );
}

#[test]
fn bad_commands_are_refused_counted_and_the_physics_thread_keeps_running() {
    let world = world_from_config_file("default.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    let cases: Vec<Box<dyn Fn() -> bool>> = vec![
        Box::new(|| {
            h.command_actuators(ControlSource::Ros, 0, &["arm_elbow"], &[f64::NAN])
                .is_err()
        }),
        Box::new(|| {
            h.command_actuators(ControlSource::Ros, 0, &["arm_elbow"], &[f64::INFINITY])
                .is_err()
        }),
        Box::new(|| {
            h.command_actuators(ControlSource::Ros, 0, &["no_joint"], &[0.1])
                .is_err()
        }),
        Box::new(|| {
            h.command_actuators(ControlSource::Ros, 0, &["arm_elbow", "arm_wrist"], &[0.1])
                .is_err()
        }),
        Box::new(|| h.command_all(ControlSource::Ros, 0, &[0.0; 3]).is_err()),
        Box::new(|| {
            h.command_twist(ControlSource::Ros, 0, f64::NAN, 0.0, 0.0)
                .is_err()
        }),
        Box::new(|| {
            h.command_twist(ControlSource::Ros, 7, 0.1, 0.0, 0.0)
                .is_err()
        }),
    ];
    for (i, case) in cases.iter().enumerate() {
        assert!(case(), "case {i} must be refused");
    }
    assert_eq!(
        h.stats().rejected_commands,
        6,
        "each bad command is counted (the unknown robot is a refused operation)"
    );
    assert_eq!(h.stats().refused_operations, 1, "the unknown robot");
    // Operations naming what does not exist are refused with the name, and counted.
    let e = h.reset_to_keyframe(Some(0), "no_key").unwrap_err();
    assert!(e.to_string().contains("'no_key'"), "{e}");
    let e = h.load_preset(0, "No such preset").unwrap_err();
    assert!(e.to_string().contains("'No such preset'"), "{e}");
    let e = h.robot_index("nobody").unwrap_err();
    assert!(e.to_string().contains("'nobody'"), "{e}");
    assert!(
        h.set_speed(f64::NAN).is_err(),
        "refused by the physics thread"
    );
    assert_eq!(h.stats().refused_operations, 5);
    // Values outside ctrlrange are clamped (documented), not refused.
    h.command_actuators(ControlSource::Ros, 0, &["arm_elbow"], &[9.0])
        .unwrap();
    let done = h.step(10).unwrap();
    assert_eq!(done.step, 10, "the physics thread is alive");
    assert_eq!(h.control_status(0).unwrap().values[4], 2.4);
}

/// Panda's arm, with a controllers file whose manager runs at `update_rate` Hz when given.
fn panda_with_update_rate(dir: &Path, update_rate: Option<u32>) -> World {
    let rate = update_rate.map_or(String::new(), |hz| format!("    update_rate: {hz}\n"));
    std::fs::write(
        dir.join("controllers.yaml"),
        format!(
            "controller_manager:\n  ros__parameters:\n{rate}    joint_state_broadcaster: {{type: joint_state_broadcaster/JointStateBroadcaster}}\n"
        ),
    )
    .unwrap();
    let yaml = format!(
        "robots:\n  - name: panda\n    mjcf: {}\n    controllers: controllers.yaml\n",
        models()
            .join("menagerie/franka_emika_panda/panda.xml")
            .display()
    );
    world_from_yaml(&yaml, dir)
}

/// ctrl of actuator1 over `steps` steps of a 1 rad/s ramp on joint1.
fn ramp_commands(world: &World, steps: u64) -> Vec<f64> {
    let sim = Simulation::start(world, &paused()).unwrap();
    let h = sim.handle();
    h.follow_trajectory(0, &["joint1"], Trajectory::through(&[1.0], &[1.0], &[]))
        .unwrap();
    (0..steps)
        .map(|_| {
            h.step(1).unwrap();
            state(&h).ctrl[0]
        })
        .collect()
}

#[test]
fn a_controllers_update_rate_holds_trajectory_setpoints_between_its_updates() {
    let dir = tempfile::tempdir().unwrap();
    // 0.5 s at 500 Hz: every step has a setpoint of its own without an update rate, and
    // one per 0.1 s at 10 Hz (0, 0.1, ..., 0.5), each held for 50 steps.
    let every_step = ramp_commands(&panda_with_update_rate(dir.path(), None), 250);
    let at_10_hz = ramp_commands(&panda_with_update_rate(dir.path(), Some(10)), 250);
    let distinct = |values: &[f64]| values.windows(2).filter(|w| w[0] != w[1]).count() + 1;
    assert!(distinct(&every_step) > 200, "{}", distinct(&every_step));
    assert!(
        (5..=6).contains(&distinct(&at_10_hz)),
        "{} setpoints at 10 Hz: {:?}",
        distinct(&at_10_hz),
        at_10_hz
    );
    for (k, value) in at_10_hz.iter().enumerate() {
        // The setpoint of the last update at or before the step's time.
        let updated = ((k as f64 * 0.002) / 0.1 + 1e-9).floor() * 0.1;
        assert!(
            (value - updated).abs() < 1e-9,
            "step {k}: {value} vs {updated}"
        );
    }
}

#[test]
fn quintic_and_open_loop_trajectories_start_where_upstream_starts_them() {
    let world = world_from_config_file("panda.yaml");
    let sim = Simulation::start(&world, &paused()).unwrap();
    let h = sim.handle();
    // A fast ramp: the servo lags its setpoint by several hundredths of a radian.
    h.follow_trajectory(0, &["joint1"], Trajectory::through(&[1.0], &[1.5], &[]))
        .unwrap();
    h.step(250).unwrap();
    let setpoint = state(&h).ctrl[0];
    let measured = joint_q(&world, &state(&h), 0, "joint1");
    assert!((setpoint - measured).abs() > 0.02, "{setpoint} {measured}");
    // open_loop_control: the next trajectory starts from the setpoint, at rest, with
    // accelerations as a quintic (minimum jerk from rest to rest).
    let quintic = Trajectory {
        accelerations: vec![0.0],
        open_loop: true,
        ..Trajectory::through(&[1.0], &[0.0], &[0.0])
    };
    h.follow_trajectory(0, &["joint1"], quintic).unwrap();
    h.step(125).unwrap(); // a quarter of the way in time
    let s: f64 = 0.25;
    let share = 10.0 * s.powi(3) - 15.0 * s.powi(4) + 6.0 * s.powi(5);
    let expected = setpoint + (0.0 - setpoint) * share;
    let now = state(&h).ctrl[0];
    assert!((now - expected).abs() < 0.01, "{now} vs {expected}");
    // Closed loop (the default): it starts from the measured position instead.
    h.step(500).unwrap();
    h.follow_trajectory(0, &["joint1"], Trajectory::through(&[1.0], &[1.5], &[]))
        .unwrap();
    h.step(250).unwrap();
    let measured = joint_q(&world, &state(&h), 0, "joint1");
    h.follow_trajectory(0, &["joint1"], Trajectory::through(&[1.0], &[0.0], &[]))
        .unwrap();
    h.step(1).unwrap();
    let first = state(&h).ctrl[0];
    assert!((first - measured).abs() < 0.01, "{first} vs {measured}");
}
