//! World-change benchmark: a Go1 world runs in fast mode while a Panda is spawned into it
//! and deleted again, round after round. Prints, from one run:
//! (a) the time the physics thread is held for each change (the swap between two steps, as
//!     it measures it) and the longest time the step count stood still as a watcher saw it,
//!     against the target of 50 ms;
//! (b) the build time and CPU time of each change on the caller's thread (off physics);
//! (c) steps/s of the physics thread before the first spawn, with the Panda in, and after
//!     the delete, as ratios to the steps/s of the same worlds loaded at start (rounds
//!     alternate, same length each).
//! Run: cargo bench --profile release-no-ros --no-default-features --bench world   (BENCH_ROUNDS=5)
use mujoco_bridge::config::{Config, SimConfig, SimMode};
use mujoco_bridge::model::build_world;
use mujoco_bridge::sim::{SimHandle, Simulation};
use mujoco_bridge::world::{SpawnRequest, SpawnSource};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Seconds of fast stepping per steps/s measurement.
const WINDOW: Duration = Duration::from_millis(1500);

fn config(name: &str) -> Config {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("config")
        .join(name);
    Config::load(&path, &[]).expect("config")
}

fn panda_path() -> std::path::PathBuf {
    mujoco_bridge::config::models_dir().join("menagerie/franka_emika_panda/panda.xml")
}

/// CPU seconds of the calling thread so far.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Steps per second of a running (fast) simulation over `WINDOW`.
fn rate(handle: &SimHandle) -> f64 {
    let (s0, t0) = (handle.stats().steps, Instant::now());
    std::thread::sleep(WINDOW);
    (handle.stats().steps - s0) as f64 / t0.elapsed().as_secs_f64()
}

/// A world started in fast mode from `config`.
fn running(config: &Config) -> (Simulation, SimHandle) {
    let world = build_world(config).expect("world");
    let sim = Simulation::start(
        &world,
        &SimConfig {
            mode: SimMode::Fast,
            ..Default::default()
        },
    )
    .expect("simulation");
    let handle = sim.handle();
    (sim, handle)
}

