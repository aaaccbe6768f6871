//! The schedule of an output whose messages come from a worker thread (camera frames, lidar
//! scans) rather than from the state: it is asked at the samples its schedule marks (sim
//! time), or at its rate on the wall clock for the held state of a paused run, then looks
//! every few milliseconds whether what it asked for has come.
use super::every::Every;
use crate::render::Slot;
use std::time::{Duration, Instant};

/// How often an output that waits looks whether its frame or scan came.
const POLL: Duration = Duration::from_millis(2);

pub struct Asking {
    /// When the held state is next asked for, while the run is paused.
    every: Every,
    /// Asked and not yet taken.
    waiting: bool,
    next_poll: Instant,
    /// The slot's sequence of the last one taken.
    seen: u64,
    /// Nothing is due before this (the last one is still going out).
    held_until: Instant,
}

impl Asking {
    pub fn new(rate: f64) -> Self {
        let now = Instant::now();
        Self {
            every: Every::hz(rate, now),
            waiting: false,
            next_poll: now,
            seen: 0,
            held_until: now,
        }
    }

    /// When it is next due on the wall clock; `held`: the run is paused, and the held state
    /// is asked for at the rate.
    pub fn deadline(&self, held: bool) -> Option<Instant> {
        let due = held.then(|| self.every.deadline()).flatten();
        let due = match (due, self.waiting) {
            (Some(due), true) => Some(due.min(self.next_poll)),
            (None, true) => Some(self.next_poll),
            (due, false) => due,
        };
        due.map(|d| d.max(self.held_until))
    }

    /// Looks again in a few milliseconds: the last one is still going out (the node's loop
    /// would otherwise find this due at once, over and over).
    pub fn hold(&mut self, now: Instant) {
        self.held_until = now + POLL;
    }

    /// Whether what was asked for has come (the caller then copies it from the slot, on
    /// whichever thread publishes it).
    pub fn came<T: Clone>(&mut self, slot: &Slot<T>, now: Instant) -> bool {
        if !self.waiting {
            return false;
        }
        if slot.newer_than(self.seen) {
            self.seen = slot.sequence();
            self.waiting = false;
            return true;
        }
        self.next_poll = now + POLL;
        false
    }

    /// Whether to ask for the held state now: due on the wall clock, and someone `watched`.
    pub fn ask_held(&mut self, now: Instant, watched: impl FnOnce() -> bool) -> bool {
        if !self.every.due(now) || !watched() {
            return false;
        }
        self.asked(now);
        true
    }

    /// It was asked for (a sample): what comes is to be looked for.
    pub fn asked(&mut self, now: Instant) {
        self.waiting = true;
        self.next_poll = now + POLL;
    }
}
