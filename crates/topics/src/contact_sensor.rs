//! Each robot's `contacts:`: the contacts of one geom, or of a body's geoms, from MuJoCo's
//! contact list as the state carries it, in Gazebo's contact sensor's message
//! (ros_gz_interfaces/Contacts on `{name}`, in the world frame), and a flag for a bumper or
//! a foot (std_msgs/Bool on `{name}/in_contact`).
//!
//! Each Contact is one pair of geoms with all their contact points. `collision1` is the
//! watched geom; a normal points from `collision2` to `collision1` (the way the contact
//! pushes the watched geom); a depth is the penetration (MuJoCo's distance, negated: a
//! contact within the geoms' margin has a negative depth); `body_1_wrench` is the force
//! and torque on `collision1` at the contact point and `body_2_wrench` their opposite.
use super::{Output, Plan, PlanError, Tick, Topic};
use crate::Qos;
use crate::config::ContactSensorConfig;
use crate::convert::vector;
use crate::messages::geometry_msgs::msg::Wrench;
use crate::messages::ros_gz_interfaces::msg::{Contact, Contacts, Entity, JointWrench};
use crate::messages::std_msgs::msg::{Bool, Header};
use crate::model::RobotMap;
use crate::sim::ExportedContact;
use mujoco_rs::prelude::{MjModel, MjtObjBase};
use std::sync::Arc;

/// The geoms a sensor watches, and every geom's entity (for the other side of a contact).
#[derive(Clone)]
struct Watched {
    geoms: Vec<usize>,
    entities: Arc<Vec<Entity>>,
}

impl Watched {
    /// `contact` as seen from the watched side: (watched geom, other geom, sign), the sign
    /// turning MuJoCo's first-to-second direction into other-to-watched.
    fn sides(&self, contact: &ExportedContact) -> Option<(usize, usize, f64)> {
        let [first, second] = contact.geoms;
        if self.geoms.contains(&second) {
            Some((second, first, 1.0))
        } else if self.geoms.contains(&first) {
            Some((first, second, -1.0))
        } else {
            None
        }
    }

    fn entity(&self, geom: usize) -> Entity {
        self.entities.get(geom).cloned().unwrap_or_else(|| Entity {
            name: "flex".into(),
            type_: Entity::COLLISION,
            ..Default::default()
        })
    }
}

pub struct ContactSensor {
    topic: Topic,
    watched: Watched,
    message: Contacts,
}

pub struct ContactFlag {
    topic: Topic,
    watched: Watched,
    debounce: Debounce,
    message: Bool,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    let mut entities = None;
    for robot in 0..plan.robots.len() {
        for (k, config) in plan.config.robots[robot].contacts.iter().enumerate() {
            let field = format!("robots[{robot}].contacts[{k}]");
            if !plan.contacts_exported {
                return Err(PlanError::NoContactsExported { field });
            }
            let entities = entities.get_or_insert_with(|| Arc::new(geom_entities(plan.model, plan.robots)));
            let watched = Watched {
                geoms: watched_geoms(plan, robot, config, &field)?,
                entities: entities.clone(),
            };
            let topic = |name: String| Topic {
                name: plan.robot_topic(robot, &name),
                schedule: plan.rate("contact", Some(config.rate)),
                qos: Qos::STATE,
            };
            let mut message = Contacts::default();
            message.header.frame_id = "world".into();
            let sensor = ContactSensor {
                topic: topic(config.name.clone()),
                watched: watched.clone(),
                message,
            };
            let flag = ContactFlag {
                topic: topic(format!("{}/in_contact", config.name)),
                watched,
                debounce: Debounce::new(config.threshold, config.debounce),
                message: Bool::default(),
            };
            plan.add(sensor);
            plan.add(flag);
        }
    }
    Ok(())
}

/// Every geom as a Gazebo collision entity, named as Gazebo scopes names: a robot's geom
/// `{robot}::{body}::{geom}` with the robot's own names (`world` for a geom its model puts
/// in the world body), any other `{body}::{geom}`, with `geom_{id}` for an unnamed geom; its
/// id the geom's.
fn geom_entities(model: &MjModel, robots: &[RobotMap]) -> Vec<Entity> {
    let count = model.ffi().ngeom.max(0) as usize;
    (0..count)
        .map(|geom| {
            let body = model.geom_bodyid()[geom] as usize;
            let body = model.id_to_name(MjtObjBase::mjOBJ_BODY, body).unwrap_or("world");
            let unnamed = format!("geom_{geom}");
            let name = model.id_to_name(MjtObjBase::mjOBJ_GEOM, geom).unwrap_or(&unnamed);
            let robot = robots
                .iter()
                .find(|r| !r.prefix.is_empty() && name.starts_with(&r.prefix));
            let scoped = match robot {
                Some(r) => {
                    let short = |n: &str| n.strip_prefix(&r.prefix).unwrap_or(n).to_string();
                    format!("{}::{}::{}", r.name, short(body), short(name))
                }
                None => format!("{body}::{name}"),
            };
            Entity {
                id: geom as u64,
                name: scoped,
                type_: Entity::COLLISION,
            }
        })
        .collect()
}

