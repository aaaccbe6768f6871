//! Sim-time sampling benchmark (issue 38), the default robot (a mobile manipulator with an
//! IMU and a nine-ray laser scan) with every output at its default rate
//! and a sink that takes every message (it keeps the bytes' count, as a fast subscriber
//! would). Prints, from one run, cases side by side in alternating rounds:
//! (a) fast mode, lossless: steps/s of the physics thread with no reader and with the
//!     sampler (noise off, noise on every sensor) beside a raw `mj_step` loop in the same
//!     process: how much a lossless fast run slows when every sample must go out;
//! (b) real time at 1 kHz, noise on every sensor, for the default robot, Go1 and G1: the
//!     physics ratio, MuJoCo's own step time over the physics thread's busy time (target
//!     >= 0.98), what the bridge adds to a step in microseconds, and the samples lost;
//! (c) CPU per 1,000 messages of the sampler's thread (`topics`), noise off and on.
//! Run: cargo bench --bench sampling   (BENCH_SAMPLING_SECONDS=10 by default)
#[path = "common/threads.rs"]
mod threads;

use mujoco_bridge::config::{Config, NoiseConfig, NoiseType, SimConfig, SimMode};
#[path = "common/raw_loop.rs"]
mod raw;

use mujoco_bridge::model::{World, build_world};
use mujoco_bridge::sim::{SimHandle, Simulation};
use mujoco_bridge::topics::sampler::{Route, Sampler, SamplerSettings, Sink, TopicSpec};
use raw::raw_loop;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const ROUNDS: usize = 6;

/// Takes every message of every topic.
#[derive(Clone, Default)]
struct Taker {
    messages: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl Route for Taker {
    fn wants(&self, _topic: usize) -> bool {
        true
    }

    fn send(&self, _topic: usize, bytes: &[u8], _time: f64) -> bool {
        self.messages.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        true
    }
}

impl Sink for Taker {
    fn open(&mut self, _world: u64, _topics: &Arc<[TopicSpec]>) -> Arc<dyn Route> {
        Arc::new(self.clone())
    }

