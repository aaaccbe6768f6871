//! A world that changes while it runs, through the simulation handle: spawning keeps the
//! state of what stays bit for bit (positions, velocities, controller commands, running
//! trajectories), deleting gives the name back, snapshots are refused across a change,
//! commands resolved in an old world never reach the new one, and a spawn that fails leaves
//! the running world as it was.
mod common;

use common::*;
use mujoco_bridge::config::{Config, ControlSource};
use mujoco_bridge::control::Trajectory;
use mujoco_bridge::error::InputError;
use mujoco_bridge::model::build_world;
use mujoco_bridge::sim::{
    Command, OperationError, PlanContext, SimHandle, Simulation, StateSnapshot,
};
use mujoco_bridge::world::{SpawnError, SpawnRequest, SpawnSource, delete, spawn};

const BOX: &str = "<mujoco model='box'><worldbody><body name='body'><freejoint/>\
                   <geom type='box' size='.1 .1 .1' mass='1'/></body></worldbody></mujoco>";

fn request(name: &str, source: SpawnSource, xyz: [f64; 3]) -> SpawnRequest {
    SpawnRequest {
        name: name.into(),
        allow_renaming: false,
        source,
        namespace: String::new(),
        frame: "world".into(),
        position: xyz,
        orientation_xyzw: [0.0, 0.0, 0.0, 1.0],
    }
}

/// qpos and qvel of robot `robot`'s joints, by joint name, from `state` of `handle`'s world.
fn joints_of(handle: &SimHandle, state: &StateSnapshot, robot: &str) -> Vec<(String, f64, f64)> {
    let world = handle.world();
    let model = &world.model;
    let map = &world.robots[world.robot_index(robot).unwrap()];
    let mut values = Vec::new();
    for joint in &map.joints {
        let (q, d) = (
            model.jnt_qposadr()[joint.id] as usize,
            model.jnt_dofadr()[joint.id] as usize,
        );
        values.push((joint.name.clone(), state.qpos[q], state.qvel[d]));
    }
    values
}

fn start() -> (Simulation, SimHandle) {
    start_with(&[])
}

/// `start` with config overrides (`requests.file_roots` for files a test writes).
fn start_with(overrides: &[String]) -> (Simulation, SimHandle) {
    let config = Config::embedded_default(overrides).unwrap();
    let world = build_world(&config).unwrap();
    let sim = Simulation::start(&world, &paused()).unwrap();
    let handle = sim.handle();
    (sim, handle)
}

