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
use super::{Output, Plan, PlanError, Tick, Topic, scoped};
use crate::Qos;
use crate::config::ContactSensorConfig;
use crate::convert::vector;
use crate::messages::geometry_msgs::msg::Wrench;
use crate::messages::ros_gz_interfaces::msg::{Contact, Contacts, Entity, JointWrench};
use crate::messages::std_msgs::msg::{Bool, Header};
use crate::model::RobotMap;
use crate::sim::{Collider, ExportedContact};
use mujoco_rs::prelude::{MjModel, MjtObjBase};
use std::sync::Arc;

/// The geoms a sensor watches, and every collider's entity (for the other side of a
/// contact).
#[derive(Clone)]
struct Watched {
    geoms: Vec<usize>,
    entities: Arc<Entities>,
}

/// Every geom and flex as a Gazebo collision entity; a flex's id follows the geoms'.
struct Entities {
    geoms: Vec<Entity>,
    flexes: Vec<Entity>,
}

impl Watched {
    /// `contact` as seen from the watched side: (watched geom, other side, sign), the sign
    /// turning MuJoCo's first-to-second direction into other-to-watched.
    fn sides(&self, contact: &ExportedContact) -> Option<(usize, Collider, f64)> {
        let watched = |side| matches!(side, Collider::Geom(g) if self.geoms.contains(&g));
        match contact.sides {
            [first, Collider::Geom(second)] if watched(Collider::Geom(second)) => {
                Some((second, first, 1.0))
            }
            [Collider::Geom(first), second] if watched(Collider::Geom(first)) => {
                Some((first, second, -1.0))
            }
            _ => None,
        }
    }

    /// The id of `side`'s entity.
    fn id(&self, side: Collider) -> u64 {
        match side {
            Collider::Geom(g) => g as u64,
            Collider::Flex(f) => (self.entities.geoms.len() + f) as u64,
        }
    }

    fn entity(&self, side: Collider) -> Entity {
        let found = match side {
            Collider::Geom(g) => self.entities.geoms.get(g),
            Collider::Flex(f) => self.entities.flexes.get(f),
        };
        found.cloned().unwrap_or_default()
    }
}

pub struct ContactSensor {
    topic: Topic,
    watched: Watched,
    message: Contacts,
    /// Whether it has said that the state had no room for every contact.
    warned: bool,
}

impl ContactSensor {
    /// Says once that contacts were found that the state had no room for (the contacts it
    /// carries are MuJoCo's first).
    fn warn_if_left_out(&mut self, tick: &Tick) {
        let left_out = tick.state.contacts_left_out();
        if left_out > 0 && !self.warned {
            self.warned = true;
            log::warn!(
                "{}: MuJoCo found {} contacts, {left_out} more than this world exports; \
                 those are left out (raise sim.export_contacts)",
                self.topic.name,
                tick.state.contacts_found()
            );
        }
    }
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
            if plan.exported_contacts == 0 {
                return Err(PlanError::NoContactsExported { field });
            }
            warn_if_little_room(plan, &field);
            let entities = entities.get_or_insert_with(|| Arc::new(entities_of(plan.model, plan.robots)));
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
                topic: topic(config.contacts_topic().to_string()),
                watched: watched.clone(),
                message,
                warned: false,
            };
            let flag = ContactFlag {
                topic: topic(format!("{}/in_contact", config.contacts_topic())),
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

/// Says when the world exports fewer contacts than contact sensors are given (a world
/// change added them to a world that started with a short `sim.export_contacts`).
fn warn_if_little_room(plan: &Plan, field: &str) {
    let wanted = crate::config::CONTACT_SENSOR_CAPACITY as usize;
    if plan.exported_contacts < wanted {
        log::warn!(
            "{field}: this world exports {} contacts a step (fixed when it started), fewer \
             than the {wanted} contact sensors are given; restart it to see every contact",
            plan.exported_contacts
        );
    }
}

/// Every geom and flex as a Gazebo collision entity, named as `scoped` names them; a flex
/// `{flex}` (or `flex_{id}`).
fn entities_of(model: &MjModel, robots: &[RobotMap]) -> Entities {
    let ngeom = model.ffi().ngeom.max(0) as usize;
    let geoms = (0..ngeom).map(|geom| collision(geom, scoped::geom_name(model, robots, geom)));
    let nflex = model.ffi().nflex.max(0) as usize;
    let flexes = (0..nflex).map(|flex| {
        let name = model.id_to_name(MjtObjBase::mjOBJ_FLEX, flex);
        let name = name.map_or_else(|| format!("flex_{flex}"), str::to_string);
        collision(ngeom + flex, name)
    });
    Entities {
        geoms: geoms.collect(),
        flexes: flexes.collect(),
    }
}

fn collision(id: usize, name: String) -> Entity {
    Entity {
        id: id as u64,
        name,
        type_: Entity::COLLISION,
    }
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
        self.warn_if_left_out(tick);
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        m.contacts.clear();
        for contact in tick.state.contacts() {
            let Some((watched, other, sign)) = self.watched.sides(&contact) else {
                continue;
            };
            let watched = Collider::Geom(watched);
            let ids = (self.watched.id(watched), self.watched.id(other));
            let pair = m.contacts.iter().position(|c| (c.collision1.id, c.collision2.id) == ids);
            let at = pair.unwrap_or_else(|| {
                m.contacts.push(Contact {
                    collision1: self.watched.entity(watched),
                    collision2: self.watched.entity(other),
                    ..Default::default()
                });
                m.contacts.len() - 1
            });
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
        // A nanosecond's grace: sim times are sums of steps and their differences round.
        if time - since >= self.seconds - 1e-9 {
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
        // Sim time as the physics thread sums it: from the first to the third step of 0.01 s
        // is a hair under 0.02 s, and the flag is on there all the same.
        let mut flag = Debounce::new(5.0, 0.02);
        let times: Vec<f64> = (1..=3).scan(0.0, |t, _| Some({ *t += 0.01; *t })).collect();
        assert!(times[2] - times[0] < 0.02);
        let seen: Vec<bool> = times.iter().map(|t| flag.update(9.0, *t)).collect();
        assert_eq!(seen, [false, false, true]);
        let mut flag = Debounce::new(5.0, 0.0);
        assert!(flag.update(5.0, 0.0) && !flag.update(4.9, 0.001));
    }
}
