//! An output whose messages a worker thread makes on request (camera frames, lidar scans)
//! rather than the node filling them from the state. It asks its worker at most at its rate
//! and only while one of its topics is read, and sends what came on the publishing thread;
//! while the last one is still going out, nothing new is asked or sent. A kind of such output
//! gives only its wire: what it publishes with, and how.
use super::Running;
use crate::backend;
use crate::render::{Slot, Sources};
use crate::topics::asking::Asking;
use crate::topics::offload::Wire;
use crate::topics::{PublishCounters, Tick};
use std::sync::Arc;
use std::time::Instant;

/// What an output made on request publishes with: its publishers and message buffers.
pub trait RequestedWire: Send + 'static {
    /// A source as planned (a camera, a lidar).
    type Spec: Send + Sync + 'static;
    /// What the worker makes of it (a frame, a scan).
    type Item: Clone + Send + Sync + 'static;
    /// Which of its topics are read.
    type Watched: Copy + Default + Send + 'static;

    /// The world's sources of this kind, while their worker runs.
    fn sources<'a>(tick: &Tick<'a>) -> Option<&'a Arc<Sources<Self::Spec, Self::Item>>>;

    fn watched(&self, node: &backend::Node) -> Self::Watched;

    fn any(watched: Self::Watched) -> bool;

    /// Publishes the newest item of `slot` to the topics that were `watched`.
    fn publish(
        &mut self,
        slot: &Slot<Self::Item>,
        watched: Self::Watched,
        counts: &PublishCounters,
    );

    /// Hands its publishers back to the node.
    fn retire(self, node: &mut backend::Node);
}

/// The running output of source `index`.
pub struct OnRequest<W: RequestedWire> {
    index: usize,
    asking: Asking,
    wire: Wire<W>,
    /// Which topics were read when it last looked.
    watched: W::Watched,
}

impl<W: RequestedWire> OnRequest<W> {
    pub fn new(index: usize, rate: f64, wire: W) -> Self {
        Self {
            index,
            asking: Asking::new(rate),
            wire: Wire::new(wire),
            watched: W::Watched::default(),
        }
    }
}

impl<W: RequestedWire> Running for OnRequest<W> {
    fn deadline(&self) -> Option<Instant> {
        self.asking.deadline()
    }

    fn run(&mut self, tick: &Tick, node: &backend::Node) {
        let Some(sources) = W::sources(tick) else {
            return;
        };
        match self.wire.idle() {
            Some(wire) => {
                if let Some(wire) = wire.as_ref() {
                    self.watched = wire.watched(node);
                }
            }
            None => {
                self.asking.hold(tick.now);
                return;
            }
        }
        let index = self.index;
        if self.asking.came(sources.slot(index), tick.now) {
            let (sources, watched) = (sources.clone(), self.watched);
            let counts = tick.publishing.clone();
            self.wire.send(tick.offload, move |wire| {
                wire.publish(sources.slot(index), watched, &counts)
            });
        }
        if self.asking.ask(tick.now, || W::any(self.watched)) {
            sources.request(index);
        }
    }

    fn align(&mut self, epoch: Instant) {
        self.asking.align(epoch);
    }

    fn retire(self: Box<Self>, node: &mut backend::Node) {
        if let Some(wire) = self.wire.take() {
            wire.retire(node);
        }
    }
}
