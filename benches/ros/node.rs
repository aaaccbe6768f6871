//! The benchmark itself (see benches/ros.rs).
use mujoco_bridge::config::{Config, SimConfig, SimMode};
use mujoco_bridge::model::{World, build_world};
use mujoco_bridge::ros::RosNode;
use mujoco_bridge::sim::Simulation;
use mujoco_rs::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 8;
const ROUND_SECONDS: f64 = 3.0;
const TOPICS: [&str; 5] = ["/clock", "/joint_states", "/tf", "/odom", "/diagnostics"];

fn repo() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn config(overrides: &[&str]) -> Config {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::load(&repo().join("config/go1.yaml"), &overrides).expect("config")
}

fn python(args: &[&str]) -> Child {
    let interpreter = repo().join(".deps/venv/bin/python");
    Command::new(interpreter)
        .arg(repo().join("benches/ros_clients.py"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the rclpy clients (scripts/setup-ros.sh installs them)")
}

/// The rclpy subscriber of (a): counts what it received, on request.
struct Probe {
    child: Child,
    input: ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Probe {
    fn start() -> Self {
        let mut child = python(&[&["probe"][..], &TOPICS[..]].concat());
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "the probe did not start");
        Self {
            child,
            input,
            output,
        }
    }

    fn counts(&mut self) -> Vec<u64> {
        writeln!(self.input, "count").unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        let counts: serde_json::Value = serde_json::from_str(&line).expect("probe counts");
        TOPICS
            .iter()
            .map(|t| counts[*t].as_u64().unwrap_or(0))
            .collect()
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Puts the calling thread under SCHED_FIFO at `priority` (0: leaves it alone).
fn realtime(priority: u8) {
    if priority > 0 {
        let param = libc::sched_param {
            sched_priority: priority as i32,
        };
        // SAFETY: plain syscall on the calling thread with a valid parameter block.
        let done = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
        assert_eq!(done, 0, "SCHED_FIFO needs CAP_SYS_NICE (root)");
    }
}

/// Raw mj_step calls per second over `seconds`, on a fresh thread like the physics thread
/// (at the same scheduling priority).
fn raw_rate(world: &World, seconds: f64, priority: u8) -> f64 {
    let model = world.model.clone();
    std::thread::spawn(move || {
        realtime(priority);
        let mut data = MjData::new(model);
        data.forward();
        let start = Instant::now();
        let mut steps = 0u64;
        while start.elapsed().as_secs_f64() < seconds {
            for _ in 0..100 {
                data.step();
            }
            steps += 100;
        }
        steps as f64 / start.elapsed().as_secs_f64()
    })
    .join()
    .unwrap()
}

/// Physics steps per second in fast mode with the node publishing, and the messages per
/// second the probe received on each topic meanwhile.
fn bridge_rate(
    world: &World,
    config: &Config,
    probe: &mut Probe,
    seconds: f64,
    priority: u8,
) -> (f64, Vec<f64>) {
    let sim = Simulation::start(
        world,
        &SimConfig {
            mode: SimMode::Paused,
            realtime_priority: priority,
            ..Default::default()
        },
    )
    .unwrap();
    let handle = sim.handle();
    let node = RosNode::start(handle.clone(), config, SimMode::Fast, &[]).expect("ROS 2 node");
    // Wait until the probe gets this node's joint_states (discovery done).
    let first = probe.counts()[1];
    let deadline = Instant::now() + Duration::from_secs(30);
    while probe.counts()[1] < first + 50 {
        assert!(
            Instant::now() < deadline,
            "the probe never matched the node"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let counts0 = probe.counts();
    let steps0 = handle.stats().steps;
    let start = Instant::now();
    handle.set_mode(SimMode::Fast).unwrap();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    handle.pause().unwrap();
    let elapsed = start.elapsed().as_secs_f64();
    let steps = handle.stats().steps - steps0;
    let counts1 = probe.counts();
    drop(node);
    drop(sim);
    let rates = counts0
        .iter()
        .zip(&counts1)
        .map(|(a, b)| (b - a) as f64 / elapsed)
        .collect();
    (steps as f64 / elapsed, rates)
}

/// (a) at one scheduling priority of both loops (0: the normal scheduler).
fn throughput(priority: u8) -> f64 {
    let rate = "1000";
    let config = config(&[
        "zmq.enabled=false",
        &format!("ros.rates.clock={rate}"),
        &format!("ros.rates.joint_states={rate}"),
        &format!("ros.rates.tf={rate}"),
        &format!("ros.rates.odom={rate}"),
        &format!("ros.rates.diagnostics={rate}"),
    ]);
    let world = build_world(&config).expect("world");
    let mut probe = Probe::start();
    let mut ratios = Vec::new();
    let (mut raw_sum, mut bridge_sum) = (0.0, 0.0);
    let mut topic_rates = vec![Vec::new(); TOPICS.len()];
    for round in 0..ROUNDS {
        // Alternate which runs first, so drifts in machine load hit both alike.
        let (raw, (bridge, rates)) = if round % 2 == 0 {
            let raw = raw_rate(&world, ROUND_SECONDS, priority);
            (
                raw,
                bridge_rate(&world, &config, &mut probe, ROUND_SECONDS, priority),
            )
        } else {
            let bridge = bridge_rate(&world, &config, &mut probe, ROUND_SECONDS, priority);
            (raw_rate(&world, ROUND_SECONDS, priority), bridge)
        };
        raw_sum += raw;
        bridge_sum += bridge;
        ratios.push(bridge / raw);
        for (all, r) in topic_rates.iter_mut().zip(rates) {
            all.push(r);
        }
    }
    ratios.sort_by(f64::total_cmp);
    let median = (ratios[ROUNDS / 2 - 1] + ratios[ROUNDS / 2]) / 2.0;
    let scheduling = if priority == 0 {
        "normal scheduling".to_string()
    } else {
        format!("both loops SCHED_FIFO {priority}")
    };
    println!(
        "(a) Go1 fast mode, {scheduling}, every publisher at {rate} Hz, an rclpy subscriber (raw) on each topic: raw mj_step {:.0} steps/s, physics thread {:.0} steps/s, ratio median {median:.3} (rounds {:.3}..{:.3}, {ROUNDS} x {ROUND_SECONDS} s; target >= 0.85)",
        raw_sum / ROUNDS as f64,
        bridge_sum / ROUNDS as f64,
        ratios[0],
        ratios[ROUNDS - 1],
    );
    for (topic, rates) in TOPICS.iter().zip(&topic_rates) {
        let mean = rates.iter().sum::<f64>() / rates.len() as f64;
        let (low, high) = rates
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), r| (l.min(*r), h.max(*r)));
        println!(
            "    {topic:14} received at {mean:7.1} msg/s (rounds {low:.1}..{high:.1}; configured {rate} Hz)"
        );
    }
    median
}

fn latency_and_share(share_seconds: &str) {
    let config = config(&[
        "world.timestep=0.001",
        "robots.0.control.source=ros",
        "robots.0.control.mode=passthrough",
        "zmq.enabled=false",
        "ros.rates.joint_states=1000",
        "sim.mode=realtime",
    ]);
    let world = build_world(&config).expect("world");
    let sim = Simulation::start(&world, &config.sim).unwrap();
    let _node = RosNode::start(sim.handle(), &config, SimMode::Realtime, &[]).expect("ROS 2 node");
    let mut echo = python(&["echo"]);
    let mut client = python(&["latency", "/", "300", share_seconds]);
    let output = BufReader::new(client.stdout.take().unwrap());
    for line in output.lines() {
        println!("{}", line.unwrap());
    }
    let status = client.wait().unwrap();
    let _ = echo.kill();
    let _ = echo.wait();
    assert!(status.success(), "the latency client failed");
    let stats = sim.handle().stats();
    println!(
        "    physics meanwhile: real-time factor {:.4}, overruns {}",
        stats.real_time_factor, stats.overruns
    );
}

/// The backend this build runs, for the printed lines.
fn backend() -> &'static str {
    if cfg!(feature = "dds") {
        "dds: ros2-client"
    } else {
        "r2r: rcl + rmw_fastrtps"
    }
}

/// The backend of the peer build (the other one).
fn peer_backend() -> &'static str {
    if cfg!(feature = "dds") {
        "r2r: rcl + rmw_fastrtps"
    } else {
        "dds: ros2-client"
    }
}

/// One part of the benchmark, in this process; gives the throughput ratio where it has one.
fn part(name: &str, share_seconds: &str) -> Option<f64> {
    println!("-- [{}]", backend());
    match name {
        "a-normal" => Some(throughput(0)),
        // The physics thread's own real-time priority (config sim.realtime_priority) keeps it
        // ahead of the I/O threads; the raw loop gets the same priority, for a fair ratio.
        "a-fifo" => Some(throughput(50)),
        "bc" => {
            latency_and_share(share_seconds);
            None
        }
        other => panic!("unknown part {other}"),
    }
}

/// Runs `name` in the peer build; its lines are printed as they come, and its ratio line
/// (`ratio R`) is parsed.
fn peer_part(peer: &str, name: &str) -> Option<f64> {
    let mut child = Command::new(peer)
        .args(["--bench", "--part", name])
        .stdout(Stdio::piped())
        .spawn()
        .expect("BENCH_PEER");
    let output = BufReader::new(child.stdout.take().unwrap());
    let mut ratio = None;
    for line in output.lines() {
        let line = line.unwrap();
        match line.strip_prefix("ratio ") {
            Some(r) => ratio = r.parse().ok(),
            None => println!("{line}"),
        }
    }
    assert!(
        child.wait().unwrap().success(),
        "the peer's part {name} failed"
    );
    ratio
}

pub fn main() {
    if std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref() != Ok("LOCALHOST") {
        panic!("run with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (scripts/bench-ros.sh does)");
    }
    let share_seconds = std::env::var("BENCH_SHARE_SECONDS").unwrap_or_else(|_| "30".into());
    let args: Vec<String> = std::env::args().collect();
    // As the peer of another build: one part, then its ratio for the caller to parse.
    if let Some(at) = args.iter().position(|a| a == "--part") {
        if let Some(ratio) = part(&args[at + 1], &share_seconds) {
            println!("ratio {ratio}");
        }
        return;
    }
    let peer = std::env::var("BENCH_PEER").ok().filter(|p| !p.is_empty());
    println!("== ROS 2 node benchmark, Unitree Go1");
    let mut ratios = Vec::new();
    for name in ["a-normal", "a-fifo", "bc"] {
        let own = part(name, &share_seconds);
        let other = peer.as_deref().map(|peer| peer_part(peer, name));
        if let Some(own) = own {
            ratios.push((name, own, other.flatten()));
        }
    }
    let verdict = |ratio: f64| if ratio >= 0.85 { "met" } else { "NOT met" };
    for (name, own, other) in ratios {
        let scheduling = if name == "a-fifo" {
            "SCHED_FIFO"
        } else {
            "normal scheduling"
        };
        print!(
            "== throughput ({scheduling}), target >= 0.85: {} {own:.3} {}",
            backend(),
            verdict(own)
        );
        match other {
            Some(other) => println!("; {} {other:.3} {}", peer_backend(), verdict(other)),
            None => println!(),
        }
    }
}