#[test]
fn a_spawn_keeps_the_running_robot_bit_for_bit_and_a_delete_gives_the_name_back() {
    let (_sim, handle) = start();
    let mobile = 0;
    handle
        .command_actuators(ControlSource::Ros, mobile, &["arm_elbow"], &[0.7])
        .unwrap();
    handle.step(300).unwrap();
    // A trajectory that runs across the spawn.
    handle
        .follow_trajectory(
            mobile,
            &["arm_wrist"],
            Trajectory::through(&[0.0, 5.0], &[0.0, 1.0], &[]),
        )
        .unwrap();
    handle.step(50).unwrap();
    let before = state(&handle);
    let status_before = handle.control_status(mobile).unwrap();
    let snapshot = handle.capture().unwrap();
    let (name, changed) = spawn(
        &handle,
        &request("box", SpawnSource::Text(BOX.into()), [1.0, 0.0, 0.5]),
    )
    .unwrap();
    assert_eq!((name.as_str(), changed.generation), ("box", 1));
    assert!(
        changed.hold_time > 0.0 && changed.hold_time < 0.05,
        "{changed:?}"
    );
    let after = state(&handle);
    assert_eq!(after.step, before.step, "the step count carries over");
    assert_eq!(
        after.time.to_bits(),
        before.time.to_bits(),
        "so does sim time"
    );
    let (old, new) = (
        joints_of_world(&before, 0),
        joints_of(&handle, &after, "mobile"),
    );
    assert_eq!(old.len(), new.len());
    for ((name, q0, v0), (_, q1, v1)) in old.iter().zip(&new) {
        assert_eq!(q0.to_bits(), q1.to_bits(), "qpos of {name}");
        assert_eq!(v0.to_bits(), v1.to_bits(), "qvel of {name}");
    }
    let world = handle.world();
    let box_index = world.robot_index("box").unwrap();
    let body = world.robots[box_index].root_body.unwrap();
    assert_eq!(&after.xpos[3 * body..3 * body + 3], [1.0, 0.0, 0.5]);
    // The controller kept its commands, and the trajectory goes on to its end.
    let status_after = handle.control_status(mobile).unwrap();
    assert_eq!(status_after.values, status_before.values);
    assert_eq!(status_after.gains, status_before.gains);
    handle.step(2600).unwrap();
    let wrist = joints_of(&handle, &state(&handle), "mobile")
        .into_iter()
        .find(|(n, _, _)| n == "arm_wrist")
        .unwrap();
    assert!(
        (wrist.1 - 1.0).abs() < 0.05,
        "the trajectory ran on: {wrist:?}"
    );
    let fell = state(&handle).xpos[3 * body + 2];
    assert!(fell < 0.2, "the box fell to the floor: z = {fell}");
    // A snapshot of the old world is refused with a clear reason.
    let refused = handle.restore(snapshot).unwrap_err();
    assert!(
        matches!(
            refused,
            OperationError::OtherWorld {
                snapshot: 0,
                now: 1
            }
        ),
        "{refused}"
    );
    // Commands resolved in the old world never reach the new one.
    let stale_before = handle.stats().stale_commands;
    handle.send_in(
        0,
        0,
        Command::Actuator {
            source: ControlSource::Ros,
            actuator: 0,
            value: 1.0,
        },
    );
    handle.step(1).unwrap();
    assert_eq!(handle.stats().stale_commands, stale_before + 1);
    // Delete: the box goes, its name can be used again.
    let before = state(&handle);
    let mobile_before = joints_of(&handle, &before, "mobile");
    let deleted = delete(&handle, "box").unwrap();
    assert_eq!(deleted.generation, 2);
    assert!(handle.world().robot_index("box").is_none());
    let after = state(&handle);
    assert_eq!(mobile_before, joints_of(&handle, &after, "mobile"));
    assert!(
        spawn(
            &handle,
            &request("box", SpawnSource::Text(BOX.into()), [0.0, 2.0, 0.3])
        )
        .is_ok()
    );
    assert!(matches!(
        delete(&handle, "nothing"),
        Err(mujoco_bridge::world::DeleteError::NotFound { .. })
    ));
}

/// Joint values of the first robot from a state of the starting world (its joints come
/// first: the robot is alone in it).
fn joints_of_world(state: &StateSnapshot, robot: usize) -> Vec<(String, f64, f64)> {
    let config = Config::embedded_default(&[]).unwrap();
    let world = build_world(&config).unwrap();
    let model = &world.model;
    world.robots[robot]
        .joints
        .iter()
        .map(|j| {
            let (q, d) = (
                model.jnt_qposadr()[j.id] as usize,
                model.jnt_dofadr()[j.id] as usize,
            );
            (j.name.clone(), state.qpos[q], state.qvel[d])
        })
        .collect()
}

/// An adapter's planner for the tests: the robots it planned for, and a refusal of any world
/// with a robot named `refused`.
fn robot_names(
    world: &mujoco_bridge::model::World,
    _context: &PlanContext,
) -> mujoco_bridge::error::InputResult<Vec<String>> {
    let names: Vec<String> = world.robots.iter().map(|r| r.name.clone()).collect();
    if names.iter().any(|n| n == "refused") {
        return Err(InputError::new(
            &world.origin,
            "robot 'refused' cannot be planned",
        ));
    }
    Ok(names)
}

