//! The bridge's topics on the streams: the outputs the ROS node publishes, planned with each
//! world (`topics::encoded_outputs`), filled from the latest state on this thread and
//! logged as CDR on one channel per topic. A message is made only while a sink (a Foxglove
//! client that subscribes, the MCAP writer) takes its channel.
use super::camera::{CameraChannels, CameraStream};
use super::lidar::LidarStream;
use super::{CLOCK_TOPIC, StreamCounters, log_time};
use crate::messages::rosgraph_msgs::msg::Clock;
use crate::messages::sensor_msgs::msg::{CameraInfo, Image, LaserScan, PointCloud2};
use crate::messages::{Message, definition};
use crate::sim::{Following, SimHandle, StateSnapshot, WorldGeneration};
use crate::topics::encoded::Encoded;
use crate::topics::every::Every;
use crate::topics::names::Names;
use crate::topics::{PublishCounters, Schedule, Tick, TopicOutput};
use foxglove::{Context, RawChannel};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest sleep, so that a stop, a world change or a new subscriber is seen soon.
const LONGEST_WAIT: Duration = Duration::from_millis(20);

/// The outputs of one world for the streams (see `SimHandle::follow`).
pub struct StreamOutputs(pub Vec<TopicOutput>);

/// The streams' planner, with which the simulation follows each world when streams are on.
pub fn plan(
    world: &crate::model::World,
    context: &crate::sim::PlanContext,
) -> crate::error::InputResult<StreamOutputs> {
    let outputs = crate::topics::topic_outputs(world, context.exported_contacts > 0)
        .map_err(|e| crate::error::InputError::new(&world.config.origin, e))?;
    Ok(StreamOutputs(outputs))
}

/// Channels a new subscriber joined, whose latched message goes to it again.
pub type Joined = Arc<Mutex<Vec<(foxglove::ChannelId, foxglove::SinkId)>>>;

/// One output with its channel and schedule.
struct Streaming {
    output: Box<dyn Encoded>,
    channel: Arc<RawChannel>,
    every: Every,
    /// A latched (`Once`) output's message, kept for subscribers that join later.
    latched: Option<Vec<u8>>,
}

/// Where the thread's messages go, besides the channels' own sinks.
pub struct Sinks {
    /// The Foxglove server, told the sim time.
    pub server: Option<Arc<foxglove::WebSocketServerHandle>>,
    /// The MCAP writer of the recording in progress, flushed every `MCAP_FLUSH_PERIOD`.
    pub mcap: super::WriterSlot,
    /// Subscriptions to answer with a latched message.
    pub joined: Joined,
    /// The render and ray-casting threads the cameras and lidars ask (an absent one: none
    /// of that kind on the streams).
    pub sensors: crate::render::Sensors,
}

/// The thread; `stop` ends it.
pub struct TopicThread {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl TopicThread {
    pub fn start(
        handle: SimHandle,
        following: Following<StreamOutputs>,
        context: Arc<Context>,
        names: Names,
        sinks: Sinks,
        counters: Arc<StreamCounters>,
    ) -> Result<Self, super::StreamError> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let clock = context
            .channel_builder(names.resolve(CLOCK_TOPIC))
            .message_encoding("cdr")
            .schema(schema::<Clock>())
            .build_raw()
            .map_err(|e| super::StreamError::Channel(CLOCK_TOPIC.into(), e.to_string()))?;
        let thread = std::thread::Builder::new()
            .name("streams".into())
            .spawn(move || {
                let mut run = Run {
                    handle,
                    context,
                    names,
                    sinks,
                    counters,
                    clock,
                    outputs: Vec::new(),
                    cameras: Vec::new(),
                    lidars: Vec::new(),
                    frames: None,
                    scans: None,
                    world: None,
                    following,
                };
                run.run(&stopping);
            })
            .map_err(super::StreamError::Thread)?;
        Ok(Self { stop, thread })
    }

    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        if self.thread.join().is_err() {
            log::error!("the streams thread panicked");
        }
    }
}

