//! Adapters that follow the world. An adapter (the ROS node's outputs, the streams) asks the
//! simulation to follow it with a planner: the planner runs once per world, where the world
//! is built (off the physics thread), and a world it cannot plan for is refused. When the
//! world takes effect, its plan is pushed to the adapter's `Following`, typed: the adapter
//! receives exactly what its own planner made, with the world it was made of. An adapter
//! holding a `Following` cannot have been left out of the planning.
use super::WorldGeneration;
use crate::error::InputResult;
use crate::model::World;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// What a planner needs to know of a world besides its model and config.
#[derive(Clone, Copy, Debug)]
pub struct PlanContext {
    /// How many contacts each state of the world carries.
    pub exported_contacts: usize,
}

/// The newest world with the adapter's plan of it, until the adapter takes it.
struct Slot<P> {
    fresh: AtomicBool,
    newest: Mutex<Option<(Arc<WorldGeneration>, P)>>,
}

/// The adapter's end: the worlds that took effect, each with its plan.
pub struct Following<P> {
    slot: Arc<Slot<P>>,
}

impl<P> Following<P> {
    /// The world now in effect and the plan of it, once per world change (None when the
    /// world has not changed since the last call). After two quick changes only the newest
    /// comes: an adapter has nothing to do with a world already replaced.
    pub fn changed(&self) -> Option<(Arc<WorldGeneration>, P)> {
        // One atomic read per call: adapters ask on every cycle of their loops.
        if !self.slot.fresh.swap(false, Ordering::Acquire) {
            return None;
        }
        lock(&self.slot.newest).take()
    }
}

/// The simulation's side of a `Following`, with its type erased.
pub(super) trait Follower: Send + Sync {
    /// Plans `world` for the adapter; None once the adapter has dropped its `Following`.
    fn plan(&self, world: &World, context: &PlanContext) -> Option<InputResult<Box<dyn Delivery>>>;
}

/// One adapter's plan of a world being built, handed over when the world takes effect.
pub(super) trait Delivery: Send {
    fn deliver(self: Box<Self>, world: &Arc<WorldGeneration>);
}

struct Typed<P, F> {
    planner: F,
    slot: Weak<Slot<P>>,
}

struct Planned<P> {
    plan: P,
    slot: Weak<Slot<P>>,
}

impl<P, F> Follower for Typed<P, F>
where
    P: Send + 'static,
    F: Fn(&World, &PlanContext) -> InputResult<P> + Send + Sync,
{
    fn plan(&self, world: &World, context: &PlanContext) -> Option<InputResult<Box<dyn Delivery>>> {
        let slot = self.slot.clone();
        if slot.strong_count() == 0 {
            return None;
        }
        Some((self.planner)(world, context).map(|plan| {
            let delivery: Box<dyn Delivery> = Box::new(Planned { plan, slot });
            delivery
        }))
    }
}

impl<P: Send> Delivery for Planned<P> {
    fn deliver(self: Box<Self>, world: &Arc<WorldGeneration>) {
        if let Some(slot) = self.slot.upgrade() {
            *lock(&slot.newest) = Some((world.clone(), self.plan));
            slot.fresh.store(true, Ordering::Release);
        }
    }
}

/// Starts following with `planner`: it plans `now`, the world in effect (an error is
/// returned and nothing follows), whose plan is delivered at once; then `followers` plans
/// every later world with it.
pub(super) fn start<P, F>(
    followers: &Mutex<Vec<Arc<dyn Follower>>>,
    planner: F,
    now: &Arc<WorldGeneration>,
    context: &PlanContext,
) -> InputResult<Following<P>>
where
    P: Send + 'static,
    F: Fn(&World, &PlanContext) -> InputResult<P> + Send + Sync + 'static,
{
    let plan = planner(&now.as_world(), context)?;
    let slot = Arc::new(Slot {
        fresh: AtomicBool::new(true),
        newest: Mutex::new(Some((now.clone(), plan))),
    });
    let follower = Arc::new(Typed {
        planner,
        slot: Arc::downgrade(&slot),
    });
    lock(followers).push(follower);
    Ok(Following { slot })
}

/// Each live follower's plan of `world`, in the order they asked; the followers whose
/// adapters have gone are forgotten.
pub(super) fn plan_all(
    followers: &Mutex<Vec<Arc<dyn Follower>>>,
    world: &World,
    context: &PlanContext,
) -> InputResult<Vec<Box<dyn Delivery>>> {
    let mut followers = lock(followers);
    let mut deliveries = Vec::with_capacity(followers.len());
    let mut gone = Vec::new();
    for (at, follower) in followers.iter().enumerate() {
        match follower.plan(world, context) {
            Some(planned) => deliveries.push(planned?),
            None => gone.push(at),
        }
    }
    for at in gone.into_iter().rev() {
        followers.remove(at);
    }
    Ok(deliveries)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}