/// The geoms `config` names: its geom, or every geom of its body.
fn watched_geoms(
    plan: &Plan,
    robot: usize,
    config: &ContactSensorConfig,
    field: &str,
) -> Result<Vec<usize>, PlanError> {
    let (model, map) = (plan.model, &plan.robots[robot]);
    let missing = |kind, name: &str| PlanError::NoPart {
        field: format!("{field}.{kind}"),
        robot: map.name.clone(),
        kind,
        name: name.to_string(),
    };
    if let Some(geom) = &config.geom {
        let full = format!("{}{geom}", map.prefix);
        let id = model.name_to_id(MjtObjBase::mjOBJ_GEOM, &full);
        return id.map(|id| vec![id]).ok_or_else(|| missing("geom", geom));
    }
    let name = config.body.as_deref().unwrap_or_default();
    let body = map.bodies.iter().find(|b| b.name == name);
    let body = body.ok_or_else(|| missing("body", name))?.id;
    let geoms = model.geom_bodyid().iter().enumerate();
    Ok(geoms
        .filter(|(_, b)| **b as usize == body)
        .map(|(geom, _)| geom)
        .collect())
}

impl Output for ContactSensor {
    type Message = Contacts;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&Contacts> {
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        m.contacts.clear();
        for contact in tick.state.contacts() {
            let Some((watched, other, sign)) = self.watched.sides(&contact) else {
                continue;
            };
            let at = match m.contacts.iter().position(|c| {
                c.collision1.id == watched as u64 && c.collision2.id == other as u64
            }) {
                Some(at) => at,
                None => {
                    m.contacts.push(Contact {
                        collision1: self.watched.entity(watched),
                        collision2: self.watched.entity(other),
                        ..Default::default()
                    });
                    m.contacts.len() - 1
                }
            };
            let header = m.header.clone();
            add_point(&mut m.contacts[at], &contact, sign, header);
        }
        Some(m)
    }
}

/// Adds `contact`'s point to `pair`, its vectors turned by `sign` toward the watched geom.
fn add_point(pair: &mut Contact, contact: &ExportedContact, sign: f64, header: Header) {
    let scaled = |v: [f64; 3], s: f64| vector(&v.map(|x| x * s));
    let force = contact.to_world([contact.force[0], contact.force[1], contact.force[2]]);
    let torque = contact.to_world([contact.force[3], contact.force[4], contact.force[5]]);
    let wrench = |s: f64| Wrench {
        force: scaled(force, s),
        torque: scaled(torque, s),
    };
    pair.positions.push(vector(&contact.position));
    pair.normals.push(scaled(contact.normal(), sign));
    pair.depths.push(-contact.distance);
    pair.wrenches.push(JointWrench {
        header,
        body_1_name: name(&pair.collision1),
        body_1_id: id(&pair.collision1),
        body_2_name: name(&pair.collision2),
        body_2_id: id(&pair.collision2),
        body_1_wrench: wrench(sign),
        body_2_wrench: wrench(-sign),
    });
}

fn name(entity: &Entity) -> crate::messages::std_msgs::msg::String {
    crate::messages::std_msgs::msg::String {
        data: entity.name.clone(),
    }
}

fn id(entity: &Entity) -> crate::messages::std_msgs::msg::UInt32 {
    crate::messages::std_msgs::msg::UInt32 {
        data: entity.id as u32,
    }
}

impl Output for ContactFlag {
    type Message = Bool;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&Bool> {
        let normal_force: f64 = tick
            .state
            .contacts()
            .filter(|c| self.watched.sides(c).is_some())
            .map(|c| c.force[0])
            .sum();
        self.message.data = self.debounce.update(normal_force, tick.state.time);
        Some(&self.message)
    }
}

/// A flag that follows `force >= threshold` once it has held for `seconds` of sim time.
struct Debounce {
    threshold: f64,
    seconds: f64,
    on: bool,
    /// When the force first crossed to the other side of the flag, while it stays there.
    crossed_at: Option<f64>,
}

impl Debounce {
    fn new(threshold: f64, seconds: f64) -> Self {
        Self {
            threshold,
            seconds,
            on: false,
            crossed_at: None,
        }
    }

    fn update(&mut self, force: f64, time: f64) -> bool {
        let wanted = force >= self.threshold;
        if wanted == self.on {
            self.crossed_at = None;
            return self.on;
        }
        // Sim time set back (a reset) starts the wait again.
        let since = match self.crossed_at {
            Some(t) if t <= time => t,
            _ => time,
        };
        if time - since >= self.seconds {
            self.on = wanted;
            self.crossed_at = None;
        } else {
            self.crossed_at = Some(since);
        }
        self.on
    }
}

#[cfg(test)]
mod tests {
    use super::Debounce;

    #[test]
    fn the_flag_follows_the_force_once_it_has_held_for_the_debounce() {
        let mut flag = Debounce::new(5.0, 0.02);
        let forces = [(0.00, 9.0), (0.01, 9.0), (0.02, 9.0), (0.03, 1.0), (0.04, 9.0)];
        let seen: Vec<bool> = forces.iter().map(|(t, f)| flag.update(*f, *t)).collect();
        // On at 0.02 (held 0.02 s); the dip at 0.03 is shorter than the debounce.
        assert_eq!(seen, [false, false, true, true, true]);
        let mut flag = Debounce::new(5.0, 0.0);
        assert!(flag.update(5.0, 0.0) && !flag.update(4.9, 0.001));
    }
}
