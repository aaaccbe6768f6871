//! The streams: the bridge's topics as serialized ROS 2 messages (CDR, with their `ros2msg`
//! schemas) on a Foxglove SDK context, which hands them to its sinks: the Foxglove WebSocket
//! server (a live view in the Foxglove app or Lichtblick, no ROS needed) and the MCAP writer
//! (a rosbag2-compatible log, with every physics step when asked). Every build has them, the
//! no-ROS one included. They run on threads of their own from the latest state and the
//! step ring; the physics thread only pushes rows it already pushes for the CSV recorder.
mod camera;
mod listener;
pub mod replay;
mod steps;
mod topics;

pub use replay::{ReplayError, load as load_replay};
pub use topics::planner;

use crate::ros::names::Names;
use crate::sim::SimHandle;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the per-step records go (a topic no ROS node publishes).
pub const STEPS_TOPIC: &str = "/mujoco_bridge/steps";
/// The sim time, as on ROS.
pub const CLOCK_TOPIC: &str = "/clock";
/// Bytes a chunk of the MCAP file holds at most before it is compressed and written.
const CHUNK_SIZE: u64 = 1 << 20;
/// How often the MCAP writer finishes its chunk and hands it to the system: a process killed
/// at any moment (kill -9 included) leaves every message older than this readable.
const MCAP_FLUSH_PERIOD: std::time::Duration = std::time::Duration::from_secs(1);
/// Messages queued for one Foxglove client before the oldest are dropped.
const CLIENT_BACKLOG: usize = 1024;

/// What the streams do in this run.
#[derive(Debug, Clone, Default)]
pub struct StreamSettings {
    /// Serve the Foxglove WebSocket protocol here.
    pub foxglove: Option<SocketAddr>,
    /// Record to this MCAP file.
    pub mcap: Option<PathBuf>,
    /// Record every physics step's state too.
    pub every_step: bool,
}

impl StreamSettings {
    pub fn any(&self) -> bool {
        self.foxglove.is_some() || self.mcap.is_some()
    }
}

/// Why the streams could not start.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("foxglove server on {0}: {1}")]
    Server(SocketAddr, String),
    #[error("{0}: {1}")]
    Mcap(PathBuf, String),
    #[error("channel {0}: {1}")]
    Channel(String, String),
    #[error("the step records' tap: {0}")]
    Tap(String),
    #[error("a streams thread: {0}")]
    Thread(std::io::Error),
}

/// Messages the streams logged, and those that failed, for `/diagnostics` and the run
/// report.
#[derive(Debug, Default)]
pub struct StreamCounters {
    pub logged: AtomicU64,
    pub failed: AtomicU64,
    /// Messages Foxglove clients published that reached the simulation, and those refused.
    pub received: AtomicU64,
    pub refused: AtomicU64,
}

