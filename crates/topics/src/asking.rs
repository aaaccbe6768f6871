//! The schedule of an output whose messages come from a worker thread (camera frames, lidar
//! scans) rather than from the state: it asks at most at its rate and only while watched,
//! then looks every few milliseconds whether what it asked for has come.
use super::every::Every;
use crate::render::Slot;
use std::time::{Duration, Instant};

/// How often an output that waits looks whether its frame or scan came.
const POLL: Duration = Duration::from_millis(2);

pub struct Asking {
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

    pub fn deadline(&self) -> Option<Instant> {
        let due = self.every.deadline();
        let due = if self.waiting {
            due.map(|d| d.min(self.next_poll))
        } else {
            due
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

    /// Whether to ask now: due, and someone `watched`.
    pub fn ask(&mut self, now: Instant, watched: impl FnOnce() -> bool) -> bool {
        if !self.every.due(now) || !watched() {
            return false;
        }
        self.waiting = true;
        self.next_poll = now + POLL;
        true
    }

    pub fn align(&mut self, epoch: Instant) {
        self.every.next = epoch;
    }
}
