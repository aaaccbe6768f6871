//! The core of `simulation_interfaces`, the ROS standard for simulators, in the node's
//! private namespace: `get_simulator_features`, `reset_simulation`,
//! `get_simulation_state`, `set_simulation_state`, `step_simulation`, `get_entities`,
//! `get_entities_states`, `get_entity_state` and `set_entity_state`.
//!
//! Entities are the robots (by name; their state is their root body's) and the bodies
//! placed directly in the world that belong to no robot. Poses and velocities are in the
//! `world` frame. Only free bodies (floating-base robots, loose objects) can be placed.
use crate::config::SimMode;
use crate::messages::geometry_msgs::msg::Vector3 as RosVector3;
use crate::messages::geometry_msgs::msg::{Accel, Point, Pose, Twist};
use crate::messages::simulation_interfaces::msg::{
    Bounds, EntityCategory, EntityFilters, EntityState, Result as SimResult, SimulationState,
    SimulatorFeatures,
};
use crate::messages::simulation_interfaces::srv::{
    GetEntities, GetEntitiesStates, GetEntityState, GetSimulationState, GetSimulatorFeatures,
    ResetSimulation, SetEntityState, SetSimulationState, StepSimulation,
};
use crate::messages::std_msgs::msg::Header;
use crate::sim::{OperationError, SimHandle, StateSnapshot, WorldGeneration};
use crate::topics::convert::quaternion_wxyz;
use futures::StreamExt;
use futures::executor::LocalSpawner;
use mujoco_rs::prelude::*;
use nalgebra::Vector3;
use std::cell::Cell;
use std::rc::Rc;

pub(super) fn outcome(code: u8, message: impl Into<String>) -> SimResult {
    SimResult {
        result: code,
        error_message: message.into(),
    }
}

pub(super) fn ok() -> SimResult {
    outcome(SimResult::RESULT_OK, "")
}

fn failed(e: impl std::fmt::Display) -> SimResult {
    outcome(SimResult::RESULT_OPERATION_FAILED, e.to_string())
}

/// Why a world change asked for over the network is not carried out, when the config turns
/// them off (`requests.world_changes: false`).
pub(super) fn changes_refused(handle: &SimHandle) -> Option<String> {
    (!handle.world().config.requests.world_changes).then(|| {
        "world changes are turned off on this node (requests.world_changes: false)".to_string()
    })
}

/// Why a request for `steps` steps is refused: more than `limits.steps_per_request`.
pub(super) fn too_many_steps(handle: &SimHandle, steps: u64) -> Option<String> {
    let limit = handle.world().config.limits.steps_per_request;
    (steps > limit).then(|| format!("{steps} steps, more than limits.steps_per_request ({limit})"))
}

fn from(result: Result<impl Sized, OperationError>) -> SimResult {
    result.map_or_else(failed, |_| ok())
}

/// One entity: a robot or a body of the world that no robot owns.
pub(super) struct Entity {
    pub name: String,
    pub body: usize,
    pub category: u8,
}

/// The entities of one world: its robots (a spawned object without actuators counts as an
/// object), then the bodies placed directly in the world that no robot owns.
pub(super) fn entities(world: &WorldGeneration) -> Vec<Entity> {
    let model = &world.model;
    let object = |body: usize| {
        if model.body_jntnum()[body] > 0 {
            EntityCategory::CATEGORY_DYNAMIC_OBJECT
        } else {
            EntityCategory::CATEGORY_STATIC_OBJECT
        }
    };
    let mut list: Vec<Entity> = world
        .robots
        .iter()
        .filter_map(|r| {
            let body = r.root_body?;
            Some(Entity {
                name: r.name.clone(),
                body,
                category: if r.actuators.is_empty() {
                    object(body)
                } else {
                    EntityCategory::CATEGORY_ROBOT
                },
            })
        })
        .collect();
    let owned = |body: usize| {
        world
            .robots
            .iter()
            .any(|r| r.bodies.iter().any(|b| b.id == body))
    };
    for body in 1..model.ffi().nbody.max(0) as usize {
        if model.body_parentid()[body] != 0 || owned(body) {
            continue;
        }
        let Some(name) = model.id_to_name(MjtObjBase::mjOBJ_BODY, body) else {
            continue;
        };
        list.push(Entity {
            name: name.to_string(),
            body,
            category: object(body),
        });
    }
    list
}

