//! The streams as a sink of the sampler (`topics::sampler`): one channel per topic on the
//! Foxglove SDK's context, which hands each message to its sinks (a Foxglove client that
//! subscribes, the MCAP writer). A topic of the last world keeps its channel (its
//! subscribers stay); the sim time goes to the Foxglove server with each /clock.
use super::{StreamCounters, WriterSlot, log_time};
use crate::topics::CLOCK_TOPIC;
use crate::topics::names::Names;
use crate::topics::sampler::{Latched, Route, Sink, TopicSpec};
use foxglove::{Context, RawChannel, WebSocketServerHandle};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Channels a new subscriber joined, whose latched message goes to it again.
pub type Joined = Arc<Mutex<Vec<(foxglove::ChannelId, foxglove::SinkId)>>>;

pub struct StreamSink {
    pub(super) context: Arc<Context>,
    pub(super) names: Names,
    /// The Foxglove server, told the sim time.
    pub(super) server: Option<Arc<WebSocketServerHandle>>,
    /// The MCAP writer of the recording in progress, flushed every `MCAP_FLUSH_PERIOD`.
    pub(super) mcap: WriterSlot,
    /// Subscriptions to answer with a latched message.
    pub(super) joined: Joined,
    pub(super) counters: Arc<StreamCounters>,
    /// The channels of the world in effect, by topic index.
    pub(super) channels: Arc<[Option<Arc<RawChannel>>]>,
    pub(super) flushed: Instant,
    /// The recording the latched messages last went to (its writer's address).
    pub(super) recording: Option<usize>,
}

/// The channels of one world.
struct StreamRoute {
    channels: Arc<[Option<Arc<RawChannel>>]>,
    /// The /clock topic's index: its messages tell the server the sim time.
    clock: Option<usize>,
    server: Option<Arc<WebSocketServerHandle>>,
    counters: Arc<StreamCounters>,
    /// The recording in progress, if any: a recording holds samples, never the held state.
    mcap: WriterSlot,
}

impl Route for StreamRoute {
    fn takes_held(&self) -> bool {
        // Busy (a recording starting or stopping): as if recording.
        self.mcap.try_lock().is_ok_and(|writer| writer.is_none())
    }

    fn wants(&self, topic: usize) -> bool {
        (Some(topic) == self.clock && self.server.is_some())
            || self.channels[topic].as_ref().is_some_and(|c| c.has_sinks())
    }

    fn send(&self, topic: usize, bytes: &[u8], time: f64) -> bool {
        let meta = log_time(time);
        if Some(topic) == self.clock
            && let Some(server) = &self.server
        {
            server.broadcast_time(meta.log_time.unwrap_or(0));
        }
        if let Some(channel) = self.channels[topic].as_ref().filter(|c| c.has_sinks()) {
            channel.log_with_meta(bytes, meta);
            self.counters.count(true);
        }
        true
    }
}

impl Sink for StreamSink {
    fn open(&mut self, world: u64, topics: &Arc<[TopicSpec]>) -> Arc<dyn Route> {
        let mut kept: HashMap<String, Arc<RawChannel>> = self
            .channels
            .iter()
            .flatten()
            .map(|c| (c.topic().to_string(), c.clone()))
            .collect();
        self.channels = topics
            .iter()
            .map(|topic| self.channel(&mut kept, topic))
            .collect();
        for channel in kept.into_values() {
            channel.close();
        }
        log::debug!("world {world}: {} topics on the streams", topics.len());
        Arc::new(StreamRoute {
            channels: self.channels.clone(),
            clock: topics.iter().position(|t| t.name == CLOCK_TOPIC),
            server: self.server.clone(),
            counters: self.counters.clone(),
            mcap: self.mcap.clone(),
        })
    }

    fn active(&self) -> bool {
        self.server.is_some() || self.channels.iter().flatten().any(|c| c.has_sinks())
    }

    fn records(&self) -> bool {
        self.recording.is_some()
    }

    fn tend(&mut self, latched: Latched) {
        if self.flushed.elapsed() >= super::MCAP_FLUSH_PERIOD {
            self.flush_mcap();
            self.flushed = Instant::now();
        }
        self.resend_latched(latched);
        self.latch_into_new_recording(latched);
    }
}

impl StreamSink {
    /// The channel of `topic`: the last world's of the same name and type, or a new one.
    fn channel(
        &self,
        kept: &mut HashMap<String, Arc<RawChannel>>,
        topic: &TopicSpec,
    ) -> Option<Arc<RawChannel>> {
        let name = self.names.resolve(&topic.name);
        let ros_type = topic.type_name.ros();
        match kept.remove(&name) {
            Some(channel) if channel.schema().is_some_and(|s| s.name == ros_type) => {
                return Some(channel);
            }
            Some(other) => other.close(),
            None => {}
        }
        let schema = foxglove::Schema::new(ros_type, "ros2msg", topic.schema.clone().into_bytes());
        let built = self
            .context
            .channel_builder(&name)
            .message_encoding("cdr")
            .schema(schema)
            .build_raw();
        built.map_err(|e| log::error!("stream {name}: {e}")).ok()
    }

    /// Writes what the MCAP recording holds so far to its file.
    fn flush_mcap(&self) {
        let writer = self.mcap.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(writer) = writer.as_ref()
            && let Err(e) = writer.flush()
        {
            log::error!("MCAP: {e}");
        }
    }

    /// A recording that started after the latched messages went out (`~/record`, the
    /// console's `mcap`) gets them too: a bag without /tf_static shows no robot.
    fn latch_into_new_recording(&mut self, latched: Latched) {
        let recording = {
            let writer = self.mcap.lock().unwrap_or_else(|e| e.into_inner());
            writer.as_ref().map(|w| Arc::as_ptr(w) as usize)
        };
        if recording == self.recording {
            return;
        }
        self.recording = recording;
        if recording.is_none() {
            return;
        }
        for (topic, channel) in self.channels.iter().enumerate() {
            if let (Some(channel), Some((bytes, time))) = (channel, latched(topic)) {
                channel.log_with_meta(bytes, log_time(time));
            }
        }
    }

    /// A Foxglove client that subscribes to a latched topic (tf_static, robot_description)
    /// gets its message, as a late ROS subscriber of a transient-local topic would.
    fn resend_latched(&self, latched: Latched) {
        let joined: Vec<_> = {
            let mut joined = self.joined.lock().unwrap_or_else(|e| e.into_inner());
            joined.drain(..).collect()
        };
        for (channel, sink) in joined {
            let topic = self
                .channels
                .iter()
                .position(|c| c.as_ref().is_some_and(|c| c.id() == channel));
            if let Some((bytes, time)) = topic.and_then(latched) {
                let channel = self.channels[topic.unwrap_or_default()].as_ref();
                if let Some(channel) = channel {
                    channel.log_with_meta_to_sink(bytes, log_time(time), Some(sink));
                }
            }
        }
    }
}
