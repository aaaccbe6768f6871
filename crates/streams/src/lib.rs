//! The streams: the bridge's topics as serialized ROS 2 messages (CDR, with their `ros2msg`
//! schemas) on a Foxglove SDK context, which hands them to its sinks: the Foxglove WebSocket
//! server (a live view in the Foxglove app or Lichtblick, no ROS needed) and the MCAP writer
//! (a rosbag2-compatible log, with every physics step when asked). Every build has them, the
//! no-ROS one included. The topics come from the sampler (`sink.rs` is the streams' sink of
//! it); every step's state comes from the step ring, on a thread of its own, which the
//! physics thread only pushes rows it already pushes for the CSV recorder.
// The layers below under the names this crate's files use.
use mujoco_bridge_core::{config, record, sim};
use mujoco_bridge_messages as messages;
use mujoco_bridge_topics as topics;
mod listener;
pub mod replay;
mod services;
mod sink;
mod steps;

pub use replay::{ReplayError, load as load_replay};
pub use sink::StreamSink;

use crate::record::{RecordingReport, RecordingSwitch, SwitchError};
use crate::sim::SimHandle;
use crate::topics::names::Names;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Where the per-step records go (a topic no ROS node publishes).
pub const STEPS_TOPIC: &str = "/mujoco_bridge/steps";
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
    #[error("already recording to {}", .0.display())]
    Recording(PathBuf),
    #[error("no recording is running")]
    NotRecording,
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
    /// Step records of the recordings that ended.
    pub steps_written: AtomicU64,
    pub steps_dropped: AtomicU64,
}

