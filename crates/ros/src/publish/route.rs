//! The publishers of one world's topics, as the sampler sends through them.
use crate::backend;
use crate::topics::PublishCounters;
use crate::topics::sampler::{Route, TopicSpec};
use std::sync::{Arc, Mutex};

/// A publisher shared by the routes of consecutive worlds that have its topic.
pub type Shared = Arc<Mutex<backend::RawPublisher>>;

pub struct RosRoute {
    /// By topic index; None where the node publishes nothing (/clock, a failed publisher).
    publishers: Vec<Option<Shared>>,
    /// Which topics are made only while read (cameras, lidars).
    requested: Vec<bool>,
    counters: Arc<PublishCounters>,
}

impl RosRoute {
    pub fn new(
        publishers: Vec<Option<Shared>>,
        topics: &[TopicSpec],
        counters: Arc<PublishCounters>,
    ) -> Self {
        Self {
            publishers,
            requested: topics.iter().map(|t| t.requested).collect(),
            counters,
        }
    }

    /// A route that publishes nothing (the node made no publishers).
    pub fn empty(topics: usize) -> Self {
        Self {
            publishers: (0..topics).map(|_| None).collect(),
            requested: vec![false; topics],
            counters: Arc::default(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Route for RosRoute {
    fn wants(&self, topic: usize) -> bool {
        match &self.publishers[topic] {
            None => false,
            // A state topic goes out whoever listens, as a driver's does.
            Some(_) if !self.requested[topic] => true,
            Some(publisher) => lock(publisher).subscribers() > 0,
        }
    }

    fn send(&self, topic: usize, bytes: &[u8], _time: f64) -> bool {
        let Some(publisher) = &self.publishers[topic] else {
            return true;
        };
        let sent = lock(publisher).publish(bytes).is_ok();
        self.counters.count(sent);
        sent
    }
}
