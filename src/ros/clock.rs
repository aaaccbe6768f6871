//! rosgraph_msgs/Clock on `/clock`, the simulator's heartbeat: every node on sim time waits
//! on it. It goes out from a thread of its own that reads the one atomic the physics thread
//! writes each step: the sim time whenever it moved (at most `ros.rates.clock` times a
//! second), and again every `WHILE_PAUSED` while it stands still, so that nodes started
//! during a pause get a time.
//!
//! Nothing another topic does may hold it back, so it has a DDS participant of its own, on
//! RustDDS in every build (UDP only, limited to loopback as the node is): a participant's
//! writers share one send path, and in Fast DDS (the r2r node's RMW) that path is held while
//! discovery opens a newcomer's shared-memory port (hundreds of milliseconds when that
//! process is slow to start on a busy machine) and while the node's lower-priority thread
//! sends an image. The thread runs one SCHED_FIFO level under the physics thread (or at its
//! raised niceness), and the participant's threads, started from it, inherit that. A send
//! that finds the reliable window full is counted as failed and never waits.
use super::Error;
use super::interfaces::rosgraph_msgs::msg::Clock as ClockMsg;
use super::names::Names;
use super::outputs::PublishCounters;
use super::outputs::every::Every;
use crate::config::DdsConfig;
use crate::sim::SimHandle;
use crate::sim::priority;
use ros2_client::qos::{Durability, History, WhenFull};
use ros2_client::{Context, MessageTypeName, Name, NodeName, NodeOptions, QosProfile};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const WHILE_PAUSED: Duration = Duration::from_millis(100);
/// The longest sleep, so that a stop or a new rate is seen soon.
const LONGEST_WAIT: Duration = Duration::from_millis(50);
/// Samples kept for retransmission to a reliable reader that missed some.
const HISTORY: usize = 100;

/// Where and how /clock goes out.
pub struct ClockSettings {
    /// Messages a second at most (0: none).
    pub hz: f64,
    /// The node's names after `--ros-args` (its namespace and remaps apply to /clock too).
    pub names: Names,
    pub dds: DdsConfig,
    /// `sim.realtime_priority`: the thread asks for one level less.
    pub realtime_priority: u8,
}

/// The clock's thread; dropping it stops the thread and waits for it.
pub struct ClockThread {
    stop: Arc<AtomicBool>,
    hz_bits: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl ClockThread {
    /// Starts the thread, which raises its priority, makes its participant and writer, and
    /// publishes; returns once the writer is up, or why it could not be made.
    pub fn start(
        handle: SimHandle,
        settings: ClockSettings,
        publishing: Arc<PublishCounters>,
    ) -> Result<Self, Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let hz_bits = Arc::new(AtomicU64::new(settings.hz.to_bits()));
        let (ready, made) = std::sync::mpsc::channel::<Result<(), Error>>();
        let (stopping, rate) = (stop.clone(), hz_bits.clone());
        let thread = std::thread::Builder::new()
            .name("ros-clock".into())
            .spawn(move || {
                raise(settings.realtime_priority);
                let writer = match ClockWriter::create(&settings) {
                    Ok(writer) => {
                        let _ = ready.send(Ok(()));
                        writer
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                run(&handle, &writer, &stopping, &rate, &publishing);
            })
            .map_err(|e| Error::from(format!("/clock thread: {e}")))?;
        let clock = Self {
            stop,
            hz_bits,
            thread: Some(thread),
        };
        match made.recv() {
            Ok(Ok(())) => Ok(clock),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::from(
                "/clock thread ended before its writer was made".to_string(),
            )),
        }
    }

    /// A live change of `ros.rates.clock` (or a world loaded with another one).
    pub fn set_rate(&self, hz: f64) {
        self.hz_bits.store(hz.to_bits(), Ordering::Relaxed);
    }
}

impl Drop for ClockThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One SCHED_FIFO level under the physics thread, else a raised niceness. What the
/// physics thread got is logged once, at start; the clock follows the same permission.
fn raise(realtime_priority: u8) {
    let level = match realtime_priority {
        0 => 0,
        p => p.saturating_sub(1).max(1),
    };
    let _ = priority::raise(level);
}

/// The loop: due at the rate, sent when the time moved (or stood still for WHILE_PAUSED).
fn run(
    handle: &SimHandle,
    writer: &ClockWriter,
    stopping: &AtomicBool,
    rate: &AtomicU64,
    publishing: &PublishCounters,
) {
    let mut pacing = Pacing::new(f64::from_bits(rate.load(Ordering::Relaxed)));
    let mut message = ClockMsg::default();
    while !stopping.load(Ordering::Relaxed) {
        pacing.follow_rate(f64::from_bits(rate.load(Ordering::Relaxed)));
        let wait = pacing.wait(Instant::now());
        if !wait.is_zero() {
            std::thread::sleep(wait);
            continue;
        }
        let sim_time = handle.sim_time();
        if pacing.send(Instant::now(), sim_time) {
            message.clock = super::convert::time(sim_time);
            publishing.count(writer.send(&message));
        }
    }
}

/// The clock's own participant, node (`<node>_clock`, so graph tools name its publisher)
/// and writer. Fields drop in order: the writer, then the node, then the participant.
struct ClockWriter {
    publisher: ros2_client::Publisher<ClockMsg>,
    _node: ros2_client::Node,
    _context: Context,
}

impl ClockWriter {
    fn create(settings: &ClockSettings) -> Result<Self, Error> {
        let fail =
            |what: &str, e: &dyn std::fmt::Display| Error::from(format!("/clock {what}: {e}"));
        let domain = super::participant::domain_id(&settings.dds)?;
        let addresses = super::participant::interfaces(&settings.dds);
        let participant = super::participant::build(domain, addresses)?;
        let context =
            Context::from_domain_participant(participant).map_err(|e| fail("context", &e))?;
        let names = &settings.names;
        let node_name = NodeName::new(names.namespace(), &format!("{}_clock", names.node()))
            .map_err(|e| fail("node name", &e))?;
        let options = NodeOptions::new()
            .enable_rosout(false)
            .start_parameter_services(false);
        let mut node = context
            .new_node(node_name, options)
            .map_err(|e| fail("node", &e))?;
        let resolved = names.resolve("/clock");
        let topic_name = Name::parse(&resolved).map_err(|e| fail("topic name", &e))?;
        // Reliable, so that reliable subscribers match (best-effort ones, as rclcpp's
        // ClockQoS asks, match too); a full window fails the send rather than waits.
        let qos = QosProfile::publisher_default()
            .reliability_reliable(WhenFull::Fail)
            .history(History::KeepLast { depth: HISTORY })
            .durability(Durability::Volatile);
        let topic = node
            .create_topic(
                &topic_name,
                MessageTypeName::new("rosgraph_msgs", "Clock"),
                &qos,
            )
            .map_err(|e| fail("topic", &e))?;
        let publisher = node
            .create_publisher(&topic, None)
            .map_err(|e| fail("writer", &e))?;
        Ok(Self {
            publisher,
            _node: node,
            _context: context,
        })
    }

