//! The ROS 2 node: it publishes the topics planned by `crate::topics` (ROS-free, so every
//! build checks a config the same way) in the interfaces of `crate::messages`, and serves
//! the simulation's services, actions and parameters.
//!
//! The node runs on its own thread and only reads the latest-state snapshot and sends
//! commands through the simulation handle, so nothing it does can stall the physics thread.
//! It is written once, on the shared interface structs (`interfaces`) and a small backend
//! API; the cargo feature picks the backend: `ros` is r2r on rcl (needs a ROS 2 installation
//! to build), `dds` is ros2-client on pure-Rust DDS (needs nothing).
//!
//! QoS follows REP-2003 (see `crate::topics::Qos`).
// The layers below under the names this crate's files use.
#[cfg(any(feature = "ros", feature = "dds"))]
use mujoco_bridge_core::{
    config, control, controllers, logging, model, rate_limit, record, sim, supervise, world,
};
#[cfg(any(feature = "ros", feature = "dds"))]
use mujoco_bridge_messages as messages;
#[cfg(any(feature = "ros", feature = "dds"))]
use mujoco_bridge_topics as topics;
#[cfg(all(feature = "ros", feature = "dds"))]
compile_error!(
    "the features `ros` (r2r) and `dds` (ros2-client) pick the ROS 2 backend: enable one (`--no-default-features --features dds` for DDS)"
);

/// The ROS 2 backend this build has, as the bridge names it when it starts.
#[cfg(feature = "ros")]
pub const BACKEND: Option<&str> = Some("r2r (rcl)");
#[cfg(feature = "dds")]
pub const BACKEND: Option<&str> = Some("ros2-client (RustDDS)");
#[cfg(not(any(feature = "ros", feature = "dds")))]
pub const BACKEND: Option<&str> = None;

#[cfg(feature = "dds")]
mod dds;
#[cfg(feature = "dds")]
use dds as backend;
#[cfg(feature = "ros")]
mod rcl;
#[cfg(feature = "ros")]
use rcl as backend;

#[cfg(any(feature = "ros", feature = "dds"))]
mod publish;

#[cfg(any(feature = "ros", feature = "dds"))]
mod actions;
#[cfg(any(feature = "ros", feature = "dds"))]
mod clock;
#[cfg(any(feature = "ros", feature = "dds"))]
mod commands;
#[cfg(any(feature = "ros", feature = "dds"))]
mod controller_manager;
#[cfg(any(feature = "ros", feature = "dds"))]
mod entities;
#[cfg(any(feature = "ros", feature = "dds"))]
mod executor;
#[cfg(any(feature = "ros", feature = "dds"))]
mod goals;
#[cfg(any(feature = "ros", feature = "dds"))]
mod gripper;
#[cfg(any(feature = "ros", feature = "dds"))]
mod node;
#[cfg(any(feature = "ros", feature = "dds"))]
mod parameters;
#[cfg(any(feature = "ros", feature = "dds"))]
mod participant;
#[cfg(any(feature = "ros", feature = "dds"))]
mod services;
#[cfg(any(feature = "ros", feature = "dds"))]
mod simulation;
#[cfg(any(feature = "ros", feature = "dds"))]
mod slot;
#[cfg(any(feature = "ros", feature = "dds"))]
mod world_services;

/// A robot task's hold on the world it was planned in: the state it reads keeps that
/// world's ids, or it learns that the world moved them (its robot deleted or renumbered)
/// and stops instead of reading another robot's values.
#[cfg(any(feature = "ros", feature = "dds"))]
pub(crate) struct Anchor {
    robot: usize,
    map: crate::model::RobotMap,
    /// The newest generation seen with this robot unchanged.
    generation: std::cell::Cell<u64>,
}

/// The world changed under a task: its robot's ids are not what it planned with.
#[cfg(any(feature = "ros", feature = "dds"))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct WorldMoved;

#[cfg(any(feature = "ros", feature = "dds"))]
impl Anchor {
    pub(crate) fn new(world: &crate::sim::WorldGeneration, robot: usize) -> Self {
        Self {
            robot,
            map: world.robots[robot].clone(),
            generation: std::cell::Cell::new(world.number),
        }
    }

    /// The latest state, in a world where this robot has the ids it was planned with.
    pub(crate) fn read(
        &self,
        handle: &crate::sim::SimHandle,
        out: &mut crate::sim::StateSnapshot,
    ) -> Result<bool, WorldMoved> {
        let world = handle.world();
        if world.number != self.generation.get() {
            if world.robots.get(self.robot) != Some(&self.map) {
                return Err(WorldMoved);
            }
            self.generation.set(world.number);
        }
        Ok(world.latest_state(out))
    }
}
#[cfg(any(feature = "ros", feature = "dds"))]
use executor::{Ticks, spawn};
#[cfg(any(feature = "ros", feature = "dds"))]
pub use node::{Attached, RosNode, teardown_hung};
#[cfg(any(feature = "ros", feature = "dds"))]
pub use publish::RosSink;

