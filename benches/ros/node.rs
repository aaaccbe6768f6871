//! The benchmark itself (see benches/ros.rs).
use mujoco_bridge::config::{Config, SimConfig, SimMode};
use mujoco_bridge::model::{World, build_world};
use mujoco_bridge::ros::RosNode;
use mujoco_bridge::sim::{SimHandle, Simulation};
use mujoco_bridge::topics::sampler::{Sampler, SamplerSettings};
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
    topics: Vec<String>,
    child: Child,
    input: ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Probe {
    /// Subscribes `topics`; the second one tells when the node is matched.
    fn start(topics: &[&str]) -> Self {
        let mut child = python(&[&["probe"][..], topics].concat());
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "the probe did not start");
        Self {
            topics: topics.iter().map(|t| t.to_string()).collect(),
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
        self.topics
            .iter()
            .map(|t| counts[t].as_u64().unwrap_or(0))
            .collect()
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU seconds each thread of this process has used, by thread id, with its name; from
/// /proc (schedstat: nanoseconds on a CPU).
fn thread_cpu() -> Vec<(String, String, f64)> {
    let mut threads = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let on_cpu = std::fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0);
        let id = task.file_name().to_string_lossy().into_owned();
        threads.push((id, name.trim().to_string(), on_cpu * 1e-9));
    }
    threads
}

/// CPU seconds of the threads other than the physics thread between two `thread_cpu` calls
/// (threads that started in between count from zero), and of the physics thread.
fn cpu_between(before: &[(String, String, f64)], after: &[(String, String, f64)]) -> (f64, f64) {
    let (mut others, mut physics) = (0.0, 0.0);
    for (id, name, seconds) in after {
        let start = before
            .iter()
            .find(|(other, _, _)| other == id)
            .map_or(0.0, |(_, _, s)| *s);
        if name == "physics" {
            physics += seconds - start;
        } else {
            others += seconds - start;
        }
    }
    (others, physics)
}

/// CPU seconds a child process has used (all its threads), from /proc.
fn process_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at state, field 3.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(11) + ticks(12)) / per_second
}

