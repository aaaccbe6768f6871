//! Outputs whose messages a worker thread makes on request (camera frames, lidar scans):
//! asked at most at their rate and only while some route reads one of their topics; what
//! came is filled, encoded once and sent to every route that reads it, on the frames thread
//! (`offload`). Each is asked for a sample of the sim clock at its rate, rendered or cast
//! from that sample's state and stamped with its time; a lossless run (fast, stepped,
//! recorded) waits for each before asking the next, a real-time one replaces a request still
//! waiting. While the last one is still going out, nothing new is sent.
use super::schedules::Sampled;
use super::{Routes, TopicSpec};
use crate::asking::Asking;
use crate::messages::{Message, definition};
use crate::offload::Wire;
use crate::render::{Slot, Sources};
use crate::{Tick, Topic};
use std::sync::Arc;
use std::time::Duration;
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

/// How long a lossless run waits for a frame or scan asked before it goes on without it
/// (the first frame of a world loads a GL context and compiles shaders).
const PATIENCE: Duration = Duration::from_secs(5);

/// How often a lossless run looks whether the frame or scan it waits for is out.
const SETTLE_POLL: Duration = Duration::from_micros(200);

/// A running requested output, as the sampler sees it.
pub trait Requested: Sampled + Send {
    /// When it is next due on the wall clock (`held`: the run is paused).
    fn deadline(&self, held: bool) -> Option<Instant>;
    /// Sends what came; while `held`, asks for the held state at its rate.
    fn run(&mut self, tick: &Tick, routes: &Routes, held: bool);
    /// Asks for the sample of `tick` when it is due for one of the schedules in `mask` and
    /// watched; `lossless`: the one asked before goes out first, however long it takes.
    fn sample(&mut self, tick: &Tick, routes: &Routes, mask: u64, lossless: bool);
    /// Waits until what was asked is out (the run's end).
    fn finish(&mut self, tick: &Tick, routes: &Routes);
}

/// The output of source `index`, its topics at `topics` in the world's list.
pub struct OnRequest<M: Made> {
    index: usize,
    /// Its first topic's name (what the log says).
    name: String,
    topics: Vec<usize>,
    rate: f64,
    schedule: Option<usize>,
    asking: Asking,
    wire: Wire<M>,
    /// The world has no worker for it (no render thread, a source it does not know): it is
    /// never due, rather than due at once on every cycle.
    without_worker: bool,
    /// A lossless wait ran out of patience (said once).
    gave_up: bool,
    /// What was asked last is the held state of a paused run (not a sample): it goes only
    /// to the routes that take that.
    asked_held: bool,
}

impl<M: Made> OnRequest<M> {
    pub fn new(index: usize, name: String, topics: Vec<usize>, rate: f64, made: M) -> Self {
        Self {
            index,
            name,
            topics,
            rate,
            schedule: None,
            asking: Asking::new(rate),
            wire: Wire::new(made),
            without_worker: false,
            gave_up: false,
            asked_held: false,
        }
    }

    /// The world's sources when they hold this one.
    fn sources<'a>(&mut self, tick: &Tick<'a>) -> Option<&'a Arc<Sources<M::Spec, M::Item>>> {
        let sources = M::sources(tick).filter(|s| self.index < s.len());
        self.without_worker = sources.is_none();
        sources
    }

    fn watched(&self, routes: &Routes) -> bool {
        self.topics.iter().any(|&t| routes.wanted(t))
    }

    /// Sends what came, unless the last one is still going out; whether it was free to.
    fn deliver(
        &mut self,
        sources: &Arc<Sources<M::Spec, M::Item>>,
        tick: &Tick,
        routes: &Routes,
    ) -> bool {
        if self.wire.busy() {
            return false;
        }
        let index = self.index;
        if self.asking.came(sources.slot(index), tick.now) {
            let routes = if self.asked_held {
                routes.held_only()
            } else {
                routes.clone()
            };
            let sources = sources.clone();
            self.wire.send(tick.offload, move |made| {
                made.send(sources.slot(index), &routes)
            });
        }
        true
    }

    /// Waits until the last one asked is made and out (or `PATIENCE` has passed).
    fn settle(&mut self, sources: &Arc<Sources<M::Spec, M::Item>>, tick: &Tick, routes: &Routes) {
        let since = Instant::now();
        let waited = || {
            if since.elapsed() > PATIENCE {
                return false;
            }
            std::thread::sleep(SETTLE_POLL);
            true
        };
        let slot = sources.slot(self.index);
        while !slot.answered_all() {
            if !waited() {
                return self.give_up();
            }
        }
        while !self.deliver(sources, tick, routes) {
            if !waited() {
                return self.give_up();
            }
        }
        while self.wire.busy() {
            if !waited() {
                return self.give_up();
            }
        }
    }

    fn give_up(&mut self) {
        if !self.gave_up {
            log::warn!(
                "{}: a frame took more than {PATIENCE:?}; the run goes on without waiting for it",
                self.name
            );
            self.gave_up = true;
        }
    }
}

impl<M: Made> Sampled for OnRequest<M> {
    fn sampled_hz(&self) -> Option<f64> {
        Some(self.rate)
    }

    fn schedule(&self) -> Option<usize> {
        self.schedule
    }

    fn set_schedule(&mut self, schedule: Option<usize>) {
        self.schedule = schedule;
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl<M: Made> Requested for OnRequest<M> {
    fn deadline(&self, held: bool) -> Option<Instant> {
        self.asking.deadline(held).filter(|_| !self.without_worker)
    }

    fn run(&mut self, tick: &Tick, routes: &Routes, held: bool) {
        let Some(sources) = self.sources(tick) else {
            return;
        };
        if !self.deliver(sources, tick, routes) {
            return self.asking.hold(tick.now);
        }
        let watched = || self.topics.iter().any(|&t| routes.wanted_held(t));
        if held && self.asking.ask_held(tick.now, watched) {
            sources.request_at(self.index, tick.state);
            self.asked_held = true;
        }
    }

    fn sample(&mut self, tick: &Tick, routes: &Routes, mask: u64, lossless: bool) {
        let due = self.schedule.is_some_and(|k| mask & (1 << k) != 0);
        if !due || !self.watched(routes) {
            return;
        }
        let Some(sources) = self.sources(tick) else {
            return;
        };
        if lossless {
            self.settle(sources, tick, routes);
        } else {
            self.deliver(sources, tick, routes);
        }
        sources.request_at(self.index, tick.state);
        self.asking.asked(tick.now);
        self.asked_held = false;
    }

    fn finish(&mut self, tick: &Tick, routes: &Routes) {
        if let Some(sources) = self.sources(tick) {
            self.settle(sources, tick, routes);
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
