//! What `simulation_interfaces` tells about entities beyond their state, in the node's
//! private namespace: `get_entity_info` / `set_entity_info` (category, description, tags; what
//! a client sets is kept by name until the entity is deleted), `get_entity_bounds` (the box
//! around an entity's geometry in its root body's frame, as it stands now),
//! `get_named_poses` / `get_named_pose_bounds` (every keyframe, with the pose it gives its
//! robot's root), and the `simulate_steps` action.
use super::simulation::{Entity, entities, find, ok, outcome};
use crate::config::SimMode;
use crate::messages::geometry_msgs::msg::{Point, Pose, Vector3 as RosVector3};
use crate::messages::simulation_interfaces::action::SimulateSteps;
use crate::messages::simulation_interfaces::msg::{
    Bounds, EntityCategory, EntityInfo, NamedPose, Result as SimResult, TagsFilter,
};
use crate::messages::simulation_interfaces::srv::{
    GetEntityBounds, GetEntityInfo, GetNamedPoseBounds, GetNamedPoses, SetEntityInfo,
};
use crate::model::pose;
use crate::sim::{SimHandle, StateSnapshot, WorldGeneration};
use futures::executor::LocalSpawner;
use mujoco_rs::prelude::*;
use nalgebra::{UnitQuaternion, Vector3};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The info a client set, by entity name.
type Infos = Rc<RefCell<HashMap<String, EntityInfo>>>;

fn default_info(world: &WorldGeneration, entity: &Entity) -> EntityInfo {
    let description = match world.robot_index(&entity.name) {
        Some(r) => format!("from {}", world.robots[r].origin),
        None => "a body of the world".to_string(),
    };
    EntityInfo {
        category: EntityCategory {
            category: entity.category,
        },
        description,
        tags: Vec::new(),
    }
}

/// Whether `tags` passes `filter` (an empty filter passes everything).
fn passes(filter: &TagsFilter, tags: &[String]) -> bool {
    const ANY: u8 = 0;
    if filter.tags.is_empty() {
        return true;
    }
    let has = |t: &String| tags.contains(t);
    if filter.filter_mode == ANY {
        filter.tags.iter().any(has)
    } else {
        filter.tags.iter().all(has)
    }
}

/// The world pose of body `body` in `state`.
fn body_pose(state: &StateSnapshot, body: usize) -> (Vector3<f64>, UnitQuaternion<f64>) {
    (
        Vector3::from_column_slice(&state.xpos[3 * body..3 * body + 3]),
        pose::quaternion(&state.xquat_wxyz[4 * body..4 * body + 4]),
    )
}

/// The bodies an entity is made of: a robot's own, or a world body and what hangs from it.
fn bodies_of(world: &WorldGeneration, entity: &Entity) -> Vec<usize> {
    if let Some(r) = world.robot_index(&entity.name) {
        return world.robots[r].bodies.iter().map(|b| b.id).collect();
    }
    let model = &world.model;
    let mut bodies = vec![entity.body];
    for body in entity.body + 1..model.ffi().nbody.max(0) as usize {
        if bodies.contains(&(model.body_parentid()[body] as usize)) {
            bodies.push(body);
        }
    }
    bodies
}

/// The axis-aligned box around the entity's geoms, in its root body's frame (REP-103, as
/// the standard asks), from the current state: the lower corner, then the upper one.
fn entity_bounds(world: &WorldGeneration, state: &StateSnapshot, entity: &Entity) -> Bounds {
    let model = &world.model;
    let (root_p, root_q) = body_pose(state, entity.body);
    let mut lower = Vector3::repeat(f64::INFINITY);
    let mut upper = Vector3::repeat(f64::NEG_INFINITY);
    for body in bodies_of(world, entity) {
        let (p, q) = body_pose(state, body);
        let first = model.body_geomadr()[body];
        if first < 0 {
            continue;
        }
        for g in first as usize..(first + model.body_geomnum()[body]) as usize {
            let aabb = model.geom_aabb()[g];
            let geom_p = p + q * Vector3::from(model.geom_pos()[g]);
            let geom_q = q * pose::quaternion(&model.geom_quat()[g]);
            for corner in 0..8 {
                let sign = |bit: usize| if corner & (1 << bit) == 0 { -1.0 } else { 1.0 };
                let local = Vector3::new(
                    aabb[0] + sign(0) * aabb[3],
                    aabb[1] + sign(1) * aabb[4],
                    aabb[2] + sign(2) * aabb[5],
                );
                let in_root = root_q.inverse() * (geom_p + geom_q * local - root_p);
                lower = lower.inf(&in_root);
                upper = upper.sup(&in_root);
            }
        }
    }
    if !lower.iter().all(|v| v.is_finite()) {
        return Bounds::default();
    }
    let point = |v: Vector3<f64>| RosVector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    };
    Bounds {
        type_: Bounds::TYPE_BOX,
        points: vec![point(upper), point(lower)],
    }
}

