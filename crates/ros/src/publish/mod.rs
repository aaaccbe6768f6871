//! The planned topics with their publishers, on their schedules: what the node's loop runs
//! for each topic. Outputs filled from the state publish the CDR they serialize themselves
//! (`Publishing`); cameras and lidars publish what their worker made (`camera`, `lidar`).
mod camera;
mod lidar;
mod on_request;

use crate::topics::encoded::Encoded;
use crate::topics::every::Every;
use crate::topics::{Planned, Schedule, Tick, TopicOutput};
use crate::{Error, backend};
use std::time::{Duration, Instant};

/// How long a latched message whose publish failed waits before it goes again.
const ONCE_RETRY: Duration = Duration::from_millis(100);

/// An output filled from the state, with its publisher, on its schedule.
pub struct Publishing {
    output: Box<dyn Encoded>,
    publisher: backend::RawPublisher,
    /// The message being sent, as CDR (its capacity is kept from one message to the next).
    bytes: Vec<u8>,
    every: Every,
    /// A `Once` output that has been sent.
    sent: bool,
    /// When a `Once` output that has not been sent tries (again).
    next_try: Instant,
}

/// A running output of any kind, as the node's loop sees it.
pub trait Running {
    /// When it is next due (None: never again).
    fn deadline(&self) -> Option<Instant>;
    /// Follows the state every cycle, due or not (outputs filled on a worker thread do not).
    fn observe(&mut self, _tick: &Tick) {}
    /// Publishes when due, counting the result (`node` tells who subscribes).
    fn run(&mut self, tick: &Tick, node: &backend::Node);
    /// Takes a live change of `ros.rates.<field>` when its rate follows that field (a
    /// camera's or lidar's rate is its own).
    fn retime(&mut self, _field: &str, _hz: f64) {}
    /// Puts its schedule in phase with `epoch`: outputs of equal or whole-multiple periods
    /// then fall due together and the loop wakes once for all of them.
    fn align(&mut self, epoch: Instant);
    /// Hands its publishers back to the node (after a world change, the re-planned outputs
    /// take over those of the same topic; the rest are destroyed).
    fn retire(self: Box<Self>, node: &mut backend::Node);
}

/// Gives a planned output its publishers.
pub fn start(
    planned: Box<dyn Planned>,
    node: &mut backend::Node,
) -> Result<Box<dyn Running>, Error> {
    Ok(match planned.into_output() {
        TopicOutput::State(output) => Box::new(Publishing::start(output, node)?),
        TopicOutput::Camera(planned) => Box::new(camera::start(*planned, node)?),
        TopicOutput::Lidar(planned) => Box::new(lidar::start(*planned, node)?),
    })
}

impl Publishing {
    fn start(output: Box<dyn Encoded>, node: &mut backend::Node) -> Result<Self, Error> {
        let topic = output.topic();
        let publisher = node.raw_publisher(&topic.name, output.type_name(), topic.qos)?;
        let every = match topic.schedule {
            Schedule::Rate { hz, .. } => Every::hz(hz, Instant::now()),
            Schedule::Once => Every::hz(0.0, Instant::now()),
        };
        Ok(Self {
            output,
            publisher,
            bytes: Vec::new(),
            every,
            sent: false,
            next_try: Instant::now(),
        })
    }
}

impl Running for Publishing {
    fn deadline(&self) -> Option<Instant> {
        match self.output.topic().schedule {
            Schedule::Once if !self.sent => Some(self.next_try),
            Schedule::Once => None,
            Schedule::Rate { .. } => self.every.deadline(),
        }
    }

    fn observe(&mut self, tick: &Tick) {
        self.output.observe(tick);
    }

    fn retime(&mut self, field: &str, hz: f64) {
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

    fn align(&mut self, epoch: Instant) {
        self.every.next = epoch;
    }

    fn retire(self: Box<Self>, node: &mut backend::Node) {
        node.retire(self.publisher);
    }

    fn run(&mut self, tick: &Tick, _node: &backend::Node) {
        let due = match self.output.topic().schedule {
            Schedule::Once => !self.sent && self.next_try <= tick.now,
            Schedule::Rate { .. } => self.every.due(tick.now),
        };
        if !due {
            return;
        }
        let ok = match self.output.fill(tick, &mut self.bytes) {
            Ok(true) => self.publisher.publish(&self.bytes).is_ok(),
            Ok(false) => {
                self.sent = true;
                return;
            }
            Err(_) => false,
        };
        tick.publishing.count(ok);
        // A latched message that failed goes again a little later.
        self.sent = ok;
        self.next_try = tick.now + ONCE_RETRY;
    }
}
