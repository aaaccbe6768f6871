//! rosgraph_msgs/Clock on `/clock`, from a thread of its own: the sim time whenever it moved
//! (at most `ros.rates.clock` times a second), and again every `WHILE_PAUSED` while it
//! stands still, so that nodes started during a pause get a time.
//!
//! Every node on sim time waits on this topic. It reads one atomic the physics thread
//! writes, so it needs nothing of the world: the node's loop re-plans its outputs when the
//! world changes (tens of milliseconds on a busy machine) and /clock does not wait for that.
use super::backend;
use super::interfaces::rosgraph_msgs::msg::Clock as ClockMsg;
use super::outputs::PublishCounters;
use super::outputs::every::Every;
use crate::sim::SimHandle;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const WHILE_PAUSED: Duration = Duration::from_millis(100);
/// The longest sleep, so that a stop or a new rate is seen soon.
const LONGEST_WAIT: Duration = Duration::from_millis(50);

/// The clock's thread; dropping it stops the thread and waits for it.
pub struct ClockThread {
    stop: Arc<AtomicBool>,
    hz_bits: Arc<AtomicU64>,
    /// Gives the thread its publisher, once the node has made it.
    attach: Option<std::sync::mpsc::Sender<backend::Publisher<ClockMsg>>>,
    thread: Option<JoinHandle<()>>,
}

impl ClockThread {
    /// Starts the thread, idle until `attach` gives it its publisher; then it publishes at
    /// `hz` (0: never). It keeps the niceness of the thread that starts it: started before
    /// the node's thread lowers its own, /clock does not queue behind the node's work.
    pub fn start(
        handle: SimHandle,
        hz: f64,
        publishing: Arc<PublishCounters>,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let hz_bits = Arc::new(AtomicU64::new(hz.to_bits()));
        let (attach, attached) = std::sync::mpsc::channel::<backend::Publisher<ClockMsg>>();
        let (stopping, rate) = (stop.clone(), hz_bits.clone());
        let thread = std::thread::Builder::new()
            .name("ros-clock".into())
            .spawn(move || {
                // No publisher: the node did not start (or stops).
                let Ok(publisher) = attached.recv() else {
                    return;
                };
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
                        publishing.count(publisher.publish(&message).is_ok());
                    }
                }
            })?;
        Ok(Self {
            stop,
            hz_bits,
            attach: Some(attach),
            thread: Some(thread),
        })
    }

    /// Gives the thread the publisher it sends with (made by the node, on its thread).
    pub fn attach(&mut self, publisher: backend::Publisher<ClockMsg>) {
        if let Some(attach) = self.attach.take() {
            let _ = attach.send(publisher);
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
        // A thread still waiting for its publisher ends too.
        self.attach = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
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
