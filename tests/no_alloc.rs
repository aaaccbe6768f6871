//! The physics thread must not allocate (nor free: the counter sees both). A counting global
//! allocator counts the calls made on the physics thread alone while it runs in fast and in
//! realtime mode and carries out commands and operations of every kind: twists, actuator
//! commands, a trajectory, the keyframe sequencer, wrenches, recording, snapshots, reset,
//! playback. Runs without the test harness, as a plain program.
use mujoco_bridge::config::{Config, ControlSource, SimConfig, SimMode};
use mujoco_bridge::control::Trajectory;
use mujoco_bridge::model::build_world;
use mujoco_bridge::sim::{Command, Simulation};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
/// Thread id (gettid) whose calls are counted.
static WATCHED: AtomicI64 = AtomicI64::new(-1);
static CALLS: AtomicU64 = AtomicU64::new(0);

fn count() {
    if COUNTING.load(Ordering::Relaxed) {
        // SAFETY: gettid has no preconditions and does not allocate.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        if tid == WATCHED.load(Ordering::Relaxed) {
            CALLS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count();
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The kernel thread id of the thread named `name` in this process. A new thread names
/// itself once it runs, so a thread just spawned may take a moment to show its name.
fn thread_id(name: &str) -> i64 {
    for _ in 0..500 {
        for entry in std::fs::read_dir("/proc/self/task").unwrap() {
            let path = entry.unwrap().path();
            if std::fs::read_to_string(path.join("comm"))
                .unwrap_or_default()
                .trim()
                == name
            {
                return path.file_name().unwrap().to_string_lossy().parse().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no thread named {name} after 5 s");
}

fn main() {
    // The counter itself works: a deliberate allocation on this thread is seen.
    WATCHED.store(
        unsafe { libc::syscall(libc::SYS_gettid) },
        Ordering::Relaxed,
    );
    COUNTING.store(true, Ordering::Relaxed);
    let probe = std::hint::black_box(vec![1u8; 16]);
    COUNTING.store(false, Ordering::Relaxed);
    assert!(
        CALLS.load(Ordering::Relaxed) >= 1 && probe.len() == 16,
        "allocation counter is blind"
    );

    let config = Config::embedded_default(&[]).unwrap();
    let world = build_world(&config).unwrap();
    let elbow = world.robots[0].actuator("arm_elbow").unwrap().id as u32;
    let sim = Simulation::start(
        &world,
        &SimConfig {
            mode: SimMode::Paused,
            export_contacts: 16, // contact forces into the snapshot too
            ..Default::default()
        },
    )
    .unwrap();
    let h = sim.handle();
    WATCHED.store(thread_id("physics"), Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mujoco_bridge_no_alloc_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("run.csv");
    let mut results = Vec::new();
    for mode in [SimMode::Fast, SimMode::Realtime] {
        h.set_mode(mode).unwrap();
        std::thread::sleep(Duration::from_millis(100)); // warm up outside the window
        let before = h.stats().steps;
        CALLS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        h.start_recording(&csv).unwrap();
        h.follow_trajectory(
            0,
            &["arm_shoulder_yaw", "arm_elbow"],
            Trajectory::through(&[0.2, 0.4], &[0.3, 0.5, 0.6, 1.0], &[]),
        )
        .unwrap();
        h.apply_wrench(Some(0), "base_link", [0.0, 0.0, 20.0], [0.0; 3], 0.1)
            .unwrap();
        for i in 0..30 {
            h.send(Command::Twist {
                source: ControlSource::Ros,
                robot: 0,
                linear_x: 0.2,
                linear_y: 0.0,
                angular_z: 0.1 * i as f64,
            });
            h.send(Command::Actuator {
                source: ControlSource::Ros,
                actuator: elbow,
                value: (i % 10) as f64 * 0.1,
            });
            h.send(Command::Actuator {
                source: ControlSource::Ros,
                actuator: elbow,
                value: f64::NAN,
            });
            std::thread::sleep(Duration::from_millis(10));
        }
        h.load_preset(0, "Franka: Wave").unwrap();
        h.go_to_pose(0, 0).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        h.stop_preset(0).unwrap();
        h.stop_recording().unwrap(); // before time jumps back with the restore and the reset
        let snapshot = h.capture().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        h.restore(snapshot).unwrap();
        h.reset_to_keyframe(Some(0), "ready").unwrap();
        h.play_csv(&csv).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        h.reset().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        // A world change while stepping: built on this thread, swapped in by the physics
        // thread, and back.
        let request = mujoco_bridge::world::SpawnRequest {
            name: "crate".into(),
            allow_renaming: false,
            source: mujoco_bridge::world::SpawnSource::Text(
                "<mujoco><worldbody><body><freejoint/><geom type='box' size='.1 .1 .1'/>\
                 </body></worldbody></mujoco>"
                    .into(),
            ),
            namespace: String::new(),
            frame: String::new(),
            position: [1.0, 1.0, 0.5],
            orientation_xyzw: [0.0, 0.0, 0.0, 1.0],
        };
        // A recording runs across both: its rows go through the columns map.
        h.start_recording(&dir.join("across.csv")).unwrap();
        mujoco_bridge::world::spawn(&h, &request).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        mujoco_bridge::world::delete(&h, "crate").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        h.stop_recording().unwrap();
        COUNTING.store(false, Ordering::Relaxed);
        let steps = h.stats().steps - before;
        results.push((mode, steps, CALLS.load(Ordering::Relaxed)));
        h.pause().unwrap();
    }
    drop(sim);
    let _ = std::fs::remove_dir_all(&dir);
    let mut failed = 0;
    for (mode, steps, calls) in &results {
        println!(
            "no_alloc: {mode:?} mode: {calls} allocator calls on the physics thread in {steps} steps with every kind of command and operation"
        );
        if *calls != 0 || *steps < 200 {
            failed += 1;
        }
    }
    println!("{} passed, {} failed", results.len() - failed, failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
