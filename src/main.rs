//! The `mujoco_bridge` node: load the config and models, start the physics thread, run until
//! stopped (or for a batch of steps), reporting live figures.
use clap::Parser;
use mujoco_bridge::cli::{Cli, split_ros_args};
use mujoco_bridge::config::{Config, ModelKind, SimMode};
use mujoco_bridge::error::InputError;
use mujoco_bridge::model::{build_world, summary};
use mujoco_bridge::sim::{SimHandle, Simulation, now_ns};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Our messages at info; MuJoCo's own (target `mujoco::*`, e.g. compile timings) from warn.
const DEFAULT_LOG_FILTER: &str = "info,mujoco=warn,mujoco_bridge=info";

static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP_REQUESTED.store(true, Ordering::Relaxed);
}

fn install_signal_handlers() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

fn load_config(cli: &Cli) -> Result<Config, InputError> {
    let overrides = cli.all_overrides();
    if let Some(path) = &cli.config {
        Config::load(path, &overrides)
    } else if let Some(path) = &cli.mjcf {
        Config::single_model(ModelKind::Mjcf, path, &overrides)
    } else if let Some(path) = &cli.urdf {
        Config::single_model(ModelKind::Urdf, path, &overrides)
    } else {
        Config::embedded_default(&overrides)
    }
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(DEFAULT_LOG_FILTER))
        .format_target(false)
        .init();
    let (args, _ros_args) = split_ros_args(std::env::args().collect());
    let cli = Cli::parse_from(args);
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> Result<(), InputError> {
    if let Some(d) = cli.duration
        && !(d.is_finite() && d > 0.0)
    {
        return Err(InputError::new(
            "<command line>",
            format!("--duration must be a positive number of seconds, got {d}"),
        ));
    }
    let mut config = load_config(cli)?;
    let world = build_world(&config)?;
    if cli.summary {
        print!("{}", summary(&world));
        return Ok(());
    }
    let model = &world.model;
    log::info!(
        "loaded {} robot(s) from {}: nq {}, nu {}, timestep {} s, mode {:?}",
        world.robots.len(),
        config.origin,
        model.ffi().nq,
        model.ffi().nu,
        model.opt().timestep,
        config.sim.mode
    );
    // A batch run ends on an exact step: the physics thread pauses itself there. It starts
    // paused so that the limit is in place before the first step.
    let timestep = model.opt().timestep;
    let last_step = cli.steps.or_else(|| {
        cli.duration
            .map(|d| (d / timestep - 1e-9).ceil().max(1.0) as u64)
    });
    let run_mode = config.sim.mode;
    if last_step.is_some() {
        config.sim.mode = SimMode::Paused;
    }
    install_signal_handlers();
    let sim = Simulation::start(&world, &config.sim).map_err(|e| {
        InputError::new("<system>", format!("cannot start the physics thread: {e}"))
    })?;
    let handle = sim.handle();
    prepare(&handle, cli)?;
    let started = now_ns();
    if let Some(step) = last_step {
        handle.pause_at_step(step);
        if run_mode != SimMode::Paused {
            handle
                .set_mode(run_mode)
                .map_err(|e| InputError::new("<system>", e.to_string()))?;
        }
    }
    monitor(&handle, last_step, config.sim.stats_period);
    let wall = (now_ns() - started) as f64 * 1e-9;
    finish(&handle, cli)?;
    let stats = handle.stats();
    sim.shutdown();
    println!(
        "run: mode {:?}, steps {}, sim time {:.6} s, wall time {:.3} s, real-time factor {:.3}, \
         mean step {:.1} us, overruns {}, rejected commands {}, instabilities {}",
        run_mode,
        stats.steps,
        stats.sim_time,
        wall,
        if wall > 0.0 {
            stats.sim_time / wall
        } else {
            0.0
        },
        stats.run_mean_step_time * 1e6,
        stats.overruns,
        stats.rejected_commands,
        stats.instabilities
    );
    Ok(())
}

fn operation_error(e: mujoco_bridge::sim::OperationError) -> InputError {
    InputError::new("<command line>", e.to_string())
}

/// Start state and recording the command line asks for, before the first step.
fn prepare(handle: &SimHandle, cli: &Cli) -> Result<(), InputError> {
    let robot = (handle.robots().len() == 1).then_some(0);
    if let Some(name) = &cli.keyframe {
        handle
            .reset_to_keyframe(robot, name)
            .map_err(|e| InputError::new("<command line>", e.to_string()).at("--keyframe"))?;
    }
    if let Some(path) = &cli.load_snapshot {
        handle.load_snapshot_file(path).map_err(operation_error)?;
    }
    if let Some(path) = &cli.replay {
        handle.play_csv(path).map_err(operation_error)?;
    }
    if let Some(path) = &cli.record {
        handle.start_recording(path).map_err(operation_error)?;
    }
    Ok(())
}

/// Closes the recording and writes the final snapshot the command line asks for.
fn finish(handle: &SimHandle, cli: &Cli) -> Result<(), InputError> {
    if cli.record.is_some() {
        let summary = handle.stop_recording().map_err(operation_error)?;
        log::info!(
            "recorded {} rows ({} dropped)",
            summary.rows,
            summary.dropped
        );
    }
    if let Some(path) = &cli.save_snapshot {
        handle.save_snapshot_file(path).map_err(operation_error)?;
        log::info!("snapshot written to {}", path.display());
    }
    Ok(())
}

/// Waits for the end of the run (its last step, or a signal), logging live figures.
fn monitor(handle: &SimHandle, last_step: Option<u64>, stats_period: f64) {
    let mut next_report = now_ns() + (stats_period * 1e9) as u64;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let stats = handle.stats();
        if last_step.is_some_and(|n| stats.steps >= n) {
            return;
        }
        if STOP_REQUESTED.load(Ordering::Relaxed) {
            log::info!("stopping");
            return;
        }
        if stats_period > 0.0 && now_ns() >= next_report {
            next_report += (stats_period * 1e9) as u64;
            log::info!(
                "sim time {:.2} s, real-time factor {:.3}, step {:.1} us (max {:.1}), overruns {}, \
                 rejected commands {}",
                stats.sim_time,
                stats.real_time_factor,
                stats.mean_step_time * 1e6,
                stats.max_step_time * 1e6,
                stats.overruns,
                stats.rejected_commands
            );
        }
    }
}
