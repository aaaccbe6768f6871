//! An output filled from the state, on its schedule: filled once when due and some route
//! wants it, encoded once, the same bytes to every route. A rate output is due at the samples
//! its schedule marks (sim time); while the run is paused it sends the held state on the wall
//! clock, and a `Wall` output (the run's figures) always goes on the wall clock. A `Once`
//! output's message is kept for late joiners, and goes again to a route that refused it, a
//! little later.
use super::schedules::Sampled;
use super::{Routes, TopicSpec};
use crate::encoded::Encoded;
use crate::every::Every;
use crate::{Schedule, Tick, Timing};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How long a latched message that a route refused waits before it goes again.
const ONCE_RETRY: Duration = Duration::from_millis(100);

/// Sim times this close are one moment (the sum of many steps is rounded).
const TIME_SLACK: f64 = 1e-9;

/// The most messages one output holds back for its latency (10 s at 10 kHz).
const MOST_DELAYED: usize = 100_000;

pub struct StateOutput {
    output: Box<dyn Encoded>,
    /// Its index in the world's topics.
    topic: usize,
    /// Its rate now (a live change of its `ros.rates` field moves it).
    hz: f64,
    /// The sample schedule it goes with (None: not on the sim clock, or no rate).
    schedule: Option<usize>,
    /// When it is due on the wall clock (a `Wall` output; any rate output while paused).
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
    /// How its readings lag the state.
    timing: Timing,
    /// Messages held back by the config's latency, with the sim time they measured.
    delayed: VecDeque<(Vec<u8>, f64)>,
    /// The last of them sent: what a paused run holds (the newer ones are on their way).
    released: Option<(Vec<u8>, f64)>,
}

impl StateOutput {
    /// The output, its topic added to `topics`, scheduled on the wall clock from `epoch`.
    pub fn new(output: Box<dyn Encoded>, topics: &mut Vec<TopicSpec>, epoch: Instant) -> Self {
        let topic = output.topic();
        let hz = topic.schedule.rate().map_or(0.0, |(hz, _)| hz);
        topics.push(TopicSpec {
            name: topic.name.clone(),
            type_name: output.type_name(),
            schema: output.schema(),
            qos: topic.qos,
            once: topic.schedule == Schedule::Once,
            requested: false,
        });
        Self {
            topic: topics.len() - 1,
            hz,
            schedule: None,
            every: Every::hz(hz, epoch),
            bytes: Vec::new(),
            latched: None,
            refused: Vec::new(),
            next_try: epoch,
            ended: false,
            timing: output.timing(),
            delayed: VecDeque::new(),
            released: None,
            output,
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

    /// When it is next due on the wall clock; `held`: the run is paused, and rate outputs
    /// send the held state.
    pub fn deadline(&self, held: bool) -> Option<Instant> {
        match self.output.topic().schedule {
            Schedule::Once if self.ended => None,
            Schedule::Once if self.latched.is_none() || !self.refused.is_empty() => {
                Some(self.next_try)
            }
            Schedule::Once => None,
            Schedule::Wall { .. } => self.every.deadline(),
            Schedule::Rate { .. } if held => self.every.deadline(),
            Schedule::Rate { .. } => None,
        }
    }

    pub fn observe(&mut self, tick: &Tick) {
        self.output.observe(tick);
    }

    /// Takes a live change of `ros.rates.<field>` when its rate follows that field; true
    /// when it did (its schedule is then to be found again).
    pub fn retime(&mut self, field: &str, hz: f64) -> bool {
        match self.output.topic().schedule.rate() {
            Some((_, Some(follows))) if follows == field => {
                self.hz = hz;
                // From now: the old schedule may lie a long period ahead.
                self.every = Every::hz(hz, Instant::now());
                true
            }
            _ => false,
        }
    }

    /// Sends the message when the sample (due for the schedules in `mask`) is one of its own.
    pub fn run_sampled(&mut self, tick: &Tick, routes: &Routes, mask: u64) {
        if self.output.topic().schedule == Schedule::Once {
            // Latched topics go with the first sample, stamped with its time.
            if self.latched.is_none() {
                self.run_once(tick, routes);
            }
            return;
        }
        self.release(tick.state.time, routes);
        let due = self.schedule.is_some_and(|k| mask & (1 << k) != 0);
        if !due || !routes.wanted(self.topic) {
            return;
        }
        // MuJoCo delayed the values: they measured that much earlier (none before 0).
        let measured = tick.state.time - self.timing.delay;
        if measured < -TIME_SLACK {
            return;
        }
        let stamp = crate::convert::time(measured.max(0.0));
        if self.fill(&Tick {
            stamp: &stamp,
            ..*tick
        }) != Filled::Message
        {
            return;
        }
        if self.timing.latency > 0.0 {
            if self.delayed.len() == MOST_DELAYED {
                self.delayed.pop_front();
            }
            self.delayed.push_back((self.bytes.clone(), measured));
        } else {
            routes.send(self.topic, &self.bytes, measured);
        }
    }

    /// Sends the held-back messages whose latency has passed by sim time `now`.
    fn release(&mut self, now: f64, routes: &Routes) {
        while let Some((_, measured)) = self.delayed.front() {
            if *measured + self.timing.latency > now + TIME_SLACK {
                break;
            }
            if let Some((bytes, measured)) = self.delayed.pop_front() {
                routes.send(self.topic, &bytes, measured);
                self.released = Some((bytes, measured));
            }
        }
    }

    /// Sends the held state of a paused run: the last message that went out when it lags
    /// by a latency, else the state's, stamped when its values measured.
    fn send_held(&mut self, tick: &Tick, routes: &Routes) {
        if self.timing.latency > 0.0 {
            if let Some((bytes, measured)) = &self.released {
                routes.send_held(self.topic, bytes, *measured);
            }
            return;
        }
        let measured = (tick.state.time - self.timing.delay).max(0.0);
        let stamp = crate::convert::time(measured);
        if self.fill(&Tick {
            stamp: &stamp,
            ..*tick
        }) == Filled::Message
        {
            routes.send_held(self.topic, &self.bytes, measured);
        }
    }

    /// Sends the message when due on the wall clock (see `deadline`).
    pub fn run_wall(&mut self, tick: &Tick, routes: &Routes, held: bool) {
        match self.output.topic().schedule {
            Schedule::Once => self.run_once(tick, routes),
            Schedule::Rate { .. } if !held => {}
            Schedule::Rate { .. } => {
                if self.every.due(tick.now) && routes.wanted_held(self.topic) {
                    self.send_held(tick, routes);
                }
            }
            Schedule::Wall { .. } => {
                if self.every.due(tick.now)
                    && routes.wanted(self.topic)
                    && self.fill(tick) == Filled::Message
                {
                    routes.send(self.topic, &self.bytes, tick.state.time);
                }
            }
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

impl Sampled for StateOutput {
    fn sampled_hz(&self) -> Option<f64> {
        matches!(self.output.topic().schedule, Schedule::Rate { .. }).then_some(self.hz)
    }

    fn schedule(&self) -> Option<usize> {
        self.schedule
    }

    fn set_schedule(&mut self, schedule: Option<usize>) {
        self.schedule = schedule;
    }

    fn name(&self) -> &str {
        &self.output.topic().name
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