impl StreamCounters {
    pub fn count(&self, ok: bool) {
        let counter = if ok { &self.logged } else { &self.failed };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A sim time as the log time of a message.
pub fn log_time(sim_time: f64) -> foxglove::PartialMetadata {
    foxglove::PartialMetadata {
        log_time: Some((sim_time.max(0.0) * 1e9).round() as u64),
    }
}

pub(crate) type McapHandle = foxglove::McapWriterHandle<std::io::BufWriter<std::fs::File>>;

/// The running streams; `finish` closes them in order.
pub struct Streams {
    server: Option<Arc<foxglove::WebSocketServerHandle>>,
    /// The server's runtime: one worker thread ("foxglove"), stopped after the server.
    runtime: Option<tokio::runtime::Runtime>,
    mcap: Option<(PathBuf, Arc<McapHandle>)>,
    topics: Option<topics::TopicThread>,
    steps: Option<steps::StepRecorder>,
    pub counters: Arc<StreamCounters>,
}

/// What the streams did, for the run report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamReport {
    pub logged: u64,
    pub failed: u64,
    pub steps_written: u64,
    pub steps_dropped: u64,
    pub received: u64,
    pub refused: u64,
}

impl Streams {
    /// Starts what `settings` asks for on the simulation `handle` runs. The simulation must
    /// have been started with `planner()` among its planners.
    pub fn start(
        handle: SimHandle,
        settings: &StreamSettings,
        names: Names,
        renderer: Option<Arc<crate::render::Renderer>>,
    ) -> Result<Self, StreamError> {
        let context = foxglove::Context::new();
        let counters = Arc::new(StreamCounters::default());
        let mcap = match &settings.mcap {
            Some(path) => Some((path.clone(), Arc::new(open_mcap(&context, path)?))),
            None => None,
        };
        let joined = topics::Joined::default();
        let runtime = match settings.foxglove {
            Some(_) => Some(
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("foxglove")
                    .enable_all()
                    .build()
                    .map_err(StreamError::Thread)?,
            ),
            None => None,
        };
        let server = match (settings.foxglove, &runtime) {
            (Some(address), Some(runtime)) => Some(Arc::new(
                context
                    .websocket_server()
                    .tokio_runtime(runtime.handle())
                    .name("mujoco_bridge")
                    .bind(address.ip().to_string(), address.port())
                    .capabilities([
                        foxglove::websocket::Capability::Time,
                        foxglove::websocket::Capability::ClientPublish,
                    ])
                    .supported_encodings(["cdr"])
                    .message_backlog_size(CLIENT_BACKLOG)
                    .listener(Arc::new(listener::Listener::new(
                        handle.clone(),
                        names.clone(),
                        joined.clone(),
                        counters.clone(),
                    )))
                    .start_blocking()
                    .map_err(|e| StreamError::Server(address, e.to_string()))?,
            )),
            _ => None,
        };
        if let Some(server) = &server {
            log::info!(
                "Foxglove WebSocket server on ws://{}:{}",
                settings
                    .foxglove
                    .map_or(String::new(), |a| a.ip().to_string()),
                server.port()
            );
        }
        let steps = if settings.every_step && mcap.is_some() {
            Some(steps::StepRecorder::start(handle.clone(), &context)?)
        } else {
            None
        };
        let topics = topics::TopicThread::start(
            handle,
            context,
            names,
            topics::Sinks {
                server: server.clone(),
                mcap: mcap.as_ref().map(|(_, writer)| writer.clone()),
                joined,
                renderer,
            },
            counters.clone(),
        )?;
        if let Some((path, _)) = &mcap {
            log::info!(
                "recording to {}{}",
                path.display(),
                if steps.is_some() {
                    " (every physics step too)"
                } else {
                    ""
                }
            );
        }
        Ok(Self {
            server,
            runtime,
            mcap,
            topics: Some(topics),
            steps,
            counters,
        })
    }

    /// The port the Foxglove server listens on (the one asked for, or the system's pick for
    /// port 0).
    pub fn port(&self) -> Option<u16> {
        self.server.as_ref().map(|s| s.port())
    }

    /// Logs what is left (every step pushed so far), closes the MCAP file and the server.
    pub fn finish(mut self) -> StreamReport {
        if let Some(topics) = self.topics.take() {
            topics.stop();
        }
        let mut report = StreamReport::default();
        if let Some(steps) = self.steps.take() {
            let counts = steps.counts.clone();
            steps.finish();
            report.steps_written = counts.written.load(Ordering::Relaxed);
            report.steps_dropped = counts.dropped.load(Ordering::Relaxed);
            report.failed += counts.failed.load(Ordering::Relaxed);
        }
        if let Some((path, writer)) = self.mcap.take() {
            let closed = match Arc::try_unwrap(writer) {
                Ok(writer) => writer.close().map(drop).map_err(|e| e.to_string()),
                Err(_) => Err("still in use at shutdown: its summary is not written".into()),
            };
            if let Err(e) = closed {
                log::error!("{}: {e}", path.display());
            }
        }
        if let Some(server) = self.server.take() {
            match Arc::try_unwrap(server) {
                // A client that reads nothing would hold a wait forever: the runtime's shutdown
                // below ends what is left after a second.
                Ok(server) => server.stop().detach_all(),
                Err(_) => log::warn!("the Foxglove server is still in use at shutdown"),
            }
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(std::time::Duration::from_secs(1));
        }
        let c = &self.counters;
        report.logged = c.logged.load(Ordering::Relaxed);
        report.failed += c.failed.load(Ordering::Relaxed);
        report.received = c.received.load(Ordering::Relaxed);
        report.refused = c.refused.load(Ordering::Relaxed);
        report
    }
}

/// The MCAP writer of `context` on a new file at `path`: profile `ros2` as rosbag2 writes
/// it, chunked and zstd-compressed.
fn open_mcap(context: &Arc<foxglove::Context>, path: &Path) -> Result<McapHandle, StreamError> {
    let options = foxglove::McapWriteOptions::new()
        .profile("ros2")
        .compression(Some(foxglove::McapCompression::Zstd))
        .chunk_size(Some(CHUNK_SIZE));
    context
        .mcap_writer_with_options(options)
        .create_new_buffered_file(path)
        .map_err(|e| StreamError::Mcap(path.to_path_buf(), e.to_string()))
}