#[test]
fn each_world_that_takes_effect_reaches_its_followers_with_their_own_plan_of_it() {
    let (_sim, handle) = start();
    let following = handle.follow(robot_names).unwrap();
    // The world in effect comes at once, then nothing until a change.
    let (world, names) = following.changed().expect("the world in effect");
    assert_eq!(world.number, 0);
    assert_eq!(names, vec!["mobile".to_string()]);
    assert!(following.changed().is_none());
    let source = SpawnSource::Text(BOX.into());
    let (name, changed) = spawn(&handle, &request("box", source.clone(), [0.0, 0.0, 2.0])).unwrap();
    let (world, names) = following.changed().expect("the spawned world");
    assert_eq!((world.number, changed.generation), (1, 1));
    assert_eq!(names, vec!["mobile".to_string(), name]);
    // A world a follower cannot plan for is refused, and the world in effect stays.
    let error = spawn(
        &handle,
        &request("refused", source.clone(), [1.0, 0.0, 2.0]),
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("robot 'refused' cannot be planned"),
        "{error}"
    );
    assert_eq!(handle.generation(), 1);
    assert!(following.changed().is_none());
    // Two changes before the follower looks: it gets the newest only.
    spawn(&handle, &request("b2", source.clone(), [2.0, 0.0, 2.0])).unwrap();
    spawn(&handle, &request("b3", source.clone(), [3.0, 0.0, 2.0])).unwrap();
    let (world, names) = following.changed().expect("the newest world");
    assert_eq!(world.number, 3);
    assert_eq!(names.last().map(String::as_str), Some("b3"));
    // A follower that has gone no longer plans: a world it would refuse is taken.
    drop(following);
    spawn(&handle, &request("refused", source, [4.0, 0.0, 2.0])).unwrap();
    assert_eq!(handle.generation(), 4);
}

#[test]
fn a_spawn_that_fails_leaves_the_world_untouched() {
    let (_sim, handle) = start();
    handle.step(20).unwrap();
    let before = state(&handle);
    let broken_mesh = "<mujoco model='m'><asset><mesh name='m' file='/nonexistent/m.stl'/>\
                       </asset><worldbody><body><geom type='mesh' mesh='m'/></body>\
                       </worldbody></mujoco>";
    let failures = [
        (
            request("m", SpawnSource::Text(broken_mesh.into()), [0.0; 3]),
            "missing assets",
        ),
        (
            request(
                "bad",
                SpawnSource::Text(
                    "<mujoco><worldbody><body><geom type='sphere'/></body></worldbody></mujoco>"
                        .into(),
                ),
                [0.0; 3],
            ),
            "parse",
        ),
    ];
    for (request, kind) in failures {
        let error = spawn(&handle, &request).unwrap_err();
        let fits = match kind {
            "missing assets" => matches!(error, SpawnError::MissingAssets(_)),
            _ => matches!(error, SpawnError::ParseError(_)),
        };
        assert!(fits, "{kind}: {error:?}");
    }
    assert_eq!(handle.generation(), 0);
    assert_eq!(state(&handle), before);
    assert_eq!(handle.stats().world_changes, 0);
}

#[test]
fn a_robot_spawned_from_a_config_brings_its_sections_and_plays_its_preset() {
    let dir = tempfile::tempdir().unwrap();
    // A spawn reads only files under the allowed folders: the test's own is one.
    let (_sim, handle) = start_with(&[format!(
        "requests.file_roots=[\"{}\"]",
        dir.path().display()
    )]);
    let config = dir.path().join("waver.yaml");
    std::fs::write(
        &config,
        format!(
            "robots:\n  - name: waver\n    mjcf: {}\n    control:\n      source: player\n      \
             preset: \"Franka: Wave\"\n",
            models()
                .join("menagerie/franka_emika_panda/panda.xml")
                .display()
        ),
    )
    .unwrap();
    let mut asked = request(
        "",
        SpawnSource::Uri(config.display().to_string()),
        [1.5, 0.0, 0.0],
    );
    asked.allow_renaming = true;
    let (name, _) = spawn(&handle, &asked).unwrap();
    assert_eq!(name, "waver", "the config's robot name");
    let world = handle.world();
    let r = world.robot_index("waver").unwrap();
    assert_eq!(
        handle.control_source(r),
        Some(ControlSource::Player),
        "its control section"
    );
    handle.step(1500).unwrap();
    let moved = joints_of(&handle, &state(&handle), "waver")
        .iter()
        .map(|(_, q, _)| q.abs())
        .fold(0.0, f64::max);
    assert!(moved > 0.3, "the preset plays from the start: {moved}");
}