impl StreamCounters {
    pub fn count(&self, ok: bool) {
        let counter = if ok { &self.logged } else { &self.failed };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A channel's schema: the ROS type name, encoded as `ros2msg`.
fn schema<M: crate::messages::Message>() -> foxglove::Schema {
    foxglove::Schema::new(
        M::ros_type(),
        "ros2msg",
        crate::messages::definition::ros2msg::<M>().into_bytes(),
    )
}

/// A sim time as the log time of a message.
pub fn log_time(sim_time: f64) -> foxglove::PartialMetadata {
    foxglove::PartialMetadata {
        log_time: Some((sim_time.max(0.0) * 1e9).round() as u64),
    }
}

pub(crate) type McapHandle = foxglove::McapWriterHandle<std::io::BufWriter<std::fs::File>>;

/// The MCAP writer of the recording in progress, shared with the topics thread, which
/// flushes it; its one owner (a recording's stop takes it out and closes it).
pub(crate) type WriterSlot = Arc<Mutex<Option<Arc<McapHandle>>>>;

/// A recording in progress: its file and, with every step, the step recorder.
struct Recorder {
    path: PathBuf,
    steps: Option<steps::StepRecorder>,
}

/// The running streams. Every run has them (a recording may start at any time from the
/// console or the ROS service); with neither a Foxglove server nor a recording, their thread
/// only follows the world. `finish` closes them in order.
pub struct Streams {
    handle: SimHandle,
    context: Arc<foxglove::Context>,
    server: Mutex<Option<Arc<foxglove::WebSocketServerHandle>>>,
    /// The server's runtime: one worker thread ("foxglove"), stopped after the server.
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    writer: WriterSlot,
    recorder: Mutex<Option<Recorder>>,
    /// Whether a recording started without saying keeps every step (`record.every_step`).
    every_step: bool,
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

impl RecordingSwitch for Streams {
    fn start(&self, path: &Path, every_step: bool) -> Result<(), SwitchError> {
        Ok(self.start_recording(path, every_step)?)
    }

    fn stop(&self) -> Result<RecordingReport, SwitchError> {
        Ok(self.stop_recording()?)
    }

    fn every_step(&self) -> bool {
        self.every_step
    }
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Streams {
    /// Starts what `settings` asks for on the simulation `handle` runs; the topics come
    /// through the sink, which the sampler takes (and lets go of before `finish`).
    pub fn start(
        handle: SimHandle,
        settings: &StreamSettings,
        names: Names,
    ) -> Result<(Self, StreamSink), StreamError> {
        let context = foxglove::Context::new();
        let counters = Arc::new(StreamCounters::default());
        let joined = sink::Joined::default();
        let (runtime, server) = match settings.foxglove {
            Some(address) => {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("foxglove")
                    .enable_all()
                    .build()
                    .map_err(StreamError::Thread)?;
                let listener = listener::Listener::new(
                    handle.clone(),
                    names.clone(),
                    joined.clone(),
                    counters.clone(),
                );
                let server = serve(&context, address, &runtime, &handle, &names, listener)?;
                (Some(runtime), Some(Arc::new(server)))
            }
            None => (None, None),
        };
        let writer = WriterSlot::default();
        let sink = StreamSink {
            context: context.clone(),
            names,
            server: server.clone(),
            mcap: writer.clone(),
            joined,
            counters: counters.clone(),
            channels: Arc::new([]),
            flushed: std::time::Instant::now(),
            recording: None,
        };
        let streams = Self {
            handle,
            context,
            server: Mutex::new(server),
            runtime: Mutex::new(runtime),
            writer,
            recorder: Mutex::new(None),
            every_step: settings.every_step,
            counters,
        };
        if let Some(path) = &settings.mcap {
            streams.start_recording(path, settings.every_step)?;
        }
        Ok((streams, sink))
    }

    /// Starts recording every topic (and, with `every_step`, every step) to a new MCAP file.
    pub fn start_recording(&self, path: &Path, every_step: bool) -> Result<(), StreamError> {
        let mut recorder = locked(&self.recorder);
        if let Some(running) = recorder.as_ref() {
            return Err(StreamError::Recording(running.path.clone()));
        }
        let writer = Arc::new(open_mcap(&self.context, path)?);
        let steps = if every_step {
            match steps::StepRecorder::start(self.handle.clone(), &self.context) {
                Ok(steps) => Some(steps),
                Err(e) => {
                    close(path, writer);
                    return Err(e);
                }
            }
        } else {
            None
        };
        *locked(&self.writer) = Some(writer);
        log::info!(
            "recording to {}{}",
            path.display(),
            if every_step {
                " (every physics step too)"
            } else {
                ""
            }
        );
        *recorder = Some(Recorder {
            path: path.to_path_buf(),
            steps,
        });
        Ok(())
    }

    /// Writes what is left of the recording in progress (every step pushed so far) and
    /// closes its file.
    pub fn stop_recording(&self) -> Result<RecordingReport, StreamError> {
        let recorder = locked(&self.recorder)
            .take()
            .ok_or(StreamError::NotRecording)?;
        let mut report = RecordingReport {
            path: recorder.path.clone(),
            steps_written: 0,
            steps_dropped: 0,
        };
        if let Some(steps) = recorder.steps {
            let counts = steps.counts.clone();
            steps.finish();
            report.steps_written = counts.written.load(Ordering::Relaxed);
            report.steps_dropped = counts.dropped.load(Ordering::Relaxed);
            let c = &self.counters;
            c.steps_written
                .fetch_add(report.steps_written, Ordering::Relaxed);
            c.steps_dropped
                .fetch_add(report.steps_dropped, Ordering::Relaxed);
            c.failed
                .fetch_add(counts.failed.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        if let Some(writer) = locked(&self.writer).take() {
            close(&recorder.path, writer);
        }
        log::info!(
            "recorded {}: step records {} written, {} dropped",
            report.path.display(),
            report.steps_written,
            report.steps_dropped
        );
        Ok(report)
    }

    /// Ends the recording in progress and the server (the sampler that sent through the
    /// sink has stopped).
    pub fn finish(&self) -> StreamReport {
        if locked(&self.recorder).is_some()
            && let Err(e) = self.stop_recording()
        {
            log::error!("{e}");
        }
        if let Some(server) = locked(&self.server).take() {
            match Arc::try_unwrap(server) {
                // A client that reads nothing would hold a wait forever: the runtime's shutdown
                // below ends what is left after a second.
                Ok(server) => server.stop().detach_all(),
                Err(_) => log::warn!("the Foxglove server is still in use at shutdown"),
            }
        }
        if let Some(runtime) = locked(&self.runtime).take() {
            runtime.shutdown_timeout(std::time::Duration::from_secs(1));
        }
        let c = &self.counters;
        StreamReport {
            logged: c.logged.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
            steps_written: c.steps_written.load(Ordering::Relaxed),
            steps_dropped: c.steps_dropped.load(Ordering::Relaxed),
            received: c.received.load(Ordering::Relaxed),
            refused: c.refused.load(Ordering::Relaxed),
        }
    }
}

/// The Foxglove WebSocket server on `address`, on `runtime`, with the simulation's services
/// and `listener` for what clients do.
fn serve(
    context: &Arc<foxglove::Context>,
    address: SocketAddr,
    runtime: &tokio::runtime::Runtime,
    handle: &SimHandle,
    names: &Names,
    listener: listener::Listener,
) -> Result<foxglove::WebSocketServerHandle, StreamError> {
    let server = context
        .websocket_server()
        .tokio_runtime(runtime.handle())
        .name("mujoco_bridge")
        .bind(address.ip().to_string(), address.port())
        .capabilities([
            foxglove::websocket::Capability::Time,
            foxglove::websocket::Capability::ClientPublish,
            foxglove::websocket::Capability::Services,
        ])
        .services(services::all(handle, names))
        .supported_encodings(["cdr"])
        .message_backlog_size(CLIENT_BACKLOG)
        .listener(Arc::new(listener))
        .start_blocking()
        .map_err(|e| StreamError::Server(address, e.to_string()))?;
    log::info!(
        "Foxglove WebSocket server on ws://{}:{}",
        address.ip(),
        server.port()
    );
    Ok(server)
}

/// Closes an MCAP file (its summary and footer are written).
fn close(path: &Path, writer: Arc<McapHandle>) {
    let closed = match Arc::try_unwrap(writer) {
        Ok(writer) => writer.close().map(drop).map_err(|e| e.to_string()),
        Err(_) => Err("still in use: its summary is not written".into()),
    };
    if let Err(e) = closed {
        log::error!("{}: {e}", path.display());
    }
}

/// The MCAP writer of `context` on a new file at `path`: profile `ros2` as rosbag2 writes
/// it, chunked and zstd-compressed.
fn open_mcap(context: &Arc<foxglove::Context>, path: &Path) -> Result<McapHandle, StreamError> {
    // Compressed on the logging thread, at zstd's fastest level: the writer's default worker
    // threads, one per core, compete with the physics thread for the machine's cores.
    let options = foxglove::McapWriteOptions::new()
        .profile("ros2")
        .compression(Some(foxglove::McapCompression::Zstd))
        .compression_level(1)
        .compression_threads(0)
        .chunk_size(Some(CHUNK_SIZE));
    context
        .mcap_writer_with_options(options)
        .create_new_buffered_file(path)
        .map_err(|e| StreamError::Mcap(path.to_path_buf(), e.to_string()))
}