#[cfg(any(feature = "ros", feature = "dds"))]
/// Takes a service's requests as they come into a queue of its own, so that a handler that
/// awaits work (a world change, steps) never leaves them in the middleware's queue: r2r's
/// holds ten and drops what does not fit, unanswered.
fn queued<T: 'static>(
    spawner: &futures::executor::LocalSpawner,
    mut requests: impl futures::Stream<Item = T> + Unpin + 'static,
) -> Result<futures::channel::mpsc::UnboundedReceiver<T>, Error> {
    use futures::StreamExt;
    let (queue, queued) = futures::channel::mpsc::unbounded();
    spawn(spawner, async move {
        while let Some(request) = requests.next().await {
            if queue.unbounded_send(request).is_err() {
                break;
            }
        }
    })?;
    Ok(queued)
}

/// Serves `name` with `answer`, a named handler that answers at once: each request's message
/// goes in, its response goes back, in the order they came.
#[cfg(any(feature = "ros", feature = "dds"))]
fn serve<S: backend::ServiceType>(
    node: &mut backend::Node,
    spawner: &futures::executor::LocalSpawner,
    name: &str,
    mut answer: impl FnMut(S::Request) -> S::Response + 'static,
) -> Result<(), Error> {
    use futures::StreamExt;
    let mut requests = node.service::<S>(name)?;
    spawn(spawner, async move {
        while let Some(mut request) = requests.next().await {
            let message = std::mem::take(&mut request.message);
            let _ = request.respond(answer(message));
        }
    })
}

/// `serve` for a handler that awaits work (a world change, steps): meanwhile the requests
/// wait in a queue of their own (`queued`), and they are answered one at a time, in order.
#[cfg(any(feature = "ros", feature = "dds"))]
fn serve_async<S, Answer>(
    node: &mut backend::Node,
    spawner: &futures::executor::LocalSpawner,
    name: &str,
    mut answer: impl FnMut(S::Request) -> Answer + 'static,
) -> Result<(), Error>
where
    S: backend::ServiceType,
    Answer: std::future::Future<Output = S::Response>,
{
    use futures::StreamExt;
    let mut requests = queued(spawner, node.service::<S>(name)?)?;
    spawn(spawner, async move {
        while let Some(mut request) = requests.next().await {
            let message = std::mem::take(&mut request.message);
            let response = answer(message).await;
            let _ = request.respond(response);
        }
    })
}

/// An error of a backend: of its middleware (whose own error types differ between r2r and
/// RustDDS, so they come as their text), of converting a message, or of the node's options.
#[cfg(any(feature = "ros", feature = "dds"))]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Middleware(String),
    #[error(transparent)]
    Cdr(#[from] crate::messages::cdr::CdrError),
    #[error(transparent)]
    Remap(#[from] crate::config::RemapError),
}

#[cfg(any(feature = "ros", feature = "dds"))]
impl From<String> for Error {
    fn from(e: String) -> Self {
        Self::Middleware(e)
    }
}

/// A robot's action servers cannot be set up as configured; the text names the field.
#[cfg(any(feature = "ros", feature = "dds"))]
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{field}: {problem}")]
    Config {
        field: String,
        problem: ConfigProblem,
    },
    #[error("ROS 2 action {action}: {error}")]
    Action { action: String, error: Error },
    #[error("ROS 2 executor: {0}")]
    Executor(Error),
    #[error("ROS 2 command topics: {0}")]
    Middleware(Error),
}

/// What is wrong with a trajectory controller or gripper of the config.
#[cfg(any(feature = "ros", feature = "dds"))]
#[derive(Debug, thiserror::Error)]
pub enum ConfigProblem {
    #[error(transparent)]
    Pattern(#[from] crate::config::PatternError),
    #[error("'{0}' matches no joint held by a position actuator")]
    NoHeldJoint(String),
    #[error("goal_tolerance must be > 0 and goal_time >= 0")]
    GoalLimits,
    #[error("robot '{robot}' has no joint '{joint}'")]
    NoJoint { robot: String, joint: String },
    #[error(transparent)]
    Actuator(#[from] crate::sim::OperationError),
    #[error("actuator '{0}' has no ctrlrange to map onto")]
    NoCtrlRange(String),
    #[error("'{0}' is not a position actuator; give position_range to map onto its ctrlrange")]
    NotPositionActuator(String),
    #[error("must be > 0")]
    NotPositive,
}

/// Why the node did not start.
#[cfg(any(feature = "ros", feature = "dds"))]
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("ROS 2 {what}: {error}")]
    Middleware { what: String, error: Error },
    /// The node was given a `Following` whose plan of the world in effect was taken.
    #[error("the outputs of the world in effect were taken before the node started")]
    NotPlanned,
    #[error("{origin}: {error}")]
    Serve { origin: String, error: ServeError },
    #[error("ROS 2 thread: {0}")]
    Thread(std::io::Error),
    #[error("the ROS 2 thread ended")]
    Ended,
}
