//! Viewer benchmark: the bridge binary runs the default robot at 1 kHz in real time for a
//! few seconds, with and without `--viewer` (rounds alternate), on a private Xvfb display
//! this program starts. Prints, per setting, the real-time factor the run reports, the
//! process's CPU time per second of run (all threads), the CPU time of the viewer thread and
//! Mesa's rasterizer threads, and the frames it drew per second; then the ratio of the real-time factors, with over without.
//! Run: cargo build --profile release-no-ros --no-default-features && \
//!      cargo bench --profile release-no-ros --no-default-features --bench viewer   (BENCH_ROUNDS=3, BENCH_SECONDS=6)
#[path = "common/threads.rs"]
mod threads;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn env_number(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// CPU seconds (user + system) of the children waited for so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

struct Round {
    real_time_factor: f64,
    cpu_per_second: f64,
    viewer_cpu_per_second: f64,
    frames_per_second: f64,
}

fn run(binary: &str, display: &str, seconds: f64, viewer: bool) -> Round {
    let mut args = vec![
        "--timestep".to_string(),
        "0.001".into(),
        "--mode".into(),
        "realtime".into(),
        "--duration".into(),
        seconds.to_string(),
    ];
    if viewer {
        args.push("--viewer".into());
    }
    let cpu_before = children_cpu();
    let started = Instant::now();
    let mut child = Command::new(binary)
        .args(&args)
        .env("DISPLAY", display)
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the bridge");
    let pid = child.id();
    let mut viewer_cpu = 0.0;
    while child.try_wait().expect("wait").is_none() {
        // The viewer's thread and Mesa's rasterizer threads that draw for it.
        viewer_cpu =
            threads::threads_cpu(&pid.to_string(), &["viewer", "llvmpipe"]).max(viewer_cpu);
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().expect("output");
    let wall = started.elapsed().as_secs_f64();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{stderr}");
    let after = |text: &str, key: &str| -> f64 {
        text.split(key)
            .nth(1)
            .and_then(|rest| {
                rest.split(|c: char| c == ',' || c.is_whitespace())
                    .find(|w| !w.is_empty())
            })
            .and_then(|w| w.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let frames = if viewer {
        assert!(stderr.contains("viewer: a window"), "no window: {stderr}");
        stderr
            .lines()
            .find_map(|l| l.split("viewer: ").nth(1)?.strip_suffix(" frames drawn"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(f64::NAN)
    } else {
        0.0
    };
    Round {
        real_time_factor: after(&stdout, "real-time factor "),
        cpu_per_second: (children_cpu() - cpu_before) / wall,
        viewer_cpu_per_second: viewer_cpu / seconds,
        frames_per_second: frames / seconds,
    }
}

fn main() {
    let binary = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/release-no-ros/mujoco_bridge");
    let binary = binary.to_str().expect("path");
    assert!(
        std::path::Path::new(binary).exists(),
        "build it first: cargo build --profile release-no-ros --no-default-features"
    );
    let rounds = env_number("BENCH_ROUNDS", 3.0) as usize;
    let seconds = env_number("BENCH_SECONDS", 6.0);
    // Xvfb picks a free display number itself and writes it to the pipe it is given.
    let mut fds = [0; 2];
    // SAFETY: a two-int array for pipe(2).
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    let mut xvfb = Command::new("Xvfb")
        .args([
            "-displayfd",
            &fds[1].to_string(),
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb (scripts/setup-viewer.sh installs it)");
    // SAFETY: the write end is ours to close; the child has its copy.
    unsafe { libc::close(fds[1]) };
    // SAFETY: the read end is ours; the File takes it over and closes it.
    let pipe = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[0]) };
    let mut said = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(pipe), &mut said)
        .expect("Xvfb's display number");
    let display = format!(":{}", said.trim());
    println!(
        "viewer benchmark: default robot, 1 kHz physics in real time, {seconds} s per run, {rounds} rounds each, alternating (Xvfb {display}, Mesa llvmpipe)"
    );
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        without.push(run(binary, &display, seconds, false));
        with.push(run(binary, &display, seconds, true));
    }
    // SIGTERM: Xvfb removes its lock file on the way out.
    // SAFETY: a plain signal to the child this program started.
    unsafe { libc::kill(xvfb.id() as libc::pid_t, libc::SIGTERM) };
    let _ = xvfb.wait();
    let mean = |rounds: &[Round], f: fn(&Round) -> f64| {
        rounds.iter().map(f).sum::<f64>() / rounds.len() as f64
    };
    for (name, rounds) in [("without viewer", &without), ("with viewer", &with)] {
        let factors: Vec<String> = rounds
            .iter()
            .map(|r| format!("{:.4}", r.real_time_factor))
            .collect();
        println!(
            "{name:>15}: real-time factor {} (mean {:.4}); CPU {:.3} cores (viewer and its GL threads {:.3}); {:.1} frames/s",
            factors.join(" "),
            mean(rounds, |r| r.real_time_factor),
            mean(rounds, |r| r.cpu_per_second),
            mean(rounds, |r| r.viewer_cpu_per_second),
            mean(rounds, |r| r.frames_per_second),
        );
    }
    println!(
        "real-time factor with / without the viewer: {:.4}",
        mean(&with, |r| r.real_time_factor) / mean(&without, |r| r.real_time_factor)
    );
}
