//! An output filled from the state, on its schedule: filled once when due and some route
//! wants it, encoded once, the same bytes to every route. A `Once` output's message is kept
//! for late joiners, and goes again to a route that refused it, a little later.
use super::{Routes, TopicSpec};
use crate::encoded::Encoded;
use crate::every::Every;
use crate::{Schedule, Tick};
use std::time::{Duration, Instant};

/// How long a latched message that a route refused waits before it goes again.
const ONCE_RETRY: Duration = Duration::from_millis(100);

pub struct StateOutput {
    output: Box<dyn Encoded>,
    /// Its index in the world's topics.
    topic: usize,
    every: Every,
    /// The message being sent, as CDR (its capacity is kept from one message to the next).
    bytes: Vec<u8>,
    /// A `Once` output's message once made, with its sim time.
    latched: Option<(Vec<u8>, f64)>,
    /// The routes (by index) that refused the latched message, and when it goes again.
    refused: Vec<usize>,
    next_try: Instant,
    /// A `Once` output that had nothing to send.
    ended: bool,
}

impl StateOutput {
    /// The output, its topic added to `topics`, scheduled from `epoch` (outputs of equal or
    /// whole-multiple periods fall due together, and the sampler wakes once for them).
    pub fn new(output: Box<dyn Encoded>, topics: &mut Vec<TopicSpec>, epoch: Instant) -> Self {
        let topic = output.topic();
        let every = match topic.schedule {
            Schedule::Rate { hz, .. } => Every::hz(hz, epoch),
            Schedule::Once => Every::hz(0.0, epoch),
        };
        topics.push(TopicSpec {
            name: topic.name.clone(),
            type_name: output.type_name(),
            schema: output.schema(),
            qos: topic.qos,
            once: topic.schedule == Schedule::Once,
            requested: false,
        });
        Self {
            output,
            topic: topics.len() - 1,
            every,
            bytes: Vec::new(),
            latched: None,
            refused: Vec::new(),
            next_try: epoch,
            ended: false,
        }
    }

    pub fn topic(&self) -> usize {
        self.topic
    }

    /// A `Once` output's message, once made.
    pub fn latched(&self) -> Option<(&[u8], f64)> {
        self.latched
            .as_ref()
            .map(|(bytes, time)| (bytes.as_slice(), *time))
    }

    pub fn deadline(&self) -> Option<Instant> {
        match self.output.topic().schedule {
            Schedule::Once if self.ended => None,
            Schedule::Once if self.latched.is_none() || !self.refused.is_empty() => {
                Some(self.next_try)
            }
            Schedule::Once => None,
            Schedule::Rate { .. } => self.every.deadline(),
        }
    }

    pub fn observe(&mut self, tick: &Tick) {
        self.output.observe(tick);
    }

    /// Takes a live change of `ros.rates.<field>` when its rate follows that field.
    pub fn retime(&mut self, field: &str, hz: f64) {
        if let Schedule::Rate {
            follows: Some(follows),
            ..
        } = self.output.topic().schedule
            && follows == field
        {
            // From now: the old schedule may lie a long period ahead.
            self.every = Every::hz(hz, Instant::now());
        }
    }

    /// Sends the message when due.
    pub fn run(&mut self, tick: &Tick, routes: &Routes) {
        match self.output.topic().schedule {
            Schedule::Rate { .. } => {
                if self.every.due(tick.now)
                    && routes.wanted(self.topic)
                    && self.fill(tick) == Filled::Message
                {
                    routes.send(self.topic, &self.bytes, tick.state.time);
                }
            }
            Schedule::Once => self.run_once(tick, routes),
        }
    }

    fn run_once(&mut self, tick: &Tick, routes: &Routes) {
        if self.ended || tick.now < self.next_try {
            return;
        }
        self.next_try = tick.now + ONCE_RETRY;
        if let Some((bytes, time)) = &self.latched {
            self.refused
                .retain(|&r| !routes.0[r].send(self.topic, bytes, *time));
            return;
        }
        if !routes.wanted(self.topic) {
            return;
        }
        match self.fill(tick) {
            Filled::Message => {}
            // Nothing to send (no fixed frame, no description): not now, not later.
            Filled::Nothing => return self.ended = true,
            Filled::Failed => return,
        }
        let time = tick.state.time;
        self.refused = (0..routes.0.len())
            .filter(|&r| routes.0[r].wants(self.topic))
            .filter(|&r| !routes.0[r].send(self.topic, &self.bytes, time))
            .collect();
        self.latched = Some((std::mem::take(&mut self.bytes), time));
    }

    /// This tick's message into `bytes`.
    fn fill(&mut self, tick: &Tick) -> Filled {
        match self.output.fill(tick, &mut self.bytes) {
            Ok(true) => Filled::Message,
            Ok(false) => Filled::Nothing,
            Err(e) => {
                tick.publishing.count(false);
                log::warn!("{}: {e}", self.output.topic().name);
                Filled::Failed
            }
        }
    }
}

/// What a fill gave.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Filled {
    Message,
    /// Nothing new to send.
    Nothing,
    /// The message could not be encoded (counted as a failure).
    Failed,
}
