//! The node's executor: its tasks on one thread, the robot each belongs to (a robot's tasks
//! end with it), the wake-up at each cycle of the node's loop, and work sent off the node's
//! thread so that it never waits.
use super::Error;
use crate::topics::PublishCounters;
use futures::executor::LocalSpawner;
use futures::task::LocalSpawnExt;
use std::sync::Arc;

thread_local! {
    /// While the node starts one robot's tasks: their abort handles, so that the robot's
    /// subscriptions, actions and services end with it.
    static COLLECTING: std::cell::RefCell<Option<Collected>> =
        const { std::cell::RefCell::new(None) };
}

/// What one robot's tasks leave with the node: how to end them, and what they keep alive
/// (the controllers behind action servers, which outlive robots; see `goals::serve`).
#[derive(Default)]
pub(super) struct Collected {
    pub(super) aborts: Vec<futures::future::AbortHandle>,
    pub(super) kept: Vec<std::rc::Rc<dyn std::any::Any>>,
}

/// Keeps `value` alive as long as the robot whose tasks are being started; false when no
/// robot's tasks are being started (the caller keeps it then).
pub(super) fn keep_with_robot(value: std::rc::Rc<dyn std::any::Any>) -> bool {
    COLLECTING.with(|c| match c.borrow_mut().as_mut() {
        Some(collected) => {
            collected.kept.push(value);
            true
        }
        None => false,
    })
}

/// Runs `start` without collecting what it spawns (a task that outlives the robot).
pub(super) fn outside_robot<R>(start: impl FnOnce() -> R) -> R {
    let saved = COLLECTING.with(|c| c.borrow_mut().take());
    let result = start();
    COLLECTING.with(|c| *c.borrow_mut() = saved);
    result
}

/// Runs `start` and returns the abort handles of every task it spawned.
pub(super) fn collect_tasks<R>(start: impl FnOnce() -> R) -> (R, Collected) {
    COLLECTING.with(|c| *c.borrow_mut() = Some(Collected::default()));
    let result = start();
    let collected = COLLECTING
        .with(|c| c.borrow_mut().take())
        .unwrap_or_default();
    (result, collected)
}

/// Runs `task` on the node's executor.
pub(super) fn spawn(
    spawner: &LocalSpawner,
    task: impl std::future::Future<Output = ()> + 'static,
) -> Result<(), Error> {
    let (task, abort) = futures::future::abortable(task);
    COLLECTING.with(|c| {
        if let Some(collected) = c.borrow_mut().as_mut() {
            collected.aborts.push(abort);
        }
    });
    spawner
        .spawn_local(async move {
            let _ = task.await;
        })
        .map_err(|e| Error::from(format!("executor: {e}")))
}

/// Why work sent off the node's thread brought no answer.
#[derive(Debug)]
pub(super) enum OffNode {
    /// Its thread did not start.
    Thread(std::io::Error),
    /// Its thread ended without answering.
    Lost,
}

/// Runs `work` on a thread of its own (named `name`) and waits for it without blocking the
/// executor: a world change compiles models and N steps take a while, and topics and other
/// services go on meanwhile.
pub(super) async fn off_the_node<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, OffNode> {
    let (done, finished) = futures::channel::oneshot::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            // At the node thread's niceness (inherited): a user waits for this answer.
            let _ = done.send(work());
        })
        .map_err(OffNode::Thread)?;
    let _awaited = Awaited::new();
    finished.await.map_err(|_| OffNode::Lost)
}

thread_local! {
    /// How many answers of work off the node's thread its tasks await.
    static AWAITED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether a task awaits work off the node's thread: the thread then looks again soon, since
/// r2r's wait does not end when that work does.
pub(super) fn awaiting() -> bool {
    AWAITED.with(|a| a.get() > 0)
}

/// One awaited answer, counted while its task waits (however the wait ends).
struct Awaited;

impl Awaited {
    fn new() -> Self {
        AWAITED.with(|a| a.set(a.get() + 1));
        Self
    }
}

impl Drop for Awaited {
    fn drop(&mut self) {
        AWAITED.with(|a| a.set(a.get().saturating_sub(1)));
    }
}

/// Wakes the executor's tasks that wait for the next cycle of the node's loop (goals that
/// watch the state), and counts what those tasks publish (action feedback).
#[derive(Clone)]
pub(super) struct Ticks {
    waiting: std::rc::Rc<std::cell::RefCell<Vec<std::task::Waker>>>,
    publishing: Arc<PublishCounters>,
}

impl Ticks {
    pub(super) fn new(publishing: Arc<PublishCounters>) -> Self {
        Self {
            waiting: Default::default(),
            publishing,
        }
    }

    /// Counts one publication of a task by its result.
    pub(super) fn count<E>(&self, published: Result<(), E>) {
        self.publishing.count(published.is_ok());
    }

    /// Resolves at the next cycle.
    pub(super) fn next(&self) -> NextTick {
        NextTick {
            ticks: self.clone(),
            waiting: false,
        }
    }

    /// Whether a task waits for the next cycle.
    pub(super) fn waiting(&self) -> bool {
        !self.waiting.borrow().is_empty()
    }

    pub(super) fn wake_all(&self) {
        for waker in self.waiting.borrow_mut().drain(..) {
            waker.wake();
        }
    }
}

pub(super) struct NextTick {
    ticks: Ticks,
    waiting: bool,
}

impl std::future::Future for NextTick {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.waiting {
            return std::task::Poll::Ready(());
        }
        self.waiting = true;
        self.ticks.waiting.borrow_mut().push(cx.waker().clone());
        std::task::Poll::Pending
    }
}
