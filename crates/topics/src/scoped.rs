//! Names of bodies and geoms as Gazebo scopes them (`model::link::collision`), for the
//! entities of contacts and the instances of segmentation: a robot's body or geom is
//! `{robot}::{body}[::{geom}]` with the robot's own names, a geom a robot's file puts in the
//! world body `{robot}::world::{geom}`, another geom of the world body `world::{geom}`, any
//! other `{body}[::{geom}]`; `body_{id}` and `geom_{id}` stand in for
//! names the model lacks.
use crate::model::RobotMap;
use mujoco_rs::prelude::{MjModel, MjtObjBase};

pub fn body_name(model: &MjModel, robots: &[RobotMap], body: usize) -> String {
    let owner = robots
        .iter()
        .find_map(|r| r.bodies.iter().find(|b| b.id == body).map(|b| (r, b)));
    match owner {
        Some((robot, own)) => format!("{}::{}", robot.name, own.name),
        None if body == 0 => "world".into(),
        None => own_name(model, MjtObjBase::mjOBJ_BODY, body, "body"),
    }
}

pub fn geom_name(model: &MjModel, robots: &[RobotMap], geom: usize) -> String {
    let body = model.geom_bodyid()[geom] as usize;
    let name = own_name(model, MjtObjBase::mjOBJ_GEOM, geom, "geom");
    let owner = robots
        .iter()
        .find(|r| r.bodies.iter().any(|b| b.id == body));
    if let Some(robot) = owner {
        let short = name.strip_prefix(&robot.prefix).unwrap_or(&name);
        return format!("{}::{short}", body_name(model, robots, body));
    }
    if body != 0 {
        return format!("{}::{name}", body_name(model, robots, body));
    }
    // A geom of the world body belongs to no robot's bodies: the robot whose file put it
    // there is the one whose prefix it carries (the longest that fits: `a_b_` before `a_`).
    let placed_by = robots
        .iter()
        .filter(|r| !r.prefix.is_empty() && name.starts_with(&r.prefix))
        .max_by_key(|r| r.prefix.len());
    match placed_by {
        Some(robot) => format!("{}::world::{}", robot.name, &name[robot.prefix.len()..]),
        None => format!("world::{name}"),
    }
}

fn own_name(model: &MjModel, kind: MjtObjBase, id: usize, stand_in: &str) -> String {
    match model.id_to_name(kind, id) {
        Some(name) => name.to_string(),
        None => format!("{stand_in}_{id}"),
    }
}
