//! Outputs whose messages a worker thread makes on request (camera frames, lidar scans):
//! asked at most at their rate and only while some route reads one of their topics; what
//! came is filled, encoded once and sent to every route that reads it, on the frames thread
//! (`offload`). While the last one is still going out, nothing new is asked or sent.
use super::{Routes, TopicSpec};
use crate::asking::Asking;
use crate::messages::{Message, definition};
use crate::offload::Wire;
use crate::render::{Slot, Sources};
use crate::{Tick, Topic};
use std::sync::Arc;
use std::time::Instant;

/// What a kind of requested output sends with: its topics' message buffers and the item
/// (frame, scan) it reads; the frames thread holds it while it works.
pub trait Made: Send + 'static {
    /// A source as planned (a camera, a lidar).
    type Spec: Send + Sync + 'static;
    /// What the worker makes of it.
    type Item: Clone + Send + Sync + 'static;

    /// The world's sources of this kind, while their worker runs.
    fn sources<'a>(tick: &Tick<'a>) -> Option<&'a Arc<Sources<Self::Spec, Self::Item>>>;

    /// The newest item of `slot`, to the routes that read each of its topics.
    fn send(&mut self, slot: &Slot<Self::Item>, routes: &Routes);
}

/// A running requested output, as the sampler sees it.
pub trait Requested: Send {
    fn deadline(&self) -> Option<Instant>;
    /// Sends what came, and asks for the next when due and read.
    fn run(&mut self, tick: &Tick, routes: &Routes);
}

/// The output of source `index`, its topics at `topics` in the world's list.
pub struct OnRequest<M: Made> {
    index: usize,
    topics: Vec<usize>,
    asking: Asking,
    wire: Wire<M>,
    /// The world has no worker for it (no render thread, a source it does not know): it is
    /// never due, rather than due at once on every cycle.
    without_worker: bool,
}

impl<M: Made> OnRequest<M> {
    pub fn new(index: usize, topics: Vec<usize>, rate: f64, made: M) -> Self {
        Self {
            index,
            topics,
            asking: Asking::new(rate),
            wire: Wire::new(made),
            without_worker: false,
        }
    }
}

impl<M: Made> Requested for OnRequest<M> {
    fn deadline(&self) -> Option<Instant> {
        self.asking.deadline().filter(|_| !self.without_worker)
    }

    fn run(&mut self, tick: &Tick, routes: &Routes) {
        let Some(sources) = M::sources(tick).filter(|s| self.index < s.len()) else {
            self.without_worker = true;
            return;
        };
        if self.wire.busy() {
            return self.asking.hold(tick.now);
        }
        let index = self.index;
        if self.asking.came(sources.slot(index), tick.now) {
            let (sources, routes) = (sources.clone(), routes.clone());
            self.wire.send(tick.offload, move |made| {
                made.send(sources.slot(index), &routes)
            });
        }
        let topics = &self.topics;
        if self
            .asking
            .ask(tick.now, || topics.iter().any(|&t| routes.wanted(t)))
        {
            sources.request(index);
        }
    }
}

/// Adds topic `topic` of messages `M`, made on request, to `topics`; its index.
pub fn add<M: Message>(topics: &mut Vec<TopicSpec>, topic: &Topic) -> usize {
    topics.push(TopicSpec {
        name: topic.name.clone(),
        type_name: M::type_name(),
        schema: definition::ros2msg::<M>(),
        qos: topic.qos,
        once: false,
        requested: true,
    });
    topics.len() - 1
}

/// A message that could not be encoded is said (it is the bridge's own defect).
pub fn encoded(result: Result<(), crate::messages::cdr::CdrError>) {
    if let Err(e) = result {
        log::warn!("a camera or lidar message was not sent: {e}");
    }
}