pub(super) fn find(world: &WorldGeneration, name: &str) -> Result<Entity, SimResult> {
    entities(world)
        .into_iter()
        .find(|e| e.name == name)
        .ok_or_else(|| {
            outcome(
                SimResult::RESULT_NOT_FOUND,
                format!("no entity '{name}'; get_entities lists them"),
            )
        })
}

/// The dof address of a body's free joint.
fn free_dofs(model: &MjModel, body: usize) -> Option<usize> {
    let joint = model.body_jntadr()[body];
    (model.body_jntnum()[body] > 0 && model.jnt_type()[joint as usize] == MjtJoint::mjJNT_FREE)
        .then(|| model.jnt_dofadr()[joint as usize] as usize)
}

fn vector(v: Vector3<f64>) -> RosVector3 {
    RosVector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

/// Ground truth of an entity's body from the latest state.
fn entity_state(model: &MjModel, state: &StateSnapshot, body: usize) -> EntityState {
    let p = &state.xpos[3 * body..3 * body + 3];
    let q = &state.xquat_wxyz[4 * body..4 * body + 4];
    let rotation = crate::model::pose::quaternion(q);
    // A free joint's linear dofs are in the world frame, its angular ones in the body's.
    let (twist, acceleration) = match free_dofs(model, body) {
        Some(d) => {
            let split = |v: &[f64]| {
                (
                    Vector3::new(v[d], v[d + 1], v[d + 2]),
                    rotation * Vector3::new(v[d + 3], v[d + 4], v[d + 5]),
                )
            };
            let (v, w) = split(&state.qvel);
            let (a, alpha) = split(&state.qacc);
            (
                Twist {
                    linear: vector(v),
                    angular: vector(w),
                },
                Accel {
                    linear: vector(a),
                    angular: vector(alpha),
                },
            )
        }
        None => (Twist::default(), Accel::default()),
    };
    EntityState {
        header: Header {
            stamp: crate::topics::convert::time(state.time),
            frame_id: "world".into(),
        },
        pose: Pose {
            position: Point {
                x: p[0],
                y: p[1],
                z: p[2],
            },
            orientation: quaternion_wxyz(q),
        },
        twist,
        acceleration,
    }
}

fn set_entity_state(handle: &SimHandle, request: &SetEntityState::Request) -> SimResult {
    let world = handle.world();
    let entity = match find(&world, &request.entity) {
        Ok(e) => e,
        Err(r) => return r,
    };
    let state = &request.state;
    if !["", "world"].contains(&state.header.frame_id.as_str()) {
        return failed(format!(
            "poses are in the 'world' frame, not '{}'",
            state.header.frame_id
        ));
    }
    let (p, q) = (&state.pose.position, &state.pose.orientation);
    let norm = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    if ![p.x, p.y, p.z, q.x, q.y, q.z, q.w]
        .iter()
        .all(|v| v.is_finite())
        || norm < 1e-9
    {
        return outcome(
            SetEntityState::Response::INVALID_POSE,
            "the pose must be finite with a non-zero quaternion",
        );
    }
    let (v, w) = (&state.twist.linear, &state.twist.angular);
    let velocity = [v.x, v.y, v.z, w.x, w.y, w.z];
    if free_dofs(&world.model, entity.body).is_none() {
        return failed(format!(
            "entity '{}' is attached to the world (no free joint): it cannot be placed",
            entity.name
        ));
    }
    from(handle.set_body_state(entity.body, [p.x, p.y, p.z], [q.w, q.x, q.y, q.z], velocity))
}

/// The entities of `world` that pass `filters`, in the world's order; a filter this
/// simulator cannot apply is refused.
fn matching(world: &WorldGeneration, filters: &EntityFilters) -> Result<Vec<Entity>, SimResult> {
    if !filters.tags.tags.is_empty() {
        return Err(outcome(
            SimResult::RESULT_FEATURE_UNSUPPORTED,
            "entities have no tags here",
        ));
    }
    if filters.bounds.type_ != Bounds::TYPE_EMPTY {
        return Err(outcome(
            SimResult::RESULT_FEATURE_UNSUPPORTED,
            "filtering by bounds is not supported",
        ));
    }
    let pattern = regex::Regex::new(&filters.filter).map_err(|e| failed(format!("filter: {e}")))?;
    Ok(entities(world)
        .into_iter()
        .filter(|e| pattern.is_match(&e.name))
        .filter(|e| {
            filters.categories.is_empty()
                || filters.categories.iter().any(|c| c.category == e.category)
        })
        .collect())
}

fn get_entities(handle: &SimHandle, request: &GetEntities::Request) -> GetEntities::Response {
    match matching(&handle.world(), &request.filters) {
        Ok(found) => GetEntities::Response {
            result: ok(),
            entities: found.into_iter().map(|e| e.name).collect(),
        },
        Err(result) => GetEntities::Response {
            result,
            entities: Vec::new(),
        },
    }
}

/// The entities that pass the request's filters with their states, all from one state.
fn get_entities_states(
    handle: &SimHandle,
    request: &GetEntitiesStates::Request,
    snapshot: &mut StateSnapshot,
) -> GetEntitiesStates::Response {
    let world = handle.world();
    let found =
        matching(&world, &request.filters).and_then(|found| match world.latest_state(snapshot) {
            true => Ok(found),
            false => Err(failed("no state yet")),
        });
    match found {
        Ok(found) => GetEntitiesStates::Response {
            result: ok(),
            states: found
                .iter()
                .map(|e| entity_state(&world.model, snapshot, e.body))
                .collect(),
            entities: found.into_iter().map(|e| e.name).collect(),
        },
        Err(result) => GetEntitiesStates::Response {
            result,
            entities: Vec::new(),
            states: Vec::new(),
        },
    }
}

/// Whether the simulation counts as stopped: paused right after a stop (reset), time 0.
fn stopped(handle: &SimHandle, flag: &Cell<bool>, state: &mut StateSnapshot) -> bool {
    let still = flag.get()
        && handle.mode() == SimMode::Paused
        && handle.latest_state(state)
        && state.time == 0.0;
    flag.set(still);
    still
}

fn set_simulation_state(
    handle: &SimHandle,
    play_mode: SimMode,
    flag: &Cell<bool>,
    snapshot: &mut StateSnapshot,
    target: u8,
) -> SimResult {
    let already = || {
        outcome(
            SetSimulationState::Response::ALREADY_IN_TARGET_STATE,
            "already there",
        )
    };
    let paused = handle.mode() == SimMode::Paused;
    let is_stopped = stopped(handle, flag, snapshot);
    match target {
        t if t == SimulationState::STATE_PLAYING => {
            if !paused {
                return already();
            }
            flag.set(false);
            // A bridge started paused plays in realtime.
            let mode = match play_mode {
                SimMode::Paused => SimMode::Realtime,
                other => other,
            };
            from(handle.set_mode(mode))
        }
        t if t == SimulationState::STATE_PAUSED => {
            if is_stopped {
                return outcome(
                    SetSimulationState::Response::INCORRECT_TRANSITION,
                    "the simulation is stopped: play it before pausing",
                );
            }
            if paused {
                return already();
            }
            from(handle.pause())
        }
        t if t == SimulationState::STATE_STOPPED => {
            if is_stopped {
                return already();
            }
            let result = handle.pause().and_then(|_| handle.reset());
            flag.set(result.is_ok());
            from(result)
        }
        other => outcome(
            SimResult::RESULT_FEATURE_UNSUPPORTED,
            format!("state {other} cannot be set here (playing, paused and stopped can)"),
        ),
    }
}

fn features() -> SimulatorFeatures {
    let features = vec![
        SimulatorFeatures::ENTITY_CATEGORIES,
        SimulatorFeatures::ENTITY_STATE_GETTING,
        SimulatorFeatures::ENTITY_STATE_SETTING,
        SimulatorFeatures::SIMULATION_RESET,
        SimulatorFeatures::SIMULATION_STATE_GETTING,
        SimulatorFeatures::SIMULATION_STATE_SETTING,
        SimulatorFeatures::SIMULATION_STATE_PAUSE,
        SimulatorFeatures::STEP_SIMULATION_SINGLE,
        SimulatorFeatures::STEP_SIMULATION_MULTIPLE,
        SimulatorFeatures::SPAWNING,
        SimulatorFeatures::SPAWNING_RESOURCE_STRING,
        SimulatorFeatures::DELETING,
        SimulatorFeatures::SPAWNABLES,
        SimulatorFeatures::SPAWNING_ENTITIES,
        SimulatorFeatures::SIMULATION_RESET_SPAWNED,
        SimulatorFeatures::ENTITY_INFO_GETTING,
        SimulatorFeatures::ENTITY_INFO_SETTING,
        SimulatorFeatures::ENTITY_BOUNDS,
        SimulatorFeatures::NAMED_POSES,
        SimulatorFeatures::POSE_BOUNDS,
        SimulatorFeatures::STEP_SIMULATION_ACTION,
        SimulatorFeatures::WORLD_LOADING,
        SimulatorFeatures::WORLD_RESOURCE_STRING,
        SimulatorFeatures::WORLD_INFO_GETTING,
        SimulatorFeatures::AVAILABLE_WORLDS,
        SimulatorFeatures::WORLD_UNLOADING,
    ];
    SimulatorFeatures {
        features,
        spawn_formats: crate::world::ModelFormat::ALL
            .iter()
            .map(|f| f.name().to_string())
            .collect(),
        custom_info: "mujoco_bridge: MuJoCo 3.17. Reset covers time and state together \
                      (SCOPE_ALL); SCOPE_SPAWNED deletes what was spawned. Entities: robots, \
                      spawned objects and free or fixed world bodies. Worlds: \
                      get_available_worlds, load_world, get_current_world."
            .into(),
    }
}

/// Set when the simulation is stopped (reset and paused, or a world just loaded): what
/// `get_simulation_state` tells apart from paused.
pub(super) type Stopped = Rc<Cell<bool>>;

pub fn start(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    play_mode: SimMode,
    stopped_flag: Stopped,
) -> Result<(), super::Error> {
    use super::{serve, serve_async};
    serve::<GetSimulatorFeatures::Service>(node, spawner, "~/get_simulator_features", |_| {
        GetSimulatorFeatures::Response {
            features: features(),
        }
    })?;
    let h = handle.clone();
    serve_async::<ResetSimulation::Service, _>(node, spawner, "~/reset_simulation", move |m| {
        reset_simulation(h.clone(), m.scope)
    })?;
    let (h, flag) = (handle.clone(), stopped_flag.clone());
    let mut snapshot = handle.latest_state_buffer();
    serve::<GetSimulationState::Service>(node, spawner, "~/get_simulation_state", move |_| {
        GetSimulationState::Response {
            state: SimulationState {
                state: simulation_state(&h, &flag, &mut snapshot),
            },
            result: ok(),
        }
    })?;
    let (h, flag) = (handle.clone(), stopped_flag.clone());
    let mut snapshot = handle.latest_state_buffer();
    serve::<SetSimulationState::Service>(node, spawner, "~/set_simulation_state", move |m| {
        let target = m.state.state;
        let result = set_simulation_state(&h, play_mode, &flag, &mut snapshot, target);
        SetSimulationState::Response { result }
    })?;
    serve_steps(node, spawner, handle, stopped_flag)?;
    let h = handle.clone();
    serve::<GetEntities::Service>(node, spawner, "~/get_entities", move |m| {
        get_entities(&h, &m)
    })?;
    let h = handle.clone();
    let mut snapshot = handle.latest_state_buffer();
    serve::<GetEntitiesStates::Service>(node, spawner, "~/get_entities_states", move |m| {
        get_entities_states(&h, &m, &mut snapshot)
    })?;
    let h = handle.clone();
    let mut snapshot = handle.latest_state_buffer();
    serve::<GetEntityState::Service>(node, spawner, "~/get_entity_state", move |m| {
        get_entity_state(&h, &m, &mut snapshot)
    })?;
    let h = handle.clone();
    serve::<SetEntityState::Service>(node, spawner, "~/set_entity_state", move |m| {
        SetEntityState::Response {
            result: set_entity_state(&h, &m),
        }
    })
}

async fn reset_simulation(h: SimHandle, scope: u8) -> ResetSimulation::Response {
    let scope = match scope {
        ResetSimulation::Request::SCOPE_DEFAULT => ResetSimulation::Request::SCOPE_ALL,
        scope => scope,
    };
    let both = ResetSimulation::Request::SCOPE_TIME | ResetSimulation::Request::SCOPE_STATE;
    if scope & both != 0 && scope & both != both {
        let result = outcome(
            SimResult::RESULT_FEATURE_UNSUPPORTED,
            "time and state reset together: use SCOPE_ALL",
        );
        return ResetSimulation::Response { result };
    }
    let mut result = ok();
    let spawned = scope & ResetSimulation::Request::SCOPE_SPAWNED != 0;
    if spawned && let Some(why) = changes_refused(&h) {
        result = failed(why);
    } else if spawned {
        // De-spawning builds a world: off the executor, like a spawn.
        let worker = h.clone();
        let removed = super::executor::off_the_node("ros-reset", move || {
            crate::world::remove_spawned(&worker).map(drop)
        });
        result = match removed.await {
            Ok(removed) => removed.map_or_else(failed, |_| ok()),
            Err(super::executor::OffNode::Lost) => failed("the reset was lost"),
            Err(super::executor::OffNode::Thread(e)) => failed(e),
        };
    }
    if result.result == SimResult::RESULT_OK && scope & both == both {
        result = from(h.reset());
    }
    ResetSimulation::Response { result }
}

/// The standard's state of the simulation: no world, stopped, paused or playing.
fn simulation_state(h: &SimHandle, flag: &Cell<bool>, snapshot: &mut StateSnapshot) -> u8 {
    if crate::world::is_unloaded(&h.world().config) {
        SimulationState::STATE_NO_WORLD
    } else if stopped(h, flag, snapshot) {
        SimulationState::STATE_STOPPED
    } else if h.mode() == SimMode::Paused {
        SimulationState::STATE_PAUSED
    } else {
        SimulationState::STATE_PLAYING
    }
}

fn get_entity_state(
    h: &SimHandle,
    m: &GetEntityState::Request,
    snapshot: &mut StateSnapshot,
) -> GetEntityState::Response {
    let world = h.world();
    match find(&world, &m.entity) {
        Err(result) => GetEntityState::Response {
            result,
            state: EntityState::default(),
        },
        Ok(_) if !world.latest_state(snapshot) => GetEntityState::Response {
            result: failed("no state yet"),
            state: EntityState::default(),
        },
        Ok(entity) => GetEntityState::Response {
            result: ok(),
            state: entity_state(&world.model, snapshot, entity.body),
        },
    }
}

/// `~/step_simulation`: refused unless paused; many steps take a while, so each request waits
/// for its steps off the executor, on its own (topics and other services go on meanwhile,
/// and a request that comes while steps run is answered at once: one is already running).
fn serve_steps(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    flag: Stopped,
) -> Result<(), super::Error> {
    let mut requests = super::queued(
        spawner,
        node.service::<StepSimulation::Service>("~/step_simulation")?,
    )?;
    let h = handle.clone();
    let each = spawner.clone();
    super::spawn(spawner, async move {
        while let Some(request) = requests.next().await {
            let steps = request.message.steps;
            let refused = if h.mode() != SimMode::Paused {
                Some("step_simulation works while paused".to_string())
            } else {
                too_many_steps(&h, steps)
            };
            if let Some(why) = refused {
                let result = failed(why);
                let _ = request.respond(StepSimulation::Response { result });
                continue;
            }
            flag.set(false);
            let stepper = h.clone();
            let _ = super::spawn(&each, async move {
                let stepped =
                    super::executor::off_the_node("ros-step", move || stepper.step(steps));
                let result = match stepped.await {
                    Ok(r) => from(r),
                    Err(super::executor::OffNode::Lost) => failed("the step request was lost"),
                    Err(super::executor::OffNode::Thread(e)) => failed(e),
                };
                let _ = request.respond(StepSimulation::Response { result });
            });
        }
    })
}
