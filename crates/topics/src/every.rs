//! When a scheduled output is due, on the wall clock: shared by the ROS publishers and the
//! streams (Foxglove, MCAP).
use std::time::{Duration, Instant};

/// How many missed publisher cycles are made up after a stall.
const CATCH_UP: u32 = 20;

/// When a publisher is due: every `period` on average. After a short stall (the node's thread
/// was descheduled) the missed cycles follow at once, so the rate holds; after a long one
/// (more than `CATCH_UP` periods) the schedule restarts from now instead of bursting.
pub struct Every {
    period: Option<Duration>,
    pub next: Instant,
}

impl Every {
    /// `rate` in Hz from `start`; 0 never fires.
    pub fn hz(rate: f64, start: Instant) -> Self {
        Self {
            period: (rate > 0.0).then(|| Duration::from_secs_f64(1.0 / rate)),
            next: start,
        }
    }

    pub fn due(&mut self, now: Instant) -> bool {
        let Some(period) = self.period else {
            return false;
        };
        if now < self.next {
            return false;
        }
        self.next += period;
        if self.next + period * CATCH_UP <= now {
            self.next = now + period;
        }
        true
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.period.map(|_| self.next)
    }
}