/// A channel's schema: the ROS type name, encoded as `ros2msg`.
pub fn schema<M: Message>() -> foxglove::Schema {
    foxglove::Schema::new(
        M::ros_type(),
        "ros2msg",
        definition::ros2msg::<M>().into_bytes(),
    )
}

/// /clock on the streams: its schedule, following `ros.rates.clock`, and its message.
struct ClockStream {
    every: Every,
    hz: f64,
    message: Clock,
}

impl Default for ClockStream {
    fn default() -> Self {
        Self {
            every: Every::hz(0.0, Instant::now()),
            hz: -1.0,
            message: Clock::default(),
        }
    }
}

impl ClockStream {
    /// Takes a new rate from now (a world change or a live parameter may set one).
    fn follow_rate(&mut self, hz: f64) {
        if hz != self.hz {
            self.every = Every::hz(hz, Instant::now());
            self.hz = hz;
        }
    }
}

struct Run {
    handle: SimHandle,
    context: Arc<Context>,
    names: Names,
    sinks: Sinks,
    counters: Arc<StreamCounters>,
    clock: Arc<RawChannel>,
    outputs: Vec<Streaming>,
    cameras: Vec<CameraStream>,
    lidars: Vec<LidarStream>,
    /// The world's cameras at the renderer, while it has any on the streams.
    frames: Option<Arc<crate::render::Cameras>>,
    /// Its lidars at the caster, likewise.
    scans: Option<Arc<crate::render::LidarSources>>,
    world: Option<Arc<WorldGeneration>>,
    /// The worlds as they take effect, with the streams' plan of each.
    following: Following<StreamOutputs>,
}

impl Run {
    fn run(&mut self, stop: &AtomicBool) {
        let mut state = self.handle.latest_state_buffer();
        let publishing = Arc::new(PublishCounters::default());
        let mut clock = ClockStream::default();
        let mut bytes = Vec::new();
        let mut flushed = Instant::now();
        while !stop.load(Ordering::Acquire) {
            if flushed.elapsed() >= super::MCAP_FLUSH_PERIOD {
                self.flush_mcap();
                flushed = Instant::now();
            }
            if let Some((world, planned)) = self.following.changed() {
                state = StateSnapshot::with_layout(&world.layout());
                self.follow_world(world, planned);
            }
            let Some(world) = self.world.clone() else {
                std::thread::sleep(LONGEST_WAIT);
                continue;
            };
            // Nobody takes anything (no client, no recording): nothing to make. Odometry
            // then integrates from when someone does.
            if !self.watched() {
                std::thread::sleep(LONGEST_WAIT);
                continue;
            }
            clock.follow_rate(world.config.ros.rates.get("clock").unwrap_or(0.0));
            let wait = self.wait(&clock);
            if !wait.is_zero() {
                std::thread::sleep(wait);
            }
            self.resend_latched();
            let now = Instant::now();
            if !world.latest_state(&mut state) {
                continue;
            }
            if clock.every.due(now) {
                self.send_clock(&mut clock.message, &state, &mut bytes);
            }
            let stamp = crate::topics::convert::time(state.time);
            let stats = self.handle.stats();
            let tick = Tick {
                state: &state,
                stamp: &stamp,
                now,
                stats: &stats,
                publishing: &publishing,
                cameras: None,
                lidars: None,
                offload: None,
            };
            self.send_outputs(&tick, &mut bytes);
            self.send_sensors(now, &mut bytes);
        }
    }