#[test]
fn a_recording_goes_on_across_spawns_and_deletes_in_the_columns_it_began_with() {
    let (_sim, handle) = start();
    spawn(
        &handle,
        &request("box", SpawnSource::Text(BOX.into()), [0.0, 1.5, 0.5]),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.csv");
    handle.start_recording(&file).unwrap();
    handle.step(100).unwrap();
    delete(&handle, "box").unwrap();
    handle.step(100).unwrap();
    spawn(
        &handle,
        &request("box", SpawnSource::Text(BOX.into()), [0.0, -1.5, 0.5]),
    )
    .unwrap();
    handle.step(100).unwrap();
    // A world load starts time again from 0: refused while the recording runs.
    let default = repo().join("config/default.yaml");
    let refused = mujoco_bridge::world::load_world(&handle, &default.display().to_string(), "")
        .unwrap_err()
        .to_string();
    assert!(refused.contains("recording"), "{refused}");
    let end = state(&handle);
    assert_eq!(handle.stop_recording().unwrap().rows, 300);

    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 300);
    assert!(rows.windows(2).all(|w| w[1][0] > w[0][0]), "time increases");
    let is_box = |c: &usize| header[*c].starts_with("box_");
    let (boxed, staying): (Vec<usize>, Vec<usize>) = (1..header.len()).partition(is_box);
    assert!(!boxed.is_empty() && !staying.is_empty(), "{header:?}");
    for (i, row) in rows.iter().enumerate() {
        assert!(staying.iter().all(|c| row[*c].is_finite()), "row {i}");
        let box_there = !(100..200).contains(&i);
        assert!(
            boxed.iter().all(|c| row[*c].is_finite() == box_there),
            "row {i}: the box's columns are NaN exactly while it is gone"
        );
    }
    // The last row is the final state, the respawned box included.
    let world = handle.world();
    let model = &world.model;
    let mut checked = 0;
    for robot in world.robots.iter() {
        for joint in &robot.joints {
            let name = format!("{}{}", robot.prefix, joint.name);
            let qpos = model.jnt_qposadr()[joint.id] as usize;
            for (k, column) in header.iter().enumerate() {
                let entry = match column.strip_prefix(name.as_str()) {
                    Some("") => 0,
                    Some(index) if index.starts_with('[') => {
                        index.trim_matches(['[', ']']).parse::<usize>().unwrap()
                    }
                    _ => continue,
                };
                let q = end.qpos[qpos + entry];
                assert!(
                    (rows[299][k] - q).abs() < 1e-7,
                    "{column}: {} vs {q}",
                    rows[299][k]
                );
                checked += 1;
            }
        }
    }
    assert_eq!(
        checked,
        17 + 7,
        "every qpos column of the mobile and the box"
    );
    // It plays back (step n shows row n - 1); in the gap the box stays where the rows
    // before it left it, and the mobile goes on.
    handle.play_csv(&file).unwrap();
    handle.step(150).unwrap();
    let played = state(&handle);
    assert!(
        played.qpos.iter().all(|q| q.is_finite()),
        "no NaN reaches the state"
    );
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let qpos_of = |robot: &str, joint: &str| {
        let map = &world.robots[world.robot_index(robot).unwrap()];
        model.jnt_qposadr()[map.joint(joint).unwrap().id] as usize
    };
    let box_y = played.qpos[qpos_of("box", "floating_base") + 1];
    assert!(
        (box_y - rows[99][column("box_floating_base[1]")]).abs() < 1e-7,
        "{box_y}"
    );
    assert!(
        box_y > 1.0,
        "the first box's place, not the respawned one's: {box_y}"
    );
    let elbow = played.qpos[qpos_of("mobile", "arm_elbow")];
    assert!((elbow - rows[149][column("mobile_arm_elbow")]).abs() < 1e-7);
}

