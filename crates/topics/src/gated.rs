//! An output that sends only while its sensor broadcaster is active (a topic a controllers
//! file's broadcaster stands for publishes as upstream's does: between activate and
//! deactivate). It follows the state either way.
use super::{Output, Tick, Topic};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Gated<O> {
    pub(super) inner: O,
    pub(super) open: Arc<AtomicBool>,
}

impl<O: Output> Output for Gated<O> {
    type Message = O::Message;

    fn topic(&self) -> &Topic {
        self.inner.topic()
    }

    fn observe(&mut self, tick: &Tick) {
        self.inner.observe(tick);
    }

    fn timing(&self) -> super::Timing {
        self.inner.timing()
    }

    fn fill(&mut self, tick: &Tick) -> Option<&Self::Message> {
        if self.open.load(Ordering::Relaxed) {
            self.inner.fill(tick)
        } else {
            None
        }
    }
}