/// Every keyframe as a named pose: the pose it gives its robot's free root (the world origin
/// for a fixed robot), tagged `keyframe` and with the robot's name.
fn named_poses(world: &WorldGeneration) -> Vec<NamedPose> {
    let model = &world.model;
    let nq = model.ffi().nq as usize;
    let mut poses = Vec::new();
    for key in 0..model.ffi().nkey.max(0) as usize {
        let Some(name) = model.id_to_name(MjtObjBase::mjOBJ_KEY, key) else {
            continue;
        };
        let owner = world
            .robots
            .iter()
            .find(|r| r.keyframes.iter().any(|k| k.id == key));
        let qpos = &model.key_qpos()[key * nq..(key + 1) * nq];
        let root = owner
            .and_then(|r| r.floating_joint)
            .map(|j| model.jnt_qposadr()[j] as usize)
            .map(|a| (&qpos[a..a + 3], &qpos[a + 3..a + 7]));
        let pose = match root {
            Some((p, q)) => Pose {
                position: Point {
                    x: p[0],
                    y: p[1],
                    z: p[2],
                },
                orientation: crate::topics::convert::quaternion_wxyz(q),
            },
            None => Pose::default(),
        };
        let mut tags = vec!["keyframe".to_string()];
        tags.extend(owner.map(|r| r.name.clone()));
        poses.push(NamedPose {
            name: name.to_string(),
            description: match owner {
                Some(r) => format!("keyframe of robot '{}'", r.name),
                None => "keyframe of the world".into(),
            },
            tags,
            pose,
        });
    }
    poses
}

/// Steps a paused simulation goal by goal, a chunk at a time, with feedback after each.
struct Stepper {
    handle: SimHandle,
}

/// Steps per chunk: feedback and cancels come between chunks.
const CHUNK: u64 = 100;

impl super::goals::Controller for Stepper {
    type Action = SimulateSteps::Action;
    type Plan = u64;

    fn plan(&self, goal: &SimulateSteps::Goal) -> Result<u64, super::goals::Refusal> {
        if self.handle.mode() != SimMode::Paused {
            return Err(super::goals::Refusal::new(
                "RESULT_OPERATION_FAILED",
                "simulate_steps works while paused",
            ));
        }
        if let Some(why) = super::simulation::too_many_steps(&self.handle, goal.steps) {
            return Err(super::goals::Refusal::new("RESULT_OPERATION_FAILED", why));
        }
        Ok(goal.steps)
    }

    async fn execute(
        self: Rc<Self>,
        goal: super::backend::Goal<SimulateSteps::Action>,
        steps: u64,
        owner: super::goals::Owner,
    ) -> super::goals::End<SimulateSteps::Result> {
        let failed = |message: String| {
            super::goals::End::Failed(SimulateSteps::Result {
                result: outcome(SimResult::RESULT_OPERATION_FAILED, message),
            })
        };
        let mut done = 0;
        while done < steps {
            if !owner.current() {
                return failed("preempted by a newer goal".into());
            }
            let chunk = CHUNK.min(steps - done);
            let stepper = self.handle.clone();
            let stepped =
                super::executor::off_the_node("ros-simulate", move || stepper.step(chunk));
            match stepped.await {
                Ok(Ok(_)) => done += chunk,
                Ok(Err(e)) => return failed(e.to_string()),
                Err(super::executor::OffNode::Lost) => {
                    return failed("the step request was lost".into());
                }
                Err(super::executor::OffNode::Thread(e)) => return failed(e.to_string()),
            }
            let _ = goal.publish_feedback(SimulateSteps::Feedback {
                completed_steps: done,
                remaining_steps: steps - done,
            });
        }
        super::goals::End::Done(SimulateSteps::Result { result: ok() })
    }