/// A worker that says what it does, and whose loads wait until the test lets them finish.
struct Recording {
    events: std::sync::Arc<std::sync::Mutex<Vec<(&'static str, u64)>>>,
    gate: std::sync::mpsc::Receiver<()>,
    world: Option<u64>,
    out: u8,
    /// The step of each state an output was made of.
    steps: std::sync::Arc<std::sync::Mutex<Vec<u64>>>,
}

impl mujoco_bridge::render::Work for Recording {
    type Spec = ();
    type Out = u8;
    type Error = String;

    fn load(&mut self, sources: &mujoco_bridge::render::Sources<(), u8>) -> Result<(), String> {
        let _ = self.gate.recv_timeout(std::time::Duration::from_secs(20));
        self.world = Some(sources.world.number);
        self.events
            .lock()
            .unwrap()
            .push(("load", sources.world.number));
        Ok(())
    }

    fn begin(&mut self) {}

    fn make(
        &mut self,
        _index: usize,
        state: &mujoco_bridge::sim::StateSnapshot,
    ) -> Result<&mut u8, String> {
        let world = self.world.ok_or("nothing loaded")?;
        self.events.lock().unwrap().push(("make", world));
        self.steps.lock().unwrap().push(state.step);
        Ok(&mut self.out)
    }

    fn unload(&mut self) {
        if let Some(world) = self.world.take() {
            self.events.lock().unwrap().push(("unload", world));
        }
    }

    fn release(&mut self) {}
}

#[test]
fn a_render_worker_makes_nothing_for_a_world_replaced_while_it_loaded_and_lets_it_go() {
    let (_sim, handle) = start();
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (open, gate) = std::sync::mpsc::channel();
    let recorded = events.clone();
    let service = mujoco_bridge::render::Service::start(
        "test-worker",
        std::time::Duration::ZERO,
        0,
        |_| vec![()],
        move || Recording {
            events: recorded,
            gate,
            world: None,
            out: 0,
            steps: Default::default(),
        },
    )
    .unwrap();
    let first = handle.world();
    let first_sources = service.sources(&first);
    first_sources.request(0);
    // The worker is loading the first world when the second one comes.
    std::thread::sleep(std::time::Duration::from_millis(300));
    spawn(
        &handle,
        &request("crate", SpawnSource::Text(BOX.into()), [1.0, 0.0, 0.5]),
    )
    .unwrap();
    let second = handle.world();
    let second_sources = service.sources(&second);
    second_sources.request(0);
    let gone = std::sync::Arc::downgrade(&first);
    drop((first, first_sources));
    open.send(()).unwrap();
    open.send(()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !events.lock().unwrap().contains(&("make", second.number))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let seen = events.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("load", 0),
            ("unload", 0),
            ("load", second.number),
            ("make", second.number)
        ],
        "what the worker did"
    );
    assert!(
        gone.upgrade().is_none(),
        "the first world is still held after the worker let it go"
    );
}

#[test]
fn a_render_worker_makes_each_output_of_the_state_it_was_asked_for() {
    let (_sim, handle) = start();
    let steps = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (open, gate) = std::sync::mpsc::channel();
    let made = steps.clone();
    let service = mujoco_bridge::render::Service::start(
        "test-worker",
        std::time::Duration::ZERO,
        0,
        |_| vec![()],
        move || Recording {
            events: Default::default(),
            gate,
            world: None,
            out: 0,
            steps: made,
        },
    )
    .unwrap();
    open.send(()).unwrap();
    handle.step(7).unwrap();
    let world = handle.world();
    let sources = service.sources(&world);
    let mut sample = state(&handle);
    assert_eq!(sample.step, 7);
    sample.step = 42;
    let wait_answered = || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !sources.slot(0).answered_all() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(sources.slot(0).answered_all(), "the worker answered");
    };
    // A sample handed over is what the output shows; a plain request shows the newest state.
    sources.request_at(0, &sample);
    wait_answered();
    sources.request(0);
    wait_answered();
    assert_eq!(*steps.lock().unwrap(), [42, 7]);
}