/// Watches the step count from another thread and keeps the longest stretch it stood still
/// (microseconds) while `watching` is set.
struct Watcher {
    watching: Arc<AtomicBool>,
    longest_us: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    fn start(handle: SimHandle) -> Self {
        let watching = Arc::new(AtomicBool::new(false));
        let longest_us = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (w, l, s) = (watching.clone(), longest_us.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut last = (handle.stats().steps, Instant::now());
            while !s.load(Ordering::Relaxed) {
                let steps = handle.stats().steps;
                let now = Instant::now();
                if steps != last.0 {
                    last = (steps, now);
                } else if w.load(Ordering::Relaxed) {
                    let still = now.duration_since(last.1).as_micros() as u64;
                    l.fetch_max(still, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        });
        Self {
            watching,
            longest_us,
            stop,
            thread: Some(thread),
        }
    }

    /// Runs `change` and returns its result with the longest standstill seen meanwhile (ms).
    fn around<T>(&self, change: impl FnOnce() -> T) -> (T, f64) {
        self.longest_us.store(0, Ordering::Relaxed);
        self.watching.store(true, Ordering::Relaxed);
        let out = change();
        std::thread::sleep(Duration::from_millis(5));
        self.watching.store(false, Ordering::Relaxed);
        (out, self.longest_us.load(Ordering::Relaxed) as f64 * 1e-3)
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let go1 = config("go1.yaml");
    let panda = panda_path();
    assert!(
        panda.is_file(),
        "{}: run scripts/fetch-models.sh",
        panda.display()
    );
    // The same two worlds loaded at start: the reference rates.
    let mut both = go1.clone();
    let mut panda_robot: mujoco_bridge::config::RobotConfig = serde_json::from_value(
        serde_json::json!({"name": "panda", "mjcf": panda.display().to_string(),
                           "pose": {"xyz": [1.5, 0.0, 0.0]}}),
    )
    .unwrap();
    panda_robot.pose.xyz = [1.5, 0.0, 0.0];
    both.robots.push(panda_robot);

    let (sim, handle) = running(&go1);
    let watcher = Watcher::start(handle.clone());
    let request = SpawnRequest {
        name: "panda".into(),
        allow_renaming: false,
        source: SpawnSource::Uri(panda.display().to_string()),
        namespace: String::new(),
        frame: "world".into(),
        position: [1.5, 0.0, 0.0],
        orientation_xyzw: [0.0, 0.0, 0.0, 1.0],
    };
    let (mut spawn_hold, mut spawn_still, mut spawn_build, mut spawn_cpu) =
        (vec![], vec![], vec![], vec![]);
    let (mut delete_hold, mut delete_still, mut delete_build, mut delete_cpu) =
        (vec![], vec![], vec![], vec![]);
    let (mut before, mut with, mut after) = (vec![], vec![], vec![]);
    let (mut fresh_go1, mut fresh_both) = (vec![], vec![]);
    for _ in 0..rounds {
        before.push(rate(&handle));
        let cpu = thread_cpu();
        let (spawned, still) = watcher.around(|| mujoco_bridge::world::spawn(&handle, &request));
        let (_, changed) = spawned.expect("spawn");
        spawn_cpu.push((thread_cpu() - cpu) * 1e3);
        spawn_hold.push(changed.hold_time * 1e3);
        spawn_build.push(changed.build_time * 1e3);
        spawn_still.push(still);
        with.push(rate(&handle));
        let cpu = thread_cpu();
        let (deleted, still) = watcher.around(|| mujoco_bridge::world::delete(&handle, "panda"));
        let changed = deleted.expect("delete");
        delete_cpu.push((thread_cpu() - cpu) * 1e3);
        delete_hold.push(changed.hold_time * 1e3);
        delete_build.push(changed.build_time * 1e3);
        delete_still.push(still);
        after.push(rate(&handle));
        // The references, alternating with the changing world.
        handle.pause().unwrap();
        for (reference, out) in [(&go1, &mut fresh_go1), (&both, &mut fresh_both)] {
            let (fresh_sim, fresh) = running(reference);
            std::thread::sleep(Duration::from_millis(100));
            out.push(rate(&fresh));
            fresh_sim.shutdown();
        }
        handle.set_mode(SimMode::Fast).unwrap();
    }
    drop(watcher);
    sim.shutdown();
    let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    println!(
        "world-change benchmark: Go1 world in fast mode, Panda spawned and deleted, {rounds} rounds"
    );
    println!(
        "(a) physics held for the swap: spawn median {:.3} ms (max {:.3}), delete median {:.3} ms \
         (max {:.3}); target <= 50 ms",
        median(&mut spawn_hold.clone()),
        max(&spawn_hold),
        median(&mut delete_hold.clone()),
        max(&delete_hold)
    );
    println!(
        "    longest standstill of the step count seen by a watcher: spawn median {:.2} ms (max \
         {:.2}), delete median {:.2} ms (max {:.2})",
        median(&mut spawn_still.clone()),
        max(&spawn_still),
        median(&mut delete_still.clone()),
        max(&delete_still)
    );
    println!(
        "(b) building off the physics thread: spawn median {:.1} ms wall, {:.1} ms CPU; delete \
         median {:.1} ms wall, {:.1} ms CPU",
        median(&mut spawn_build),
        median(&mut spawn_cpu),
        median(&mut delete_build),
        median(&mut delete_cpu)
    );
    let (b, w, a) = (median(&mut before), median(&mut with), median(&mut after));
    let (fg, fb) = (median(&mut fresh_go1), median(&mut fresh_both));
    println!(
        "(c) steps/s: Go1 before the spawn {b:.0}, after the delete {a:.0} (ratio after/before \
         {:.3}); Go1 + spawned Panda {w:.0}",
        a / b
    );
    println!(
        "    against the same worlds loaded at start: Go1 {fg:.0} (before/loaded {:.3}, \
         after/loaded {:.3}), Go1 + Panda {fb:.0} (spawned/loaded {:.3})",
        b / fg,
        a / fg,
        w / fb
    );
}
