//! The physics loop must not allocate. A counting global allocator watches a window in which
//! only the physics thread works (this thread sends commands, which are lock-free pushes, and
//! sleeps), in fast and in realtime mode, with a robot that has sensors and actuators.
//! Runs without the test harness so no other thread shares the process.
use mujoco_bridge::config::{Config, ControlSource, SimConfig, SimMode};
use mujoco_bridge::model::build_world;
use mujoco_bridge::sim::{Command, Simulation};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    // The counter itself works: a deliberate allocation is seen.
    COUNTING.store(true, Ordering::Relaxed);
    let probe = std::hint::black_box(vec![1u8; 16]);
    COUNTING.store(false, Ordering::Relaxed);
    assert!(
        ALLOCATIONS.load(Ordering::Relaxed) >= 1 && probe.len() == 16,
        "allocation counter is blind"
    );
    let config = Config::embedded_default(&[]).unwrap();
    let world = build_world(&config).unwrap();
    let elbow = world.robots[0].actuator("arm_elbow").unwrap().id as u32;
    let sim = Simulation::start(
        &world,
        &SimConfig {
            mode: SimMode::Paused,
            ..Default::default()
        },
    )
    .unwrap();
    let handle = sim.handle();
    let mut results = Vec::with_capacity(2);
    for mode in [SimMode::Fast, SimMode::Realtime] {
        handle.set_mode(mode).unwrap();
        std::thread::sleep(Duration::from_millis(100)); // warm up outside the window
        let before = handle.stats().steps;
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        for i in 0..60 {
            handle.send(Command::Actuator {
                source: ControlSource::Ros,
                actuator: elbow,
                value: (i % 10) as f64 * 0.1,
            });
            handle.send(Command::Actuator {
                source: ControlSource::Ros,
                actuator: elbow,
                value: f64::NAN,
            });
            std::thread::sleep(Duration::from_millis(10));
        }
        COUNTING.store(false, Ordering::Relaxed);
        let steps = handle.stats().steps - before;
        results.push((mode, steps, ALLOCATIONS.load(Ordering::Relaxed)));
        handle.pause().unwrap();
    }
    drop(sim);
    let mut failed = 0;
    for (mode, steps, allocations) in &results {
        println!("no_alloc: {mode:?} mode: {allocations} allocations in {steps} physics steps");
        if *allocations != 0 || *steps < 200 {
            failed += 1;
        }
    }
    println!("{} passed, {} failed", results.len() - failed, failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
