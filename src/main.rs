//! The `mujoco_bridge` node: load the config and models, start the physics thread, run until
//! stopped (or for a batch of steps), reporting live figures.
use clap::Parser;
use mujoco_bridge::cli::{Cli, split_ros_args};
use mujoco_bridge::config::{Config, ModelKind, OnDivergence, SimMode};
use mujoco_bridge::error::InputError;
use mujoco_bridge::model::{build_world, summary};
use mujoco_bridge::sim::{PauseCause, SimHandle, Simulation, StartError, now_ns};
use mujoco_bridge::topics::sampler::{Sampler, Sink};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Our messages at info; MuJoCo's own (target `mujoco::*`) from warn; the DDS stack's only
/// when they are errors (`logging::init` keeps it so whatever RUST_LOG's general level).
const DEFAULT_LOG_FILTER: &str = "info,mujoco=warn,mujoco_bridge=info";

/// See Cargo.toml: per-thread heaps keep allocator locks out of the timekeeping threads.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// The config from the command line, with the ROS parameters (params files, `-p`) applied
/// first so that `--config` and `--set` win over them.
fn load_config(cli: &Cli, ros_args: &[String]) -> Result<Config, InputError> {
    let params = mujoco_bridge::config::RosParams::from_ros_args(ros_args)?;
    let mut overrides = params.overrides;
    overrides.extend(cli.all_overrides());
    let from_params = params
        .config
        .filter(|_| cli.config.is_none() && cli.mjcf.is_none() && cli.urdf.is_none());
    if params.robot_description.is_some()
        && (from_params.is_some()
            || cli.config.is_some()
            || cli.mjcf.is_some()
            || cli.urdf.is_some())
    {
        log::warn!(
            "parameter robot_description is ignored: a config or model file names the robots"
        );
    }
    let mut config = if let Some(path) = cli.config.as_ref().or(from_params.as_ref()) {
        Config::load(path, &overrides)
    } else if let Some(path) = &cli.mjcf {
        Config::single_model(ModelKind::Mjcf, path, &overrides)
    } else if let Some(path) = &cli.urdf {
        Config::single_model(ModelKind::Urdf, path, &overrides)
    } else if let Some(text) = &params.robot_description {
        // The robot's own name, as `ros_gz_sim create -name` would give it.
        let name = mujoco_bridge::model::xml::parse(text)
            .ok()
            .and_then(|doc| doc.attr("name").map(str::to_string))
            .unwrap_or_default();
        Config::urdf_description(&name, text, &overrides)
    } else {
        Config::embedded_default(&overrides)
    }?;
    // Model-loading flags apply to every robot of the config.
    for robot in &mut config.robots {
        robot.strict |= cli.strict;
        for arg in &cli.xacro_args {
            let (name, value) = arg.split_once(":=").ok_or_else(|| {
                InputError::new(
                    "<command line>",
                    format!("--xacro-arg '{arg}' is not NAME:=VALUE"),
                )
            })?;
            robot.xacro_args.insert(name.to_string(), value.to_string());
        }
    }
    Ok(config)
}