    fn records(&self) -> bool {
        true
    }
}

/// The default robot's config; `noisy`: every sensor of the robot with white noise, bias, drift and
/// quantization.
fn config(file: &str, noisy: bool, timestep: f64) -> Config {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("config")
        .join(file);
    let overrides = [
        "robots.0.control.mode=passthrough".to_string(),
        format!("world.timestep={timestep}"),
    ];
    let mut config = Config::load(&path, &overrides).expect("config");
    if noisy {
        let world = build_world(&config).expect("world");
        let noise = NoiseConfig {
            kind: NoiseType::GaussianQuantized,
            stddev: 0.01,
            bias_mean: 0.001,
            bias_stddev: 0.0005,
            dynamic_bias_stddev: 0.0002,
            dynamic_bias_correlation_time: 100.0,
            precision: 1e-4,
            ..NoiseConfig::default()
        };
        for sensor in &world.robots[0].sensors {
            config.robots[0]
                .noise
                .insert(sensor.name.clone(), noise.clone());
        }
    }
    config
}

/// What one run measured.
#[derive(Default)]
struct Measured {
    seconds: f64,
    messages: u64,
    sampler_cpu: f64,
    busy: f64,
    mujoco: f64,
    steps: u64,
    lost: u64,
}

fn sampler(handle: &SimHandle, taker: &Taker) -> Sampler {
    let settings = SamplerSettings {
        sinks: vec![Box::new(taker.clone())],
        sensors: Default::default(),
        publishing: Default::default(),
        retimes: Default::default(),
        nice: 0,
        hold_at_start: false,
    };
    let outputs = handle.follow(mujoco_bridge::topics::plan).expect("outputs");
    Sampler::start(handle.observer(), outputs, settings).expect("sampler")
}

/// Runs `world` in `mode` for `steps` steps (fast) or `seconds` (real time), with the
/// sampler and its taker when `sampled`.
fn run(world: &World, mode: SimMode, steps: u64, seconds: f64, sampled: bool) -> Measured {
    let paused = SimConfig {
        mode: SimMode::Paused,
        ..Default::default()
    };
    let sim = Simulation::start(world, &paused).unwrap();
    let handle = sim.handle();
    let taker = Taker::default();
    let sampler = sampled.then(|| sampler(&handle, &taker));
    if mode == SimMode::Fast {
        handle.pause_at_step(steps);
    }
    let (cpu0, stats0) = (threads::threads_cpu("self", &["topics"]), handle.stats());
    let start = Instant::now();
    handle.set_mode(mode).unwrap();
    if mode == SimMode::Fast {
        while handle.stats().steps < steps {
            std::thread::sleep(Duration::from_micros(200));
        }
    } else {
        std::thread::sleep(Duration::from_secs_f64(seconds));
        handle.pause().unwrap();
    }
    let elapsed = start.elapsed().as_secs_f64();
    let stats1 = handle.stats();
    // Its thread's CPU before it goes (its /proc entry goes with it); its messages after,
    // the last samples sent.
    let sampler_cpu = threads::threads_cpu("self", &["topics"]) - cpu0;
    drop(sampler);
    let messages = taker.messages.load(Ordering::Relaxed);
    Measured {
        seconds: elapsed,
        messages,
        sampler_cpu,
        busy: stats1.busy_time - stats0.busy_time,
        mujoco: stats1.mujoco_time - stats0.mujoco_time,
        steps: stats1.steps - stats0.steps,
        lost: world_lost(&handle),
    }
}

fn world_lost(handle: &SimHandle) -> u64 {
    handle.world().samples.lost()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}

fn part_a() -> (f64, f64) {
    let quiet = build_world(&config("default.yaml", false, 0.002)).expect("world");
    let noisy = build_world(&config("default.yaml", true, 0.002)).expect("world");
    let probe = raw_loop(&quiet, 2000);
    let steps = ((2.0 / probe * 2000.0) as u64).max(5000);
    let cases = ["no reader", "sampler, noise off", "sampler, noise on"];
    let mut ratios = vec![Vec::new(); 3];
    let mut cpu = [(0.0, 0u64); 3];
    for round in 0..ROUNDS {
        let raw = raw_loop(&quiet, steps);
        for k in 0..3 {
            // Rotate the order, so drifts in machine load hit every case alike.
            let case = (k + round) % 3;
            let world = if case == 2 { &noisy } else { &quiet };
            let measured = run(world, SimMode::Fast, steps, 0.0, case > 0);
            ratios[case].push(raw / measured.seconds);
            cpu[case].0 += measured.sampler_cpu;
            cpu[case].1 += measured.messages;
        }
    }
    let per_1000 = |(cpu, messages): (f64, u64)| cpu * 1e3 / messages.max(1) as f64 * 1e3;
    for (case, name) in cases.iter().enumerate() {
        let messages = cpu[case].1 / ROUNDS as u64;
        println!(
            "(a) fast mode, {name:19}: {:.3} of raw mj_step (median of {ROUNDS} x {steps} steps), {messages} messages a run{}",
            median(ratios[case].clone()),
            if case > 0 {
                format!(
                    ", sampler {:.1} ms CPU per 1000 messages",
                    per_1000(cpu[case])
                )
            } else {
                String::new()
            }
        );
    }
    let sampled = median(ratios[1].clone()) / median(ratios[0].clone());
    println!(
        "(a) a lossless fast run with every sample out runs at {sampled:.3} of the same run with no reader"
    );
    (per_1000(cpu[1]), per_1000(cpu[2]))
}

/// Part (b) for robot `name` (config `file`); its physics ratio with the sampler.
fn part_b(name: &str, file: &str, seconds: f64) -> f64 {
    let world = build_world(&config(file, true, 0.001)).expect("world");
    let mut ratios = Vec::new();
    let mut cpu = [(0.0, 0u64); 2];
    let mut lost = 0;
    // MuJoCo's time and the rest of the physics thread's, per step, with the sampler.
    let (mut mujoco, mut rest, mut steps) = (0.0, 0.0, 0);
    for round in 0..2 {
        for k in 0..2 {
            let sampled = (k + round) % 2 == 1;
            let measured = run(&world, SimMode::Realtime, 0, seconds, sampled);
            if sampled {
                ratios.push(measured.mujoco / measured.busy);
                mujoco += measured.mujoco;
                rest += measured.busy - measured.mujoco;
                steps += measured.steps;
                lost += measured.lost;
                cpu[1].0 += measured.sampler_cpu;
                cpu[1].1 += measured.messages;
            } else {
                cpu[0].0 += measured.mujoco / measured.busy;
                cpu[0].1 += 1;
            }
        }
    }
    let ratio = median(ratios);
    let per_step = |seconds: f64| seconds / steps.max(1) as f64 * 1e6;
    println!(
        "(b) {name:7} real time 1 kHz, noise on every sensor, {seconds:.0} s x 2: physics ratio (mj_step time / physics thread busy time) {ratio:.3} with the sampler (target >= 0.98), {:.3} with no reader; a step: mj_step {:.1} us, the bridge's part {:.2} us; {} messages, {lost} samples lost",
        cpu[0].0 / cpu[0].1 as f64,
        per_step(mujoco),
        per_step(rest),
        cpu[1].1
    );
    ratio
}

fn main() {
    let seconds: f64 = std::env::var("BENCH_SAMPLING_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    println!(
        "== sim-time sampling, the default robot (IMU, laser scan), every output at its default rate"
    );
    let (quiet, noisy) = part_a();
    let robots = [
        ("default", "default.yaml"),
        ("Go1", "go1.yaml"),
        ("G1", "g1.yaml"),
    ];
    let ratios: Vec<f64> = robots
        .iter()
        .map(|(name, file)| part_b(name, file, seconds))
        .collect();
    println!(
        "(c) sampler CPU per 1000 messages: noise off {quiet:.1} ms, noise on {noisy:.1} ms (ratio {:.2})",
        noisy / quiet
    );
    println!(
        "== target {}",
        if ratios.iter().all(|r| *r >= 0.98) {
            "met"
        } else {
            "NOT met"
        }
    );
}