    fn cancel(&self, _owner: &super::goals::Owner) -> SimulateSteps::Result {
        SimulateSteps::Result {
            result: outcome(SimResult::RESULT_OK, "canceled"),
        }
    }
}

pub fn start(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
) -> Result<(), super::ServeError> {
    serve_entities(node, spawner, handle).map_err(super::ServeError::Middleware)?;
    super::goals::serve(
        node,
        spawner,
        "~/simulate_steps",
        Rc::new(Stepper {
            handle: handle.clone(),
        }),
    )
}

/// The entity services: infos (defaults, or what was set), bounds and named poses.
fn serve_entities(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
) -> Result<(), super::Error> {
    use super::serve;
    let infos: Infos = Default::default();
    let (h, set) = (handle.clone(), infos.clone());
    serve::<GetEntityInfo::Service>(node, spawner, "~/get_entity_info", move |m| {
        get_entity_info(&h, &set, &m)
    })?;
    let h = handle.clone();
    serve::<SetEntityInfo::Service>(node, spawner, "~/set_entity_info", move |m| {
        SetEntityInfo::Response {
            result: set_entity_info(&h, &infos, m),
        }
    })?;
    let h = handle.clone();
    let mut state = handle.latest_state_buffer();
    serve::<GetEntityBounds::Service>(node, spawner, "~/get_entity_bounds", move |m| {
        get_entity_bounds(&h, &m, &mut state)
    })?;
    let h = handle.clone();
    serve::<GetNamedPoses::Service>(node, spawner, "~/get_named_poses", move |m| {
        let poses = named_poses(&h.world())
            .into_iter()
            .filter(|p| passes(&m.tags, &p.tags))
            .collect();
        GetNamedPoses::Response {
            result: ok(),
            poses,
        }
    })?;
    let h = handle.clone();
    serve::<GetNamedPoseBounds::Service>(node, spawner, "~/get_named_pose_bounds", move |m| {
        GetNamedPoseBounds::Response {
            result: named_pose_known(&h, &m.name),
            bounds: Bounds::default(),
        }
    })
}

fn get_entity_info(
    h: &SimHandle,
    set: &Infos,
    m: &GetEntityInfo::Request,
) -> GetEntityInfo::Response {
    let world = h.world();
    match find(&world, &m.entity) {
        Err(result) => GetEntityInfo::Response {
            result,
            info: EntityInfo::default(),
        },
        Ok(entity) => GetEntityInfo::Response {
            result: ok(),
            info: set
                .borrow()
                .get(&entity.name)
                .cloned()
                .unwrap_or_else(|| default_info(&world, &entity)),
        },
    }
}

fn set_entity_info(h: &SimHandle, set: &Infos, m: SetEntityInfo::Request) -> SimResult {
    let world = h.world();
    let entity = match find(&world, &m.entity) {
        Err(result) => return result,
        Ok(entity) => entity,
    };
    let mut infos = set.borrow_mut();
    // Entities deleted since do not keep what was set for them.
    let names: Vec<String> = entities(&world).into_iter().map(|e| e.name).collect();
    infos.retain(|name, _| names.contains(name));
    infos.insert(entity.name, m.info);
    ok()
}

fn get_entity_bounds(
    h: &SimHandle,
    m: &GetEntityBounds::Request,
    state: &mut StateSnapshot,
) -> GetEntityBounds::Response {
    let world = h.world();
    match find(&world, &m.entity) {
        Err(result) => GetEntityBounds::Response {
            result,
            bounds: Bounds::default(),
        },
        Ok(_) if !world.latest_state(state) => GetEntityBounds::Response {
            result: outcome(SimResult::RESULT_OPERATION_FAILED, "no state yet"),
            bounds: Bounds::default(),
        },
        Ok(entity) => GetEntityBounds::Response {
            result: ok(),
            bounds: entity_bounds(&world, state, &entity),
        },
    }
}

/// Whether a named pose is known. A keyframe is an exact pose, not an area: its bounds are
/// unbounded, as TYPE_EMPTY says.
fn named_pose_known(h: &SimHandle, name: &str) -> SimResult {
    if named_poses(&h.world()).iter().any(|p| p.name == name) {
        return ok();
    }
    outcome(
        SimResult::RESULT_NOT_FOUND,
        format!("no named pose '{name}'; get_named_poses lists them"),
    )
}
