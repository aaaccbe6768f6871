//! The node's topics as a sink of the sampler (`topics::sampler`): for each world the
//! sampler asks for publishers of its topics, the node's thread makes them (a topic of the
//! last world keeps its publisher, so its subscribers stay matched) and hands them over, and
//! the sampler and its frames thread publish through them; a publisher no route holds any
//! more is destroyed on the node's thread.
mod route;

use crate::backend;
use crate::topics::sampler::{Route, Sink, TopicSpec};
use crate::topics::{CLOCK_TOPIC, PublishCounters};
use route::{RosRoute, Shared};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long the sampler waits for the node's thread to make a world's publishers.
const HANDOVER_LIMIT: Duration = Duration::from_secs(5);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the sampler asks for a world's publishers and the node's thread answers.
#[derive(Default)]
struct Handover {
    asked: Mutex<Option<(u64, Arc<[TopicSpec]>)>>,
    answer: Mutex<Option<(u64, Arc<RosRoute>)>>,
    answered: Condvar,
    /// The node's thread, woken when something is asked (the DDS backend waits parked).
    node: Mutex<Option<std::thread::Thread>>,
}

/// The sampler's end.
pub struct RosSink {
    handover: Arc<Handover>,
}

impl Sink for RosSink {
    fn open(&mut self, world: u64, topics: &Arc<[TopicSpec]>) -> Arc<dyn Route> {
        let handover = &self.handover;
        *lock(&handover.asked) = Some((world, topics.clone()));
        if let Some(node) = lock(&handover.node).as_ref() {
            node.unpark();
        }
        let answer = lock(&handover.answer);
        let (mut answer, _) = handover
            .answered
            .wait_timeout_while(answer, HANDOVER_LIMIT, |a| {
                a.as_ref().is_none_or(|(w, _)| *w != world)
            })
            .unwrap_or_else(|e| e.into_inner());
        match answer.take() {
            Some((_, route)) => route,
            None => {
                log::error!(
                    "world {world}: the ROS node made no publishers within {} s: its topics are not published",
                    HANDOVER_LIMIT.as_secs()
                );
                Arc::new(RosRoute::empty(topics.len()))
            }
        }
    }
}

/// The node thread's end: the publishers of the topics it was asked for.
pub struct Publishers {
    handover: Arc<Handover>,
    counters: Arc<PublishCounters>,
    /// The publishers of the route handed over last, by topic, type and QoS.
    current: Vec<(TopicSpec, Shared)>,
    /// Publishers the last route left out, destroyed once no older route holds them.
    leaving: Vec<Shared>,
}

impl Publishers {
    /// The two ends; `counters` count what the routes publish.
    pub fn new(counters: Arc<PublishCounters>) -> (Self, RosSink) {
        let handover = Arc::new(Handover::default());
        let publishers = Self {
            handover: handover.clone(),
            counters,
            current: Vec::new(),
            leaving: Vec::new(),
        };
        (publishers, RosSink { handover })
    }

    /// Wakes this thread when the sampler asks (from now on).
    pub fn wake_here(&self) {
        *lock(&self.handover.node) = Some(std::thread::current());
    }

    /// Makes the publishers the sampler asked for, if it did; then destroys those no route
    /// holds any more.
    pub fn serve(&mut self, node: &mut backend::Node) {
        let asked = lock(&self.handover.asked).take();
        if let Some((world, topics)) = asked {
            let route = self.route(node, world, &topics);
            *lock(&self.handover.answer) = Some((world, Arc::new(route)));
            self.handover.answered.notify_all();
        }
        let (gone, held) = std::mem::take(&mut self.leaving)
            .into_iter()
            .partition::<Vec<_>, _>(|p| Arc::strong_count(p) == 1);
        self.leaving = held;
        for publisher in gone.into_iter().filter_map(Arc::into_inner) {
            node.destroy(publisher.into_inner().unwrap_or_else(|e| e.into_inner()));
        }
    }

    /// The route of world `world`'s topics: the last world's publisher of a topic, or a new
    /// one. /clock is not among them: the node sends it from a thread of its own.
    fn route(&mut self, node: &mut backend::Node, world: u64, topics: &[TopicSpec]) -> RosRoute {
        let mut last = std::mem::take(&mut self.current);
        let publishers = topics
            .iter()
            .map(|topic| {
                if topic.name == CLOCK_TOPIC {
                    return None;
                }
                let kept = last.iter().position(|(t, _)| same_publisher(t, topic));
                let publisher = match kept {
                    Some(k) => last.swap_remove(k).1,
                    None => match node.raw_publisher(&topic.name, topic.type_name, topic.qos) {
                        Ok(publisher) => Arc::new(Mutex::new(publisher)),
                        Err(e) => {
                            log::error!("world {world}: {}: {e}", topic.name);
                            return None;
                        }
                    },
                };
                self.current.push((topic.clone(), publisher.clone()));
                Some(publisher)
            })
            .collect();
        self.leaving.extend(last.into_iter().map(|(_, p)| p));
        RosRoute::new(publishers, topics, self.counters.clone())
    }
}

/// Whether a publisher of `a` serves `b`: the same topic, type and QoS.
fn same_publisher(a: &TopicSpec, b: &TopicSpec) -> bool {
    a.name == b.name && a.type_name == b.type_name && a.qos == b.qos
}
