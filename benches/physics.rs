//! Physics-thread benchmark. Prints, for Panda, Go1 and G1 in one run:
//! (a) steps/s of the physics thread in fast mode, exporting the state snapshot every step,
//!     divided by a raw `mj_step` loop in the same process (rounds alternate, same start
//!     state and step count each time);
//! (b) realtime mode at 1 kHz: achieved real-time factor and p99 lateness of step starts as a
//!     fraction of the period.
//! Run: cargo bench --bench physics   (BENCH_REALTIME_SECONDS=30 by default)
use mujoco_bridge::config::{Config, SimConfig, SimMode};
#[path = "common/raw_loop.rs"]
mod raw;

use mujoco_bridge::model::{World, build_world};
use mujoco_bridge::sim::Simulation;
use raw::raw_loop;
use std::time::{Duration, Instant};

fn world(config: &str, overrides: &[String]) -> World {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("config")
        .join(config);
    let config = Config::load(&path, overrides).expect("config");
    build_world(&config).expect("world")
}

/// Seconds for the physics thread to run `steps` steps in fast mode from the initial state.
fn thread_loop(world: &World, steps: u64) -> f64 {
    let sim = Simulation::start(
        world,
        &SimConfig {
            mode: SimMode::Paused,
            ..Default::default()
        },
    )
    .unwrap();
    let handle = sim.handle();
    handle.pause_at_step(steps);
    let start = Instant::now();
    handle.set_mode(SimMode::Fast).unwrap();
    while handle.stats().steps < steps {
        std::thread::sleep(Duration::from_millis(1));
    }
    let elapsed = start.elapsed().as_secs_f64();
    assert_eq!(handle.stats().steps, steps);
    elapsed
}

const ROUNDS: usize = 10;

fn throughput(name: &str, config: &str) -> f64 {
    // Passthrough with zero commands: the physics thread computes the same trajectory as the
    // raw loop (G1's config would otherwise hold its joints with PD, a different motion).
    let world = world(config, &["robots.0.control.mode=passthrough".to_string()]);
    // Size each run to about half a second of raw stepping.
    let probe = raw_loop(&world, 2000);
    let steps = ((1000.0 / probe) as u64).max(2000);
    let mut ratios = Vec::with_capacity(ROUNDS);
    let (mut raw_total, mut thread_total) = (0.0, 0.0);
    for round in 0..ROUNDS {
        // Alternate which runs first, so drifts in machine load hit both alike.
        let (raw, thread) = if round % 2 == 0 {
            let raw = raw_loop(&world, steps);
            (raw, thread_loop(&world, steps))
        } else {
            let thread = thread_loop(&world, steps);
            (raw_loop(&world, steps), thread)
        };
        raw_total += raw;
        thread_total += thread;
        ratios.push(raw / thread);
    }
    ratios.sort_by(f64::total_cmp);
    let median = (ratios[ROUNDS / 2 - 1] + ratios[ROUNDS / 2]) / 2.0;
    let total = (ROUNDS as u64 * steps) as f64;
    println!(
        "{name:6} fast mode: raw mj_step {:9.0} steps/s, physics thread with snapshot export {:9.0} steps/s, ratio median {median:.3} (rounds {:.3}..{:.3}, {ROUNDS} x {steps} steps; target >= 0.95)",
        total / raw_total,
        total / thread_total,
        ratios[0],
        ratios[ROUNDS - 1]
    );
    median
}

fn realtime(name: &str, config: &str, seconds: f64) -> (f64, f64) {
    let world = world(config, &["world.timestep=0.001".to_string()]);
    let period = world.model.opt().timestep;
    let sim = Simulation::start(&world, &SimConfig::default()).unwrap();
    let handle = sim.handle();
    std::thread::sleep(Duration::from_secs(1));
    handle.clear_lateness();
    let (wall0, sim0, over0) = (
        Instant::now(),
        handle.stats().sim_time,
        handle.stats().overruns,
    );
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let stats = handle.stats();
    let wall = wall0.elapsed().as_secs_f64();
    let rtf = (stats.sim_time - sim0) / wall;
    let p99 = handle.lateness_quantile(0.99) / period;
    let p50 = handle.lateness_quantile(0.50) / period;
    println!(
        "{name:6} realtime 1 kHz for {seconds:.0} s: real-time factor {rtf:.4} (target 1.00 +- 0.01), step-start lateness p50 {p50:.3} p99 {p99:.3} of the period (target p99 <= 0.25), {} samples, overruns {}",
        handle.lateness_samples(),
        stats.overruns - over0
    );
    (rtf, p99)
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_REALTIME_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30.0);
    let robots = [
        ("Panda", "panda.yaml"),
        ("Go1", "go1.yaml"),
        ("G1", "g1.yaml"),
    ];
    println!("== physics thread vs raw mj_step (same process, alternating rounds)");
    let ratios: Vec<f64> = robots.iter().map(|(n, c)| throughput(n, c)).collect();
    let paced: Vec<(f64, f64)> = if seconds > 0.0 {
        println!("== realtime pacing at 1 kHz");
        robots
            .iter()
            .map(|(n, c)| realtime(n, c, seconds))
            .collect()
    } else {
        Vec::new()
    };
    let ok = ratios.iter().all(|r| *r >= 0.95)
        && paced
            .iter()
            .all(|(rtf, p99)| (rtf - 1.0).abs() <= 0.01 && *p99 <= 0.25);
    println!("== targets {}", if ok { "met" } else { "NOT met" });
}