/// What one bridge round measured.
struct Round {
    steps_per_second: f64,
    topic_rates: Vec<f64>,
    /// Messages the node published.
    messages: u64,
    /// CPU seconds of the node's threads besides physics (ROS thread, middleware threads).
    node_cpu: f64,
    physics_cpu: f64,
    probe_cpu: f64,
    seconds: f64,
    /// The physics thread's time in steps, and of it inside `mj_step`.
    step_time: f64,
    mujoco_time: f64,
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

/// The physics thread on `world` (the node follows it with its outputs' planner, as in the
/// binary).
fn start(world: &World, options: &SimConfig) -> Simulation {
    let controllers = mujoco_bridge::sim::controllers(world).unwrap();
    Simulation::start_with(world, controllers, options).unwrap()
}

/// The ROS 2 node and the sampler that publishes the topics through it, as the binary
/// starts them (without the streams); the sampler goes first.
struct Node {
    _sampler: Sampler,
    node: RosNode,
}

fn node(handle: &SimHandle, config: &Config, play_mode: SimMode) -> Node {
    let retimes = Default::default();
    let attached = mujoco_bridge::ros::Attached {
        recorder: None,
        retimes: Clone::clone(&retimes),
    };
    let mut node =
        RosNode::start(handle.clone(), config, play_mode, &[], attached).expect("ROS 2 node");
    let settings = SamplerSettings {
        sinks: vec![Box::new(node.sink().expect("the node's sink"))],
        sensors: Default::default(),
        publishing: node.publishing(),
        retimes,
        nice: config.ros.nice,
        hold_at_start: false,
    };
    let outputs = handle.follow(mujoco_bridge::topics::plan).expect("outputs");
    let sampler = Sampler::start(handle.observer(), outputs, settings).expect("sampler");
    Node {
        _sampler: sampler,
        node,
    }
}

/// Physics steps per second in fast mode with the node publishing, the messages per second
/// the probe received on each topic meanwhile, and what it all cost in CPU.
fn bridge_rate(
    world: &World,
    config: &Config,
    probe: &mut Probe,
    seconds: f64,
    priority: u8,
) -> Round {
    let sim = start(
        world,
        &SimConfig {
            mode: SimMode::Paused,
            realtime_priority: priority,
            ..Default::default()
        },
    );
    let handle = sim.handle();
    let node = node(&handle, config, SimMode::Fast);
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
    let published = node.node.publishing();
    let messages0 = published
        .published
        .load(std::sync::atomic::Ordering::Relaxed);
    let (cpu0, probe0) = (thread_cpu(), process_cpu(probe.child.id()));
    let stats0 = handle.stats();
    let start = Instant::now();
    handle.set_mode(SimMode::Fast).unwrap();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    handle.pause().unwrap();
    let elapsed = start.elapsed().as_secs_f64();
    let (cpu1, probe1) = (thread_cpu(), process_cpu(probe.child.id()));
    let messages = published
        .published
        .load(std::sync::atomic::Ordering::Relaxed)
        - messages0;
    let stats1 = handle.stats();
    let steps = stats1.steps - steps0;
    let counts1 = probe.counts();
    drop(node);
    drop(sim);
    let topic_rates = counts0
        .iter()
        .zip(&counts1)
        .map(|(a, b)| (b - a) as f64 / elapsed)
        .collect();
    let (node_cpu, physics_cpu) = cpu_between(&cpu0, &cpu1);
    Round {
        steps_per_second: steps as f64 / elapsed,
        topic_rates,
        messages,
        node_cpu,
        physics_cpu,
        probe_cpu: probe1 - probe0,
        seconds: elapsed,
        step_time: stats1.busy_time - stats0.busy_time,
        mujoco_time: stats1.mujoco_time - stats0.mujoco_time,
    }
}

/// `ROUNDS` rounds of raw `mj_step` beside the bridge, each `ROUND_SECONDS` long: (raw steps
/// per second, the bridge's round). Which runs first alternates, so drifts in machine load
/// hit both alike.
fn rounds(world: &World, config: &Config, probe: &mut Probe, priority: u8) -> Vec<(f64, Round)> {
    (0..ROUNDS)
        .map(|round| {
            if round % 2 == 0 {
                let raw = raw_rate(world, ROUND_SECONDS, priority);
                (
                    raw,
                    bridge_rate(world, config, probe, ROUND_SECONDS, priority),
                )
            } else {
                let bridge = bridge_rate(world, config, probe, ROUND_SECONDS, priority);
                (raw_rate(world, ROUND_SECONDS, priority), bridge)
            }
        })
        .collect()
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
    let mut probe = Probe::start(&TOPICS);
    let mut ratios = Vec::new();
    let (mut raw_sum, mut bridge_sum) = (0.0, 0.0);
    let mut topic_rates = vec![Vec::new(); TOPICS.len()];
    let (mut messages, mut node_cpu, mut physics_cpu, mut probe_cpu, mut seconds) =
        (0u64, 0.0, 0.0, 0.0, 0.0);
    for (raw, measured) in rounds(&world, &config, &mut probe, priority) {
        let bridge = measured.steps_per_second;
        raw_sum += raw;
        bridge_sum += bridge;
        ratios.push(bridge / raw);
        for (all, r) in topic_rates.iter_mut().zip(measured.topic_rates) {
            all.push(r);
        }
        messages += measured.messages;
        node_cpu += measured.node_cpu;
        physics_cpu += measured.physics_cpu;
        probe_cpu += measured.probe_cpu;
        seconds += measured.seconds;
    }
    ratios.sort_by(f64::total_cmp);
    let median = (ratios[ROUNDS / 2 - 1] + ratios[ROUNDS / 2]) / 2.0;
    let scheduling = if priority == 0 {
        "normal scheduling".to_string()
    } else {
        format!("both loops SCHED_FIFO {priority}")
    };
    println!(
        "(a) Go1 fast mode, {scheduling}, every publisher at {rate} Hz, an rclpy subscriber on each topic (raw, drained every 5 ms): raw mj_step {:.0} steps/s, physics thread {:.0} steps/s, ratio median {median:.3} (rounds {:.3}..{:.3}, {ROUNDS} x {ROUND_SECONDS} s; target >= 0.90)",
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
    let per_thousand = |cpu: f64| cpu / messages.max(1) as f64 * 1e6;
    println!(
        "    CPU per 1000 messages published ({:.0} msg/s): node's non-physics threads {:.1} ms ({:.0} % of a core), rclpy probe {:.1} ms; physics thread {:.0} % of a core",
        messages as f64 / seconds,
        per_thousand(node_cpu),
        node_cpu / seconds * 100.0,
        per_thousand(probe_cpu),
        physics_cpu / seconds * 100.0,
    );
    median
}

/// (d) 16 Go1 in one world, every publisher on at its default rate, an rclpy subscriber on
/// the first robot's topics, fast mode. The bridge's overhead as a share of MuJoCo's own step
/// time: on the physics thread, its time per step outside `mj_step` (commands, controllers,
/// state export) over the time inside, as the thread itself measures them; and the node's
/// threads' CPU over the same MuJoCo time. Beside them, steps/s against raw `mj_step`.
fn scale() -> f64 {
    const ROBOTS: usize = 16;
    let models = std::env::var("MUJOCO_BRIDGE_MODELS")
        .unwrap_or_else(|_| repo().join(".deps/models").to_string_lossy().into_owned());
    let mut yaml = String::from("world: {floor: true}\nzmq: {enabled: false}\nrobots:\n");
    for i in 0..ROBOTS {
        let (x, y) = ((i % 4) as f64, (i / 4) as f64);
        yaml += &format!(
            "  - name: go1_{i}\n    mjcf: {models}/menagerie/unitree_go1/go1.xml\n    pose: {{xyz: [{x}, {y}, 0.45]}}\n"
        );
    }
    let config = Config::from_yaml(&yaml, "16 Go1", repo(), &[]).expect("16-Go1 config");
    let world = build_world(&config).expect("16-Go1 world");
    let topics = [
        "/clock",
        "/go1_0/joint_states",
        "/tf",
        "/go1_0/odom",
        "/diagnostics",
    ];
    let mut probe = Probe::start(&topics);
    let (mut raw_sum, mut bridge_sum, mut node_cpu, mut seconds, mut messages) =
        (0.0, 0.0, 0.0, 0.0, 0u64);
    let (mut step_time, mut mujoco_time, mut steps) = (0.0, 0.0, 0.0);
    for (raw, measured) in rounds(&world, &config, &mut probe, 0) {
        raw_sum += raw;
        bridge_sum += measured.steps_per_second;
        node_cpu += measured.node_cpu;
        seconds += measured.seconds;
        messages += measured.messages;
        step_time += measured.step_time;
        mujoco_time += measured.mujoco_time;
        steps += measured.steps_per_second * measured.seconds;
    }
    let physics_share = (step_time - mujoco_time) / mujoco_time;
    println!(
        "(d) 16 Go1 in one world (nbody {}), fast mode, every publisher at its default rate ({:.0} msg/s), an rclpy subscriber on go1_0's topics: raw mj_step {:.0} steps/s, physics thread {:.0} steps/s ({ROUNDS} x {ROUND_SECONDS} s)",
        world.model.ffi().nbody,
        messages as f64 / seconds,
        raw_sum / ROUNDS as f64,
        bridge_sum / ROUNDS as f64,
    );
    println!(
        "    bridge overhead on the physics thread: {:.2} % of MuJoCo's step time ({:.1} us per step beside {:.1} us in mj_step; target <= 10 %); the node's threads besides: {:.1} % of MuJoCo's step time ({:.0} % of a core)",
        physics_share * 100.0,
        (step_time - mujoco_time) / steps * 1e6,
        mujoco_time / steps * 1e6,
        node_cpu / mujoco_time * 100.0,
        node_cpu / seconds * 100.0,
    );
    physics_share
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
    let sim = start(&world, &config.sim);
    let _node = node(&sim.handle(), &config, SimMode::Realtime);
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

/// What the peer build is: `BENCH_PEER_NAME` where given (another commit of the same backend,
/// to compare before and after a change), else the other backend.
fn peer_backend() -> String {
    if let Ok(name) = std::env::var("BENCH_PEER_NAME") {
        return name;
    }
    let other = if cfg!(feature = "dds") {
        "r2r: rcl + rmw_fastrtps"
    } else {
        "dds: ros2-client"
    };
    other.into()
}

/// One part of the benchmark, in this process; gives the throughput ratio where it has one.
fn part(name: &str, share_seconds: &str) -> Option<f64> {
    println!("-- [{}]", backend());
    match name {
        "a-normal" => Some(throughput(0)),
        // The physics thread's own real-time priority (config sim.realtime_priority) keeps it
        // ahead of the I/O threads; the raw loop gets the same priority, for a fair ratio.
        "a-fifo" => Some(throughput(50)),
        "scale" => Some(scale()),
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
    for name in ["a-normal", "a-fifo", "scale", "bc"] {
        let own = part(name, &share_seconds);
        let other = peer.as_deref().map(|peer| peer_part(peer, name));
        if let Some(own) = own {
            ratios.push((name, own, other.flatten()));
        }
    }
    for (name, own, other) in ratios {
        // Throughput ratios are met at >= 0.90; the scale case's overhead at <= 10 %.
        let (what, met): (&str, fn(f64) -> bool) = match name {
            "a-fifo" => ("throughput (SCHED_FIFO), target >= 0.90", |r| r >= 0.90),
            "scale" => ("16-Go1 bridge overhead, target <= 0.10", |r| r <= 0.10),
            _ => ("throughput (normal scheduling), target >= 0.90", |r| {
                r >= 0.90
            }),
        };
        let verdict = |r: f64| if met(r) { "met" } else { "NOT met" };
        print!("== {what}: {} {own:.3} {}", backend(), verdict(own));
        match other {
            Some(other) => println!("; {} {other:.3} {}", peer_backend(), verdict(other)),
            None => println!(),
        }
    }
}
