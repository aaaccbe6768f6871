//! How the node serves an action's goals, shared by the trajectory and gripper controllers
//! and as ros2_controllers does it: a goal is checked when it arrives and rejected when it
//! is not one the controller can follow (the reason, with control_msgs' error code, goes to
//! the log); one goal at a time per controller; a newer goal preempts the running one, which
//! ends aborted; a cancel is accepted, the controller holds still, and the goal ends
//! canceled.
use super::backend::{ActionType, Goal, GoalRequest};
use super::spawn;
use crate::messages::Action;
use futures::executor::LocalSpawner;
use futures::future::{Either, select};
use futures::{FutureExt, Stream, StreamExt};
use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

type GoalOf<C> = <<C as Controller>::Action as Action>::Goal;
type ResultOf<C> = <<C as Controller>::Action as Action>::Result;

/// How a goal ended by itself.
pub enum End<R> {
    Done(R),
    Failed(R),
}

/// Tells a running goal whether it still owns its controller.
#[derive(Clone)]
pub struct Owner {
    generation: Rc<Cell<u64>>,
    mine: u64,
}

impl Owner {
    pub fn current(&self) -> bool {
        self.generation.get() == self.mine
    }
}

/// Why a goal was rejected when it arrived: control_msgs' error code (by name) and what is
/// wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub code: &'static str,
    pub reason: String,
}

impl Refusal {
    pub fn new(code: &'static str, reason: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
        }
    }
}

/// What a controller does with its goals.
pub trait Controller: 'static {
    type Action: ActionType;
    type Plan: 'static;
    /// Checks a goal when it arrives; a refusal rejects it.
    fn plan(&self, goal: &GoalOf<Self>) -> Result<Self::Plan, Refusal>;
    /// Runs an accepted goal to its end.
    fn execute(
        self: Rc<Self>,
        goal: Goal<Self::Action>,
        plan: Self::Plan,
        owner: Owner,
    ) -> impl Future<Output = End<ResultOf<Self>>> + 'static;
    /// Holds still after a cancel (unless a newer goal owns the controller) and gives the
    /// canceled goal's result.
    fn cancel(&self, owner: &Owner) -> ResultOf<Self>;
}

thread_local! {
    /// The action servers of the node by name, each with the controller it serves now. A
    /// server outlives the robot it was made for (rcl cannot destroy one): a robot spawned
    /// again under the same name takes its server over instead of adding a second.
    static SERVED: std::cell::RefCell<std::collections::HashMap<String, Rc<dyn std::any::Any>>> =
        Default::default();
}

/// The controller an action server serves, while its robot lives.
struct Switch<C> {
    current: std::cell::RefCell<std::rc::Weak<C>>,
    /// A controller of the node itself (no robot keeps it), held here.
    held: std::cell::RefCell<Option<Rc<C>>>,
}

impl<C: Controller> Controller for Switch<C>
where
    ResultOf<C>: Default,
{
    type Action = C::Action;
    type Plan = (Rc<C>, C::Plan);

    fn plan(&self, goal: &GoalOf<Self>) -> Result<Self::Plan, Refusal> {
        let controller = self.current.borrow().upgrade().ok_or_else(|| {
            Refusal::new("INVALID_GOAL", "the robot of this controller was deleted")
        })?;
        let plan = controller.plan(goal)?;
        Ok((controller, plan))
    }

    fn execute(
        self: Rc<Self>,
        goal: Goal<Self::Action>,
        (controller, plan): Self::Plan,
        owner: Owner,
    ) -> impl Future<Output = End<ResultOf<Self>>> + 'static {
        controller.execute(goal, plan, owner)
    }

    fn cancel(&self, owner: &Owner) -> ResultOf<Self> {
        match self.current.borrow().upgrade() {
            Some(controller) => controller.cancel(owner),
            None => Default::default(),
        }
    }
}

/// Serves the action `name` with `controller`, which the robot being started keeps alive
/// (see `SERVED`).
pub fn serve<C: Controller>(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    name: &str,
    controller: Rc<C>,
) -> Result<(), super::ServeError>
where
    ResultOf<C>: Default,
{
    let kept = super::executor::keep_with_robot(controller.clone());
    let held = (!kept).then(|| controller.clone());
    let served = SERVED.with(|s| s.borrow().get(name).cloned());
    if let Some(switch) = served.and_then(|s| s.downcast::<Switch<C>>().ok()) {
        *switch.current.borrow_mut() = Rc::downgrade(&controller);
        *switch.held.borrow_mut() = held;
        return Ok(());
    }
    let switch = Rc::new(Switch {
        current: std::cell::RefCell::new(Rc::downgrade(&controller)),
        held: std::cell::RefCell::new(held),
    });
    let requests =
        node.action_server::<C::Action>(name)
            .map_err(|error| super::ServeError::Action {
                action: name.to_string(),
                error,
            })?;
    super::executor::outside_robot(|| {
        serve_requests(name.to_string(), spawner, requests, switch.clone())
    })
    .map_err(super::ServeError::Executor)?;
    SERVED.with(|s| s.borrow_mut().insert(name.to_string(), switch));
    Ok(())
}

fn serve_requests<C: Controller>(
    name: String,
    spawner: &LocalSpawner,
    mut requests: impl Stream<Item = GoalRequest<C::Action>> + Unpin + 'static,
    controller: Rc<C>,
) -> Result<(), super::Error> {
    let inner = spawner.clone();
    let generation = Rc::new(Cell::new(0u64));
    let refusals = crate::rate_limit::RateLimiter::default();
    spawn(spawner, async move {
        while let Some(request) = requests.next().await {
            let plan = match controller.plan(&request.goal) {
                Ok(plan) => plan,
                Err(refusal) => {
                    refusals.warn(
                        refusal.code,
                        &format!("{name}: goal rejected: {} {}", refusal.code, refusal.reason),
                    );
                    let _ = request.reject();
                    continue;
                }
            };
            let Ok((mut goal, mut cancels)) = request.accept() else {
                continue;
            };
            generation.set(generation.get() + 1);
            let owner = Owner {
                generation: generation.clone(),
                mine: generation.get(),
            };
            let controller = controller.clone();
            let _ = spawn(&inner, async move {
                let run = Box::pin(
                    controller
                        .clone()
                        .execute(goal.clone(), plan, owner.clone()),
                );
                // A cancel that came is taken before the goal's own end: the middleware
                // answers every cancel it queued (r2r logs an ERROR for one left unanswered).
                let ended = match select(cancels.next(), run).await {
                    Either::Left((Some(cancel), _)) => {
                        cancel.accept();
                        let _ = goal.cancel(controller.cancel(&owner));
                        None
                    }
                    Either::Left((None, run)) => Some(run.await),
                    Either::Right((end, _)) => Some(end),
                };
                match ended {
                    Some(End::Done(result)) => {
                        let _ = goal.succeed(result);
                    }
                    Some(End::Failed(result)) => {
                        let _ = goal.abort(result);
                    }
                    None => {}
                }
                // Cancels that came as it ended: the goal is terminal, they are refused.
                while let Some(Some(cancel)) = cancels.next().now_or_never() {
                    cancel.reject();
                }
            });
        }
    })
}
