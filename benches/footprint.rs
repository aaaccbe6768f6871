//! Footprint: the resident memory of the bridge (the release binary with its ROS 2 node and
//! the legacy ZMQ side on, in real time) beside a plain mujoco-rs process that loads and steps
//! the same compiled model at the same rate, for the default robot, the Go1 and the G1, each
//! with a 640x480 camera configured: at idle with nobody subscribed, and while that camera
//! streams to a legacy client (CPU renderer here). Run through `scripts/bench-footprint.sh`
//! (the release build, a private network namespace).
use mujoco_bridge::config::Config;
use mujoco_bridge::model::build_world;
use mujoco_rs::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Seconds each process runs before it is measured (its allocations settled).
const SETTLE: f64 = 8.0;
/// Seconds the camera streams before the streaming figure is taken.
const STREAM: f64 = 12.0;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (resident, anonymous, file-backed) MB of process `pid`.
fn memory(pid: u32) -> (f64, f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (field("VmRSS:"), field("RssAnon:"), field("RssFile:"))
}

/// The child side: load `mjb`, step it in real time for `seconds`, print its own memory.
fn mujoco_alone(mjb: &str, seconds: f64) {
    let model = std::sync::Arc::new(MjModel::from_mjb(mjb).expect("model"));
    let mut data = MjData::new(model.clone());
    let dt = model.opt().timestep;
    let started = Instant::now();
    let mut steps = 0u64;
    while started.elapsed().as_secs_f64() < seconds {
        data.step();
        steps += 1;
        let due = Duration::from_secs_f64(steps as f64 * dt);
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    let (rss, anon, file) = memory(std::process::id());
    println!("memory {rss} {anon} {file}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

struct Robot {
    name: &'static str,
    config: &'static str,
    overrides: Vec<String>,
}

/// The bridge on `robot`, with its legacy camera streams from `camera_port`.
fn bridge(binary: &Path, robot: &Robot, camera_port: u16) -> Child {
    let [state, control, info] = [free_port(), free_port(), free_port()];
    let mut args = vec![
        "--config".to_string(),
        repo().join(robot.config).display().to_string(),
        "--mode".into(),
        "realtime".into(),
    ];
    let sets = [
        "zmq.enabled=true".to_string(),
        format!("zmq.state=tcp://127.0.0.1:{state}"),
        format!("zmq.control=tcp://127.0.0.1:{control}"),
        format!("zmq.info=tcp://127.0.0.1:{info}"),
        format!("zmq.camera_port={camera_port}"),
        "sim.stats_period=0".into(),
    ];
    for set in sets.iter().chain(&robot.overrides) {
        args.push("--set".into());
        args.push(set.clone());
    }
    Command::new(binary)
        .args(&args)
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the bridge binary (scripts/bench-footprint.sh builds it)")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--mujoco-alone") {
        mujoco_alone(&args[at + 1], args[at + 2].parse().expect("seconds"));
        return;
    }
    if !args.iter().any(|a| a == "--bench") {
        return;
    }
    let binary = std::env::var("BENCH_BRIDGE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo().join("target/release/mujoco_bridge"));
    let camera = |body: &str, xyz: &str| {
        format!(
            "robots.0.cameras=[{{camera: bench, mount: {{body: {body}, xyz: {xyz}, rpy: [0, 0.2, 0], fovy: 60}}, \
             width: 640, height: 480, rate: 15}}]"
        )
    };
    let robots = [
        Robot {
            name: "default",
            config: "config/default.yaml",
            overrides: vec![camera("base_link", "[0.22, 0, 0.12]")],
        },
        Robot {
            name: "Go1",
            config: "config/go1.yaml",
            overrides: vec![camera("trunk", "[0.29, 0, 0.03]")],
        },
        Robot {
            name: "G1",
            config: "config/g1.yaml",
            overrides: vec![camera("pelvis", "[0.1, 0, 0.3]")],
        },
    ];
    println!(
        "== footprint: resident MB (anonymous + file-backed), bridge {} beside mujoco-rs alone on the same model",
        binary.display()
    );
    let mut met = true;
    for robot in &robots {
        let config = Config::load(&repo().join(robot.config), &robot.overrides).expect("config");
        let world = build_world(&config).expect("world");
        let mjb = std::env::temp_dir().join(format!("footprint-{}.mjb", std::process::id()));
        world.model.save_to_file(&mjb).expect("mjb");
        let alone = Command::new(&args[0])
            .args([
                "--mujoco-alone",
                &mjb.display().to_string(),
                &SETTLE.to_string(),
            ])
            .output()
            .expect("the mujoco-alone child");
        let line = String::from_utf8_lossy(&alone.stdout);
        let alone: Vec<f64> = line
            .trim()
            .strip_prefix("memory ")
            .expect("its memory line")
            .split_whitespace()
            .map(|v| v.parse().expect("a number"))
            .collect();
        let _ = std::fs::remove_file(&mjb);

        let camera_port = free_port();
        let mut child = bridge(&binary, robot, camera_port);
        std::thread::sleep(Duration::from_secs_f64(SETTLE));
        let idle = memory(child.id());
        let context = zmq::Context::new();
        let subscriber = context.socket(zmq::SUB).expect("socket");
        subscriber
            .connect(&format!("tcp://127.0.0.1:{camera_port}"))
            .expect("connect");
        subscriber.set_subscribe(b"").expect("subscribe");
        let (started, mut frames) = (Instant::now(), 0);
        while started.elapsed().as_secs_f64() < STREAM {
            if subscriber.poll(zmq::POLLIN, 100).unwrap_or(0) > 0
                && subscriber.recv_multipart(0).is_ok()
            {
                frames += 1;
            }
        }
        let streaming = memory(child.id());
        drop(subscriber);
        // SAFETY: a signal to the child this benchmark started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let _ = child.wait();

        let (idle_over, streaming_over) = (idle.0 - alone[0], streaming.0 - alone[0]);
        met &= idle_over <= 60.0 && streaming_over <= 150.0;
        println!(
            "{:<8} mujoco-rs alone {:6.1} ({:.1} + {:.1}) | bridge idle, camera configured and unsubscribed {:6.1} ({:.1} + {:.1}), +{:.1} MB (target <= +60) | streaming 640x480 ({:.1} frames/s) {:6.1} ({:.1} + {:.1}), +{:.1} MB (target <= +150)",
            robot.name,
            alone[0],
            alone[1],
            alone[2],
            idle.0,
            idle.1,
            idle.2,
            idle_over,
            frames as f64 / STREAM,
            streaming.0,
            streaming.1,
            streaming.2,
            streaming_over
        );
    }
    println!("== targets {}", if met { "met" } else { "NOT met" });
}