    /// Whether the sample went out (a full reliable window drops it).
    fn send(&self, message: &ClockMsg) -> bool {
        self.publisher.publish(message.clone()).is_ok()
    }
}

/// When the clock is due and whether it has news: plain data, so the rules are tested
/// without a thread or a middleware.
struct Pacing {
    hz: f64,
    every: Every,
    /// The sim time and the moment of the last message sent.
    last: Option<(u64, Instant)>,
}

impl Pacing {
    fn new(hz: f64) -> Self {
        Self {
            hz,
            every: Every::hz(hz, Instant::now()),
            last: None,
        }
    }

    fn follow_rate(&mut self, hz: f64) {
        if hz != self.hz {
            self.hz = hz;
            self.every = Every::hz(hz, Instant::now());
        }
    }

    /// How long to sleep before the next message is due (zero: it is due now).
    fn wait(&self, now: Instant) -> Duration {
        self.every
            .deadline()
            .map_or(LONGEST_WAIT, |d| d.saturating_duration_since(now))
            .min(LONGEST_WAIT)
    }

    /// Whether to send `sim_time` at `now` (due, and the time moved or has stood still for
    /// `WHILE_PAUSED`); takes the turn when due.
    fn send(&mut self, now: Instant, sim_time: f64) -> bool {
        if !self.every.due(now) {
            return false;
        }
        let bits = sim_time.to_bits();
        if let Some((last_bits, sent)) = self.last
            && last_bits == bits
            && now - sent < WHILE_PAUSED
        {
            return false;
        }
        self.last = Some((bits, now));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_when_time_moves_at_its_rate_and_repeats_while_paused() {
        let mut pacing = Pacing::new(100.0);
        let start = Instant::now();
        assert!(pacing.send(start, 0.002));
        // Not due yet, however the time moved.
        let soon = start + Duration::from_millis(2);
        assert!(!pacing.send(soon, 0.004));
        assert!(pacing.wait(soon) > Duration::ZERO);
        // Due, the time moved.
        let due = start + Duration::from_millis(10);
        assert_eq!(pacing.wait(due), Duration::ZERO);
        assert!(pacing.send(due, 0.004));
        // Due, the time stood still: nothing until WHILE_PAUSED has gone by.
        let later = due + Duration::from_millis(10);
        assert!(!pacing.send(later, 0.004));
        assert!(pacing.send(due + WHILE_PAUSED, 0.004));
        // A reset sends its earlier time at once.
        assert!(pacing.send(due + WHILE_PAUSED + Duration::from_millis(10), 0.0));
    }

    #[test]
    fn a_rate_of_zero_sends_nothing_and_a_new_rate_starts_now() {
        let mut pacing = Pacing::new(0.0);
        let now = Instant::now();
        assert!(!pacing.send(now + Duration::from_secs(1), 1.0));
        assert_eq!(pacing.wait(now), LONGEST_WAIT);
        pacing.follow_rate(1000.0);
        assert!(pacing.send(Instant::now(), 1.0));
    }
}
