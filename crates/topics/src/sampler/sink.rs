//! Where the sampled topics go: each sink (the ROS node's publishers, the Foxglove server
//! and MCAP) opens a route for the topics of each world, and every message is encoded once
//! and handed, as the same bytes, to each route that wants it.
use crate::Qos;
use crate::messages::TypeName;
use std::sync::Arc;

/// One topic of a world's outputs, as a sink opens it.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicSpec {
    /// Relative to the node's namespace unless it starts with `/`.
    pub name: String,
    pub type_name: TypeName,
    /// Its `ros2msg` schema text (the streams write it into their channels).
    pub schema: String,
    pub qos: Qos,
    /// Sent once per world, kept for subscribers that join later.
    pub once: bool,
    /// Made on request (a camera's frames, a lidar's scans): worth making only while some
    /// route reads it; a state topic goes out whatever reads it.
    pub requested: bool,
}

/// A sink's way out for the topics of one world, by their index in the world's topic list.
/// Shared by the sampler's thread and the frames thread: each message is sent from one of
/// them.
pub trait Route: Send + Sync {
    /// Whether a message of `topic` would be taken now.
    fn wants(&self, topic: usize) -> bool;
    /// Sends one message of `topic`: its CDR (with the encapsulation header), measured at
    /// sim time `time`. False when the sink refused it (the route counts it).
    fn send(&self, topic: usize, bytes: &[u8], time: f64) -> bool;
    /// Whether it takes the held state of a paused run, sent again on the wall clock (a
    /// live subscriber that joins late needs it; a recording of the samples does not).
    fn takes_held(&self) -> bool {
        true
    }
}

/// A latched message as a sink's late joiners need it.
pub type Latched<'a> = &'a dyn Fn(usize) -> Option<(&'a [u8], f64)>;

/// Somewhere the topics go; it lives on the sampler's thread.
pub trait Sink: Send {
    /// The route of world `world`'s `topics`; called when the world takes effect, before
    /// any of its messages.
    fn open(&mut self, world: u64, topics: &Arc<[TopicSpec]>) -> Arc<dyn Route>;
    /// Whether anything reads from it at all (with no sink active nothing is made).
    fn active(&self) -> bool {
        true
    }
    /// Whether it records every message (an MCAP file): then no sample may be lost, and the
    /// physics thread waits for the sampler rather than drop one.
    fn records(&self) -> bool {
        false
    }
    /// Its own work between the sampler's cycles (a file flushed, the latched messages of
    /// topics a late joiner subscribed to); `latched` gives a `once` topic's message.
    fn tend(&mut self, _latched: Latched) {}
}

/// The routes of one world, one per sink.
#[derive(Clone, Default)]
pub struct Routes(pub Arc<[Arc<dyn Route>]>);

impl Routes {
    /// Whether some route wants `topic`.
    pub fn wanted(&self, topic: usize) -> bool {
        self.0.iter().any(|route| route.wants(topic))
    }

    /// Sends `bytes` of `topic` to each route that wants it; how many refused.
    pub fn send(&self, topic: usize, bytes: &[u8], time: f64) -> usize {
        self.0
            .iter()
            .filter(|route| route.wants(topic) && !route.send(topic, bytes, time))
            .count()
    }

    /// Whether some route that takes the held state wants `topic`.
    pub fn wanted_held(&self, topic: usize) -> bool {
        self.0
            .iter()
            .any(|route| route.takes_held() && route.wants(topic))
    }

    /// Sends the held state's `bytes` of `topic` to each route that takes it.
    pub fn send_held(&self, topic: usize, bytes: &[u8], time: f64) {
        for route in self.0.iter() {
            if route.takes_held() && route.wants(topic) {
                route.send(topic, bytes, time);
            }
        }
    }

    /// The routes that take the held state of a paused run.
    pub fn held_only(&self) -> Routes {
        let held: Vec<Arc<dyn Route>> = self.0.iter().filter(|r| r.takes_held()).cloned().collect();
        Routes(held.into())
    }

    /// Encodes `message` once into `bytes` and sends it to each route that wants `topic`.
    pub fn encode_and_send<M: crate::messages::Message>(
        &self,
        topic: usize,
        message: &M,
        time: f64,
        bytes: &mut Vec<u8>,
    ) -> Result<(), crate::messages::cdr::CdrError> {
        crate::messages::cdr::encode_into(message, bytes)?;
        self.send(topic, bytes, time);
        Ok(())
    }
}