/// What ended a run early, by kind; the text is made here, at the edge.
#[derive(Debug, thiserror::Error)]
enum RunError {
    /// A config, model, flag or file the user can fix.
    #[error("{0}")]
    Input(#[from] InputError),
    /// `--export-mjcf` could not write or check its file.
    #[error("--export-mjcf: {0}")]
    Export(#[from] mujoco_bridge::model::export::ExportError),
    /// The exported file loads into a model other than the bridge's.
    #[error("--export-mjcf: MuJoCo's load of {file} differs from the bridge's model: {comparison}")]
    ExportDiffers { file: String, comparison: String },
    /// The ROS outputs cannot be planned from the config.
    #[error("{origin}: {error}")]
    Outputs {
        origin: String,
        error: mujoco_bridge::topics::PlanError,
    },
    /// A legacy ZMQ endpoint of the config cannot be served.
    #[error("{origin}: zmq: {error}")]
    Zmq {
        origin: String,
        error: mujoco_bridge::zmq::ServerError,
    },
    /// The legacy camera streams cannot be served.
    #[error("{origin}: zmq: {error}")]
    Cameras {
        origin: String,
        error: mujoco_bridge::zmq::CameraStreamError,
    },
    /// The Foxglove server or the MCAP file cannot be opened.
    #[error("{origin}: {error}")]
    Streams {
        origin: String,
        error: mujoco_bridge::stream::StreamError,
    },
    /// The ROS 2 node did not start.
    #[cfg(any(feature = "ros", feature = "dds"))]
    #[error("<ros>: {0}")]
    Ros(mujoco_bridge::ros::NodeError),
    /// The system refused a thread or an operation of the run itself.
    #[error("<system>: {0}")]
    System(String),
}

/// The render and ray-casting threads of the run, for what reads what they make (a ROS node,
/// the legacy camera streams, the Foxglove view and MCAP recording). They hold nothing until
/// a frame or scan is asked for; a thread that cannot start is said once and left out, and
/// the rest of the node runs on.
fn start_sensors(config: &Config) -> mujoco_bridge::render::Sensors {
    use mujoco_bridge::render;
    let idle = Duration::from_secs_f64(config.render.idle_release);
    fn started<T>(what: &str, result: std::io::Result<T>) -> Option<std::sync::Arc<T>> {
        result
            .map_err(|e| log::error!("{what} are off: cannot start their thread: {e}"))
            .ok()
            .map(std::sync::Arc::new)
    }
    render::Sensors {
        // The streams' cameras and lidars (Foxglove, MCAP) use them too, in every build.
        renderer: started("cameras", render::start_renderer(idle, config.render.nice)),
        lidars: started("lidars", render::start_lidars(idle, config.render.nice)),
    }
}

impl RunError {
    /// 2 for what the user gave (config, model, flags, endpoints, files), 1 for the system's
    /// refusals and the bridge's own defects.
    fn exit_code(&self) -> u8 {
        match self {
            Self::Input(_)
            | Self::Export(_)
            | Self::Outputs { .. }
            | Self::Zmq { .. }
            | Self::Cameras { .. }
            | Self::Streams { .. } => 2,
            // The bridge wrote a file that is not its model: its own defect.
            Self::ExportDiffers { .. } => 1,
            #[cfg(any(feature = "ros", feature = "dds"))]
            Self::Ros(_) => 2,
            Self::System(_) => 1,
        }
    }
}

fn main() -> ExitCode {
    mujoco_bridge::census::tune_allocator();
    mujoco_bridge::logging::init(DEFAULT_LOG_FILTER);
    mujoco_bridge::supervise::install_panic_log();
    let (args, ros_args) = split_ros_args(std::env::args().collect());
    let cli = Cli::parse_from(args);
    let code = match run(&cli, ros_args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    };
    #[cfg(any(feature = "ros", feature = "dds"))]
    if mujoco_bridge::ros::teardown_hung() {
        end_now(code);
    }
    ExitCode::from(code)
}

/// Ends the process at once: the exit handlers (the middleware's among them) may wait on
/// the thread its teardown left behind. Everything the run wrote is closed by now.
#[cfg(any(feature = "ros", feature = "dds"))]
fn end_now(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process without touching any state of this one.
    unsafe { libc::_exit(i32::from(code)) }
}

/// Which ROS 2 node this binary has: a build without one publishes nothing on ROS 2, and a
/// user running it by mistake should learn that at once.
fn say_backend() {
    let version = env!("CARGO_PKG_VERSION");
    match mujoco_bridge::ros::BACKEND {
        Some(backend) => log::info!("mujoco_bridge {version}: the ROS 2 node runs on {backend}"),
        None => log::info!(
            "mujoco_bridge {version} was built without a ROS 2 node (no `ros` or `dds` \
             feature): nothing is published on ROS 2; the legacy ZMQ side, Foxglove and MCAP run"
        ),
    }
}

fn run(cli: &Cli, ros_args: Vec<String>) -> Result<(), RunError> {
    check_duration(cli)?;
    say_backend();
    let mut config = load_config(cli, &ros_args)?;
    if let Some(out) = &cli.export_mjcf {
        return export_mjcf(&config, out, cli.export_robot.as_deref());
    }
    let world = build_world(&config)?;
    let controllers = mujoco_bridge::sim::controllers(&world)?;
    if cli.summary {
        // The outputs are planned with the world when the simulation starts; this starts none.
        mujoco_bridge::topics::check(&world).map_err(|error| RunError::Outputs {
            origin: config.origin.clone(),
            error,
        })?;
        print!("{}", summary(&world));
        return Ok(());
    }
    log_loaded(&world, &config);
    // The physics thread starts paused: the start state, the recorder, the legacy servers
    // and a batch run's last step are all in place before the first step.
    let last_step = last_step(cli, world.model.opt().timestep);
    // Checked now; drawn at the end in the world as it is then (a camera may have gone).
    screenshot_spec(&world.robots, cli)?;
    let run_mode = config.sim.mode;
    config.sim.mode = SimMode::Paused;
    install_signal_handlers();
    let stream_settings = stream_settings(&config, cli)?;
    let sim = Simulation::start_with(&world, controllers, &config.sim).map_err(|e| match e {
        StartError::Input(e) => RunError::Input(e),
        StartError::Thread(_) => RunError::System(e.to_string()),
    })?;
    // The simulation holds the world from here on: the start's model copy goes with it when
    // the first world change replaces it, not at the end of the run.
    drop(world);
    let handle = sim.handle();
    let outputs = follow_world(&handle)?;
    prepare(&handle, cli)?;
    let sensors = start_sensors(&config);
    let start = AdapterStart {
        config: &config,
        handle: &handle,
        sensors: &sensors,
        ros_args: &ros_args,
        run_mode,
    };
    let mut adapters = start_adapters(&start, cli, &stream_settings, outputs)?;
    let viewer = start_viewer(cli, &handle);
    let last_step = last_step.map(|n| handle.stats().steps + n);
    if let Some(step) = last_step {
        handle.pause_at_step(step);
    }
    let started = now_ns();
    if run_mode != SimMode::Paused {
        handle
            .set_mode(run_mode)
            .map_err(|e| RunError::System(e.to_string()))?;
    }
    let ended = monitor(&handle, last_step, config.sim.stats_period);
    if let Ended::Failed(why) = ended {
        return Err(RunError::System(why.to_string()));
    }
    stop_legacy(adapters.servers);
    let wall = (now_ns() - started) as f64 * 1e-9;
    // The sampler goes first: the streams close their files and server with nothing
    // sending through them.
    drop(adapters.sampler.take());
    report_streams(&adapters.streams);
    finish(&handle, cli)?;
    take_screenshot(&handle, cli)?;
    if let Some(viewer) = viewer {
        let frames = viewer.close(Duration::from_secs(2));
        log::info!("viewer: {frames} frames drawn");
    }
    let stats = handle.stats();
    // Samples a full ring dropped (real time with a sink slower than the run).
    let samples_lost = handle.world().samples.lost();
    sim.shutdown();
    print_report(run_mode, &stats, wall, samples_lost);
    ended_short(ended)
}

/// The viewer window, when `--viewer` asks for it (a viewer that cannot start is logged and
/// the run goes on).
fn start_viewer(cli: &Cli, handle: &SimHandle) -> Option<mujoco_bridge::viewer::Viewer> {
    if !cli.viewer {
        return None;
    }
    let options = mujoco_bridge::viewer::ViewerOptions {
        close_quits: cli.viewer_close_quits,
        ..Default::default()
    };
    mujoco_bridge::viewer::start(handle.clone(), options, &STOP_REQUESTED)
        .map_err(|e| log::error!("viewer: {e}"))
        .ok()
}

/// `--screenshot`: drawn at the end, in the world as it is then.
fn take_screenshot(handle: &SimHandle, cli: &Cli) -> Result<(), RunError> {
    let last_world = handle.world();
    if let (Some(spec), Some(path)) = (screenshot_spec(&last_world.robots, cli)?, &cli.screenshot) {
        mujoco_bridge::render::screenshot::take(&last_world, &spec, path)
            .map_err(|e| RunError::System(format!("--screenshot: {e}")))?;
        log::info!("picture written to {}", path.display());
    }
    Ok(())
}

/// `--duration`, when given, is a positive number of seconds.
fn check_duration(cli: &Cli) -> Result<(), RunError> {
    match cli.duration {
        Some(d) if !(d.is_finite() && d > 0.0) => Err(InputError::new(
            "<command line>",
            format!("--duration must be a positive number of seconds, got {d}"),
        )
        .into()),
        _ => Ok(()),
    }
}

fn log_loaded(world: &mujoco_bridge::model::World, config: &Config) {
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
}

/// How many steps a batch run takes (`--steps`, or `--duration` in steps); a screenshot
/// without a batch length pictures the start.
fn last_step(cli: &Cli, timestep: f64) -> Option<u64> {
    cli.steps
        .or_else(|| {
            cli.duration
                .map(|d| (d / timestep - 1e-9).ceil().max(1.0) as u64)
        })
        .or(cli.screenshot.as_ref().map(|_| 0))
}

/// Every build follows the world with the topics' planner, so each refuses the worlds the
/// node would; the sampler publishes them to every sink.
fn follow_world(
    handle: &SimHandle,
) -> Result<mujoco_bridge::sim::Following<mujoco_bridge::topics::WorldOutputs>, RunError> {
    handle
        .follow(mujoco_bridge::topics::plan)
        .map_err(RunError::Input)
}

/// What the adapters start from.
struct AdapterStart<'a> {
    config: &'a Config,
    handle: &'a SimHandle,
    sensors: &'a mujoco_bridge::render::Sensors,
    ros_args: &'a [String],
    /// What "play" means to the node's simulation services; whether the run starts paused.
    run_mode: SimMode,
}

/// The adapters of a run, in the order they go at its end (fields drop in order): the
/// sampler first, which sends through the node's publishers and the streams' channels.
struct Adapters {
    sampler: Option<Sampler>,
    #[cfg(any(feature = "ros", feature = "dds"))]
    _ros: mujoco_bridge::ros::RosNode,
    streams: Arc<mujoco_bridge::stream::Streams>,
    servers: Vec<mujoco_bridge::zmq::LegacyServer>,
    _camera_streams: Option<mujoco_bridge::zmq::CameraStreams>,
}

/// Starts the legacy ZMQ servers (and their camera streams), the streams, the ROS node, the
/// sampler that publishes the topics to both, and the console.
fn start_adapters(
    start: &AdapterStart,
    cli: &Cli,
    stream_settings: &mujoco_bridge::stream::StreamSettings,
    outputs: mujoco_bridge::sim::Following<mujoco_bridge::topics::WorldOutputs>,
) -> Result<Adapters, RunError> {
    let AdapterStart { config, handle, .. } = *start;
    let origin = || config.origin.clone();
    let (camera_streams, servers) = start_legacy(start)?;
    let remaps = mujoco_bridge::config::Remaps::from_ros_args(start.ros_args).unwrap_or_default();
    let names = mujoco_bridge::topics::names::Names::new(&remaps);
    let (streams, stream_sink) =
        mujoco_bridge::stream::Streams::start(handle.clone(), stream_settings, names).map_err(
            |error| RunError::Streams {
                origin: origin(),
                error,
            },
        )?;
    let streams = Arc::new(streams);
    let retimes = mujoco_bridge::topics::sampler::Retimes::default();
    #[cfg(any(feature = "ros", feature = "dds"))]
    let Ros {
        node: ros,
        sink: ros_sink,
        publishing,
    } = start_ros(start, &streams, &retimes)?;
    #[cfg(not(any(feature = "ros", feature = "dds")))]
    let (ros_sink, publishing) = (None, Arc::default());
    let stream_sink: Box<dyn Sink> = Box::new(stream_sink);
    let sinks = [Some(stream_sink), ros_sink]
        .into_iter()
        .flatten()
        .collect();
    let settings = mujoco_bridge::topics::sampler::SamplerSettings {
        sinks,
        sensors: start.sensors.clone(),
        publishing: Arc::clone(&publishing),
        retimes,
        nice: config.ros.nice,
        hold_at_start: start.run_mode == SimMode::Paused,
    };
    let sampler = Sampler::start(handle.observer(), outputs, settings)
        .map_err(|e| RunError::System(format!("the topics thread: {e}")))?;
    if cli.console {
        let reach = mujoco_bridge::console::Reach {
            legacy: servers.iter().map(|s| s.counters.clone()).collect(),
            publishing: mujoco_bridge::ros::BACKEND.map(|_| publishing),
            recorder: streams.clone(),
        };
        mujoco_bridge::console::spawn(handle.clone(), reach, &STOP_REQUESTED);
    }
    Ok(Adapters {
        sampler: Some(sampler),
        #[cfg(any(feature = "ros", feature = "dds"))]
        _ros: ros,
        streams,
        servers,
        _camera_streams: camera_streams,
    })
}

/// The ROS 2 node, the sink of its publishers and its publish counts.
#[cfg(any(feature = "ros", feature = "dds"))]
struct Ros {
    node: mujoco_bridge::ros::RosNode,
    sink: Option<Box<dyn Sink>>,
    publishing: Arc<mujoco_bridge::topics::PublishCounters>,
}

#[cfg(any(feature = "ros", feature = "dds"))]
fn start_ros(
    start: &AdapterStart,
    streams: &Arc<mujoco_bridge::stream::Streams>,
    retimes: &mujoco_bridge::topics::sampler::Retimes,
) -> Result<Ros, RunError> {
    let attached = mujoco_bridge::ros::Attached {
        recorder: Some(streams.clone()),
        retimes: retimes.clone(),
    };
    let mut node = mujoco_bridge::ros::RosNode::start(
        start.handle.clone(),
        start.config,
        start.run_mode,
        start.ros_args,
        attached,
    )
    .map_err(RunError::Ros)?;
    Ok(Ros {
        sink: node.sink().map(|sink| Box::new(sink) as Box<dyn Sink>),
        publishing: node.publishing(),
        node,
    })
}

/// The legacy ZMQ servers, with their camera streams when cameras render.
fn start_legacy(
    start: &AdapterStart,
) -> Result<
    (
        Option<mujoco_bridge::zmq::CameraStreams>,
        Vec<mujoco_bridge::zmq::LegacyServer>,
    ),
    RunError,
> {
    let AdapterStart { config, handle, .. } = *start;
    let camera_streams = match (&start.sensors.renderer, config.zmq.enabled) {
        (Some(renderer), true) => Some(
            mujoco_bridge::zmq::CameraStreams::start(
                handle.clone(),
                renderer.clone(),
                &config.zmq.state,
                config.zmq.camera_port,
            )
            .map_err(|error| RunError::Cameras {
                origin: config.origin.clone(),
                error,
            })?,
        ),
        _ => None,
    };
    let cameras = camera_streams
        .as_ref()
        .map(|s| s.list.clone())
        .unwrap_or_default();
    let servers = mujoco_bridge::zmq::start_servers(config, handle, &cameras).map_err(|error| {
        RunError::Zmq {
            origin: config.origin.clone(),
            error,
        }
    })?;
    Ok((camera_streams, servers))
}

/// Stops the legacy servers, saying what each carried.
fn stop_legacy(servers: Vec<mujoco_bridge::zmq::LegacyServer>) {
    for server in servers {
        let c = &server.counters;
        log::info!(
            "legacy ZMQ on {}: {} row sets published, {} messages received, {} dropped, {} commands, \
             {} steps' rows lost",
            server.endpoints.state,
            c.row_sets.load(Ordering::Relaxed),
            c.messages_received.load(Ordering::Relaxed),
            c.messages_dropped.load(Ordering::Relaxed),
            c.commands_sent.load(Ordering::Relaxed),
            c.steps_lost.load(Ordering::Relaxed)
        );
        server.stop();
    }
}

/// Ends the streams, saying what they carried.
fn report_streams(streams: &mujoco_bridge::stream::Streams) {
    let r = streams.finish();
    log::info!(
        "streams: {} messages logged, {} failed; step records: {} written, {} dropped; \
         Foxglove clients' messages: {} taken, {} refused",
        r.logged,
        r.failed,
        r.steps_written,
        r.steps_dropped,
        r.received,
        r.refused
    );
}

/// The run's last line: what it did, in sim and wall time.
fn print_report(
    run_mode: SimMode,
    stats: &mujoco_bridge::sim::SimStats,
    wall: f64,
    samples_lost: u64,
) {
    println!(
        "run: mode {:?}, steps {}, sim time {:.6} s, wall time {:.3} s, real-time factor {:.3}, \
         mean step {:.1} us, overruns {}, rejected commands {}, instabilities {}, \
         time let go {:.3} s in {} lag resets, samples lost {}",
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
        stats.instabilities,
        stats.time_let_go,
        stats.lag_resets,
        samples_lost
    );
}

/// A batch run that stopped short of its last step is an error.
fn ended_short(ended: Ended) -> Result<(), RunError> {
    match ended {
        Ended::Short(done, last, why) => Err(RunError::System(format!(
            "the run stopped short of its last step: {why} at step {done} of {last}"
        ))),
        Ended::Diverged => Err(RunError::System(
            "the run stopped short of its last step: a step diverged and the simulation \
             paused (sim.on_divergence: reset runs on instead)"
                .into(),
        )),
        _ => Ok(()),
    }
}

/// What `--screenshot` draws: the camera it names, at its size.
fn screenshot_spec(
    robots: &[mujoco_bridge::model::RobotMap],
    cli: &Cli,
) -> Result<Option<mujoco_bridge::render::screenshot::ScreenshotSpec>, InputError> {
    if cli.screenshot.is_none() {
        return Ok(None);
    }
    let camera = match &cli.screenshot_camera {
        None => None,
        Some(name) => {
            let matches: Vec<usize> = robots
                .iter()
                .flat_map(|r| &r.cameras)
                .filter(|c| c.full_name == *name || c.name == *name)
                .map(|c| c.id)
                .collect();
            match matches.as_slice() {
                [id] => Some(*id),
                found => {
                    let known: Vec<&str> = robots
                        .iter()
                        .flat_map(|r| &r.cameras)
                        .map(|c| c.full_name.as_str())
                        .collect();
                    let why = if found.is_empty() {
                        "no camera"
                    } else {
                        "more than one camera"
                    };
                    return Err(InputError::new(
                        "<command line>",
                        format!(
                            "--screenshot-camera '{name}': {why} of that name (the model's: {})",
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    ));
                }
            }
        }
    };
    Ok(Some(mujoco_bridge::render::screenshot::ScreenshotSpec {
        camera,
        view: cli.screenshot_view,
        width: cli.screenshot_size.0,
        height: cli.screenshot_size.1,
    }))
}

fn operation_error(e: mujoco_bridge::sim::OperationError) -> InputError {
    InputError::new("<command line>", e.to_string())
}

/// Start state and recording the command line asks for, before the first step.
fn prepare(handle: &SimHandle, cli: &Cli) -> Result<(), InputError> {
    let robot = handle.lone_robot();
    if let Some(name) = &cli.keyframe {
        handle
            .reset_to_keyframe(robot, name)
            .map_err(|e| InputError::new("<command line>", e.to_string()).at("--keyframe"))?;
    }
    if let Some(path) = &cli.load_snapshot {
        handle.load_snapshot_file(path).map_err(operation_error)?;
    }
    if let Some(path) = &cli.replay {
        if path.extension().is_some_and(|e| e == "mcap") {
            let bytes = std::fs::read(path)
                .map_err(|e| InputError::new(path.display().to_string(), e.to_string()))?;
            let rows = mujoco_bridge::stream::load_replay(&bytes, &handle.world().model)
                .map_err(|e| InputError::new(path.display().to_string(), e.to_string()))?;
            handle.play(rows).map_err(operation_error)?;
        } else {
            handle.play_csv(path).map_err(operation_error)?;
        }
    }
    if let Some(path) = &cli.record {
        handle.start_recording(path).map_err(operation_error)?;
    }
    Ok(())
}

/// What the streams do in this run: the config's `foxglove` and `record`, with `--mcap`
/// (relative to the working directory) over `record.mcap` (relative to the config's folder).
fn stream_settings(
    config: &Config,
    cli: &Cli,
) -> Result<mujoco_bridge::stream::StreamSettings, InputError> {
    let foxglove = config
        .foxglove
        .socket()
        .map_err(|m| InputError::new(&config.origin, m).at("foxglove.address"))?;
    let mcap = cli
        .mcap
        .clone()
        .or_else(|| config.record.mcap.as_ref().map(|p| config.base_dir.join(p)));
    Ok(mujoco_bridge::stream::StreamSettings {
        foxglove,
        every_step: config.record.every_step,
        mcap,
    })
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

/// How a run ended.
enum Ended {
    /// Its last step, or a signal.
    Done,
    /// A batch run's step diverged and the simulation paused: it would never reach its last
    /// step.
    Diverged,
    /// A thread the run needs failed.
    Failed(&'static str),
    /// A batch run paused before its last step (steps done, last step, why).
    Short(u64, u64, &'static str),
}

/// Waits for the end of the run (its last step, or a signal), logging live figures and
/// divergences.
fn monitor(handle: &SimHandle, last_step: Option<u64>, stats_period: f64) -> Ended {
    let mut next_report = now_ns() + (stats_period * 1e9) as u64;
    let mut divergences = 0;
    let mut said_paused = false;
    let mut faults_reported = 0;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let stats = handle.stats();
        if let Some(why) = mujoco_bridge::supervise::failure() {
            return Ended::Failed(why);
        }
        if stats.instabilities != divergences {
            divergences = stats.instabilities;
            if let Some(what) = handle.last_divergence() {
                log::error!("{what} ({divergences} so far)");
            }
            let stopped = handle.world().config.sim.on_divergence != OnDivergence::Reset;
            if stopped && last_step.is_some_and(|n| stats.steps < n) {
                return Ended::Diverged;
            }
        }
        if last_step.is_some_and(|n| stats.steps >= n) {
            return Ended::Done;
        }
        // A batch run that the bridge itself paused short of its last step would wait for it
        // forever. A pause a client asked for waits for that client (it may step or resume),
        // and says so once.
        if let Some(n) = last_step
            && handle.mode() == SimMode::Paused
        {
            match handle.pause_cause() {
                PauseCause::PlaybackEnded => {
                    return Ended::Short(stats.steps, n, "the replay ran out of steps");
                }
                PauseCause::Requested if !said_paused => {
                    said_paused = true;
                    log::info!(
                        "paused by a request at step {} of {n}: the run goes on when resumed",
                        stats.steps
                    );
                }
                _ => {}
            }
        } else {
            said_paused = false;
        }
        if STOP_REQUESTED.load(Ordering::Relaxed) {
            log::info!("stopping");
            return Ended::Done;
        }
        if stats_period > 0.0 && now_ns() >= next_report {
            next_report += (stats_period * 1e9) as u64;
            let faults = stats.page_faults.saturating_sub(faults_reported);
            faults_reported = stats.page_faults;
            log::info!(
                "sim time {:.2} s, real-time factor {:.3}, step {:.1} us (max {:.1}), overruns {}, \
                 rejected commands {}, page faults in physics {faults}",
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

/// `--export-mjcf`: writes the world (or one robot), then says how MuJoCo's load of the file
/// compares with the bridge's model; a difference beyond rounding is an error.
fn export_mjcf(
    config: &Config,
    out: &std::path::Path,
    robot: Option<&str>,
) -> Result<(), RunError> {
    let exported = mujoco_bridge::model::export::export(config, out, robot)?;
    let comparison = exported.comparison.to_string();
    if !exported
        .comparison
        .same(mujoco_bridge::model::export::TOLERANCE)
    {
        return Err(RunError::ExportDiffers {
            file: exported.file.display().to_string(),
            comparison,
        });
    }
    println!(
        "exported {} ({} asset files copied); MuJoCo's load of it matches the bridge's model: {comparison}",
        exported.file.display(),
        exported.assets
    );
    Ok(())
}