    /// Writes what the MCAP recording holds so far to its file.
    fn flush_mcap(&self) {
        let writer = match self.sinks.mcap.lock() {
            Ok(writer) => writer,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(writer) = writer.as_ref()
            && let Err(e) = writer.flush()
        {
            log::error!("MCAP: {e}");
        }
    }

    /// How long until the next output (the clock's among them) is due, at most LONGEST_WAIT.
    fn wait(&self, clock: &ClockStream) -> Duration {
        let next = self
            .outputs
            .iter()
            .filter_map(|o| o.every.deadline())
            .chain(self.cameras.iter().filter_map(|c| c.deadline()))
            .chain(self.lidars.iter().filter_map(|l| l.deadline()))
            .chain(clock.every.deadline())
            .min();
        next.map_or(LONGEST_WAIT, |d| {
            d.saturating_duration_since(Instant::now())
        })
        .min(LONGEST_WAIT)
    }

    /// The sim time to the Foxglove server, and /clock to its channel's sinks.
    fn send_clock(&self, message: &mut Clock, state: &StateSnapshot, bytes: &mut Vec<u8>) {
        if let Some(server) = &self.sinks.server {
            server.broadcast_time(log_time(state.time).log_time.unwrap_or(0));
        }
        if self.clock.has_sinks() {
            message.clock = crate::topics::convert::time(state.time);
            super::send(
                &self.clock,
                message,
                log_time(state.time),
                &self.counters,
                bytes,
            );
        }
    }

    /// Each output filled from the state that is due and taken, logged on its channel.
    fn send_outputs(&mut self, tick: &Tick, bytes: &mut Vec<u8>) {
        for streaming in &mut self.outputs {
            streaming.output.observe(tick);
            let due = match streaming.output.topic().schedule {
                Schedule::Once => streaming.latched.is_none(),
                Schedule::Rate { .. } => streaming.every.due(tick.now),
            };
            if !due || !streaming.channel.has_sinks() {
                continue;
            }
            match streaming.output.fill(tick, bytes) {
                Ok(true) => {
                    streaming
                        .channel
                        .log_with_meta(bytes, log_time(tick.state.time));
                    self.counters.count(true);
                    if streaming.output.topic().schedule == Schedule::Once {
                        streaming.latched = Some(bytes.clone());
                    }
                }
                Ok(false) => {}
                Err(e) => {
                    self.counters.count(false);
                    log::warn!("stream {}: {e}", streaming.channel.topic());
                }
            }
        }
    }

    /// The cameras' and lidars' messages that are due and ready.
    fn send_sensors(&mut self, now: Instant, bytes: &mut Vec<u8>) {
        if let Some(frames) = &self.frames {
            for camera in &mut self.cameras {
                camera.run(frames, now, &self.counters, bytes);
            }
        }
        if let Some(scans) = &self.scans {
            for lidar in &mut self.lidars {
                lidar.run(scans, now, &self.counters, bytes);
            }
        }
    }

    /// Whether any channel has a sink.
    fn watched(&self) -> bool {
        self.clock.has_sinks()
            || self.sinks.server.is_some()
            || self.outputs.iter().any(|o| o.channel.has_sinks())
            || self
                .cameras
                .iter()
                .any(|c| c.channels().any(|ch| ch.has_sinks()))
            || self.lidars.iter().any(|l| l.channel().has_sinks())
    }

    /// A Foxglove client that subscribes to a latched topic (tf_static, robot_description)
    /// gets its message, as a late ROS subscriber of a transient-local topic would.
    fn resend_latched(&self) {
        let joined: Vec<_> = match self.sinks.joined.lock() {
            Ok(mut joined) => joined.drain(..).collect(),
            Err(poisoned) => poisoned.into_inner().drain(..).collect(),
        };
        for (channel, sink) in joined {
            for streaming in &self.outputs {
                if streaming.channel.id() == channel
                    && let Some(bytes) = &streaming.latched
                {
                    streaming.channel.log_with_meta_to_sink(
                        bytes,
                        foxglove::PartialMetadata::default(),
                        Some(sink),
                    );
                }
            }
        }
    }

    /// Takes the outputs planned with the newest world; a topic of the same name and type
    /// keeps its channel (its subscribers stay), the others' channels close.
    fn follow_world(&mut self, world: Arc<WorldGeneration>, planned: StreamOutputs) {
        let mut pool = ChannelPool {
            context: &self.context,
            names: &self.names,
            kept: self
                .outputs
                .drain(..)
                .map(|s| s.channel)
                .chain(
                    self.cameras
                        .drain(..)
                        .flat_map(|c| c.channels().cloned().collect::<Vec<_>>()),
                )
                .chain(self.lidars.drain(..).map(|l| l.channel().clone()))
                .map(|c| (c.topic().to_string(), c))
                .collect(),
        };
        let now = Instant::now();
        for output in planned.0 {
            match output {
                TopicOutput::State(output) => {
                    let Some(channel) =
                        pool.channel(&output.topic().name, output.type_name().ros(), || {
                            output.schema()
                        })
                    else {
                        continue;
                    };
                    let every = match output.topic().schedule {
                        Schedule::Rate { hz, .. } => Every::hz(hz, now),
                        Schedule::Once => Every::hz(0.0, now),
                    };
                    self.outputs.push(Streaming {
                        output,
                        channel,
                        every,
                        latched: None,
                    });
                }
                TopicOutput::Camera(camera) => {
                    let image = pool.typed::<Image>(&camera.image.name);
                    let info = pool.typed::<CameraInfo>(&camera.info.name);
                    let depth = camera
                        .depth
                        .as_ref()
                        .and_then(|d| pool.typed::<Image>(&d.name));
                    if let (Some(image), Some(info)) = (image, info) {
                        let channels = CameraChannels { image, depth, info };
                        self.cameras.push(CameraStream::new(*camera, channels));
                    }
                }
                TopicOutput::Lidar(lidar) => {
                    let channel = if LidarStream::planar(&lidar) {
                        pool.typed::<LaserScan>(&lidar.topic.name)
                    } else {
                        pool.typed::<PointCloud2>(&lidar.topic.name)
                    };
                    if let Some(channel) = channel {
                        self.lidars.push(LidarStream::new(*lidar, channel));
                    }
                }
            }
        }
        for (_, channel) in pool.kept {
            channel.close();
        }
        let sensors = &self.sinks.sensors;
        self.frames = None;
        self.scans = None;
        if !self.cameras.is_empty() {
            self.frames = sensors.renderer.as_ref().map(|r| r.sources(&world));
        }
        if !self.lidars.is_empty() {
            self.scans = sensors.lidars.as_ref().map(|l| l.sources(&world));
        }
        log::debug!(
            "world {}: {} topics, {} cameras and {} lidars on the streams",
            world.number,
            self.outputs.len(),
            self.cameras.len(),
            self.lidars.len()
        );
        self.world = Some(world);
    }
}

/// The channels of the last world, for the next to take by topic and type.
struct ChannelPool<'a> {
    context: &'a Arc<Context>,
    names: &'a Names,
    kept: HashMap<String, Arc<RawChannel>>,
}

impl ChannelPool<'_> {
    /// The channel of `topic` with messages of `ros_type`: the last world's, or a new one.
    fn channel(
        &mut self,
        topic: &str,
        ros_type: String,
        schema: impl FnOnce() -> String,
    ) -> Option<Arc<RawChannel>> {
        let topic = self.names.resolve(topic);
        match self.kept.remove(&topic) {
            Some(channel) if channel.schema().is_some_and(|s| s.name == ros_type) => {
                return Some(channel);
            }
            Some(other) => other.close(),
            None => {}
        }
        let built = self
            .context
            .channel_builder(&topic)
            .message_encoding("cdr")
            .schema(foxglove::Schema::new(
                ros_type,
                "ros2msg",
                schema().into_bytes(),
            ))
            .build_raw();
        built.map_err(|e| log::error!("stream {topic}: {e}")).ok()
    }

    fn typed<M: Message>(&mut self, topic: &str) -> Option<Arc<RawChannel>> {
        self.channel(topic, M::ros_type(), definition::ros2msg::<M>)
    }
}
