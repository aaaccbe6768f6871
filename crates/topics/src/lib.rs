//! The topics: what every sink (the ROS 2 node, the Foxglove server, MCAP) publishes from the
//! simulation state and reads into it, with no ROS in sight. One kind of output per file:
//! each is planned once from the model and the config as plain data (so a wrong config is
//! refused at load by every build), then filled from the latest `StateSnapshot`, once, by
//! the sampler (`sampler`), which hands the same bytes to every sink.
//!
//! A new kind of output is one file with a struct that implements `Output` and a
//! `plan(&mut Plan)` function that adds one per topic, and its name in `kinds!`.
// The layers below under the names this crate's files use.
use mujoco_bridge_core::{census, config, control, error, model, sim, supervise};
use mujoco_bridge_messages as messages;
use mujoco_bridge_render as render;
pub mod asking;
mod cloud;
pub mod convert;
pub mod encoded;
pub mod every;
#[cfg(test)]
mod fixture;
mod gated;
mod geodesy;
pub mod inputs;
mod lens;
pub mod names;
mod noise;
pub mod offload;
mod qos;
pub mod sampler;
mod scoped;
pub mod segmentation;
mod sensors;
// Planned after every kind: they send the transforms and fixed frames the others planned.
mod tf;
mod tf_static;

pub use clock::CLOCK_TOPIC;
pub use qos::Qos;

use crate::config::Config;
use crate::messages::Message;
use crate::messages::builtin_interfaces::msg::Time;
use crate::messages::geometry_msgs::msg::TransformStamped;
use crate::model::declared_sensors::BroadcasterGates;
use crate::model::sensors::SensorPlan;
use crate::model::{RobotMap, World};
use crate::sim::{SimStats, StateSnapshot};
use mujoco_rs::prelude::MjModel;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// How a kind of output is planned: it adds its outputs (one per topic) to the plan.
type PlanKind = fn(&mut Plan) -> Result<(), PlanError>;

/// Declares the modules of the kinds of output and lists their `plan` functions in order.
macro_rules! kinds {
    ($($kind:ident),* $(,)?) => {
        $(mod $kind;)*
        /// Every kind of output, in planning (and publishing) order; `/tf` and
        /// `/tf_static` follow them.
        const KINDS: &[PlanKind] = &[$($kind::plan),*];
    };
}

kinds![
    clock,
    diagnostics,
    description,
    markers,
    joint_states,
    odometry,
    imu,
    magnetometer,
    gps,
    barometer,
    altimeter,
    wrench,
    range,
    scan,
    contacts,
    contact_sensor,
    camera,
    lidar,
];

/// A camera's and a lidar's topics as planned (the streams render, cast and send them too).
pub use camera::{
    Camera, add_noise as add_camera_noise, fill_depth, fill_depth_points, fill_info, fill_rgb,
};
pub use lidar::{Lidar, add_noise as add_lidar_noise, fill_points, fill_scan};

/// When an output publishes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Schedule {
    /// At `hz`; 0 never. `follows`: the `ros.rates` field whose live changes it takes (None
    /// when the robot's config gives the topic its own rate).
    Rate {
        hz: f64,
        follows: Option<&'static str>,
    },
    /// At `hz` of wall-clock time, paused or not (the run's own figures: `/diagnostics`).
    Wall {
        hz: f64,
        follows: Option<&'static str>,
    },
    /// Once, with the first state (latched topics).
    Once,
}

impl Schedule {
    /// The same rate on the wall clock.
    pub fn on_wall_clock(self) -> Self {
        match self {
            Schedule::Rate { hz, follows } => Schedule::Wall { hz, follows },
            other => other,
        }
    }

    /// Its rate and the `ros.rates` field it follows (None: sent once).
    pub fn rate(&self) -> Option<(f64, Option<&'static str>)> {
        match *self {
            Schedule::Rate { hz, follows } | Schedule::Wall { hz, follows } => Some((hz, follows)),
            Schedule::Once => None,
        }
    }
}

/// Where an output publishes and how often.
#[derive(Clone, Debug, PartialEq)]
pub struct Topic {
    /// Relative to the node's namespace unless it starts with `/`.
    pub name: String,
    pub schedule: Schedule,
    pub qos: Qos,
}

/// What one cycle of the node's loop gives the outputs.
#[derive(Clone, Copy)]
pub struct Tick<'a> {
    pub state: &'a StateSnapshot,
    pub stamp: &'a Time,
    pub now: Instant,
    pub stats: &'a SimStats,
    pub publishing: &'a std::sync::Arc<PublishCounters>,
    /// The cameras of the world the outputs were planned in, when cameras render.
    pub cameras: Option<&'a std::sync::Arc<crate::render::Cameras>>,
    /// Its lidars, when lidars cast.
    pub lidars: Option<&'a std::sync::Arc<crate::render::LidarSources>>,
    /// The thread that fills and publishes camera and lidar messages (None: the node's own).
    pub offload: Option<&'a offload::Offload>,
}

/// A periodic output: a topic and the message it fills from each state.
pub trait Output {
    type Message: Message;

    fn topic(&self) -> &Topic;

    /// Follows the state every cycle, due or not (wheel odometry integrates here).
    fn observe(&mut self, _tick: &Tick) {}

    /// The message for this tick, or None when there is nothing new to send.
    fn fill(&mut self, tick: &Tick) -> Option<&Self::Message>;

    /// How its sensors' readings lag the state (none but a sensor output's).
    fn timing(&self) -> Timing {
        Timing::default()
    }
}

/// How a sensor message lags the moment it measures, in seconds of sim time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    /// MuJoCo's own sensor `delay`: its values in the state are this old already, so the
    /// message is stamped this much before the sample.
    pub delay: f64,
    /// The config's `latency`: the message goes out this much after the moment it measured,
    /// stamped with that moment.
    pub latency: f64,
}

/// Publications of the node, counted whatever their result (shown by `stats` and
/// `/diagnostics`).
#[derive(Debug, Default)]
pub struct PublishCounters {
    pub published: AtomicU64,
    pub failed: AtomicU64,
    /// Samples that a full ring lost before the sampler took them (real time, a slow sink).
    pub samples_lost: AtomicU64,
}

impl PublishCounters {
    pub fn count(&self, ok: bool) {
        let counter = if ok { &self.published } else { &self.failed };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A value two outputs of the node share (odometry's estimate, which tf also sends). Both run
/// on the node's thread, so the lock is never contended: it is there because the plan is
/// made where the world is built and handed to the node with the world.
pub struct Shared<T>(std::sync::Arc<std::sync::Mutex<T>>);

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Self(std::sync::Arc::new(std::sync::Mutex::new(value)))
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        match self.0.lock() {
            Ok(value) => value,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

/// A planned output as a sink takes it.
pub enum TopicOutput {
    /// Filled from the state and serialized on the sink's thread.
    State(Box<dyn encoded::Encoded>),
    /// Frames the renderer makes on request, while someone takes them.
    Camera(Box<Camera>),
    /// Scans the caster makes on request, while someone takes them.
    Lidar(Box<Lidar>),
}

/// A planned output of any kind.
pub trait Planned: Send {
    fn topic(&self) -> &Topic;

    /// `observe`, then `fill` as JSON (unit tests look into messages of any kind).
    #[cfg(test)]
    fn fill_json(&mut self, tick: &Tick) -> Option<serde_json::Value>;

    /// The output as a sink takes it.
    fn into_output(self: Box<Self>) -> TopicOutput;
}

impl<O: Output + Send + 'static> Planned for O {
    fn topic(&self) -> &Topic {
        Output::topic(self)
    }

    #[cfg(test)]
    fn fill_json(&mut self, tick: &Tick) -> Option<serde_json::Value> {
        self.observe(tick);
        self.fill(tick)
            .map(|m| serde_json::to_value(m).expect("messages serialize"))
    }

    fn into_output(self: Box<Self>) -> TopicOutput {
        TopicOutput::State(Box::new(encoded::EncodedOutput::new(*self)))
    }
}

/// A config the outputs cannot be planned from. The text names the config field; the
/// caller puts the config file in front.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    #[error("{field}: robot '{robot}' has no sensor '{name}'")]
    NoSensor {
        field: String,
        robot: String,
        name: String,
    },
    #[error("{field}: sensor '{name}' is not a {wanted} sensor")]
    WrongSensorType {
        field: String,
        name: String,
        wanted: &'static str,
    },
    #[error("{field}: name {wanted}")]
    NothingNamed { field: String, wanted: &'static str },
    #[error("{field}: needs 0 <= min_range < max_range and field_of_view >= 0")]
    RangeLimits { field: String },
    #[error("{field}: {reason}")]
    Pattern {
        field: String,
        reason: crate::config::PatternError,
    },
    #[error("{field}: '{pattern}' matches no rangefinder")]
    NoRangefinder { field: String, pattern: String },
    #[error("{field}: a scan needs at least two rays")]
    TooFewRays { field: String },
    #[error("{field}: {reason}")]
    NotAFan {
        field: String,
        reason: sensors::FanError,
    },
    #[error("{field}: source 'wheels' needs a diff_drive base (control.base)")]
    NoDiffDrive { field: String },
    #[error("{field}: no wheel joint '{joint}'")]
    NoWheelJoint { field: String, joint: String },
    #[error("{field}: robot '{robot}' has no {kind} '{name}'")]
    NoPart {
        field: String,
        robot: String,
        kind: &'static str,
        name: String,
    },
    #[error("{field}: the world has no such name '{name}'")]
    NoClassMember { field: String, name: String },
    #[error(
        "a segmentation camera numbers its instances in 16 bits, and this world would have {most}; use instances: geom or fewer bodies"
    )]
    TooManyInstances { most: usize },
    #[error(
        "{field}: contact sensors need contacts exported, which this world started without (sim.export_contacts)"
    )]
    NoContactsExported { field: String },
}

/// The outputs of one node, planned, with what they share while planning.
pub struct Plan<'a> {
    pub model: &'a MjModel,
    pub robots: &'a [RobotMap],
    /// The world's cameras and lidars: an output's index into them is its slot.
    pub sensors: &'a SensorPlan,
    pub config: &'a Config,
    /// Fixed frames outputs refer to (sensor sites, `world -> odom`), sent on /tf_static.
    pub static_frames: Vec<TransformStamped>,
    /// The odometry estimate of each robot that has one, for tf.
    pub odometry: Vec<Option<Shared<odometry::Estimate>>>,
    /// How many of the physics thread's contacts each state of the world holds.
    pub exported_contacts: usize,
    /// Whether each sensor broadcaster is active.
    gates: &'a BroadcasterGates,
    outputs: Vec<Box<dyn Planned>>,
}

impl<'a> Plan<'a> {
    /// Plans every output of `config` on `model`.
    pub fn new(
        model: &'a MjModel,
        robots: &'a [RobotMap],
        sensors: &'a SensorPlan,
        config: &'a Config,
        gates: &'a BroadcasterGates,
        exported_contacts: usize,
    ) -> Result<Self, PlanError> {
        let mut plan = Self {
            gates,
            model,
            robots,
            sensors,
            config,
            static_frames: Vec::new(),
            odometry: robots.iter().map(|_| None).collect(),
            exported_contacts,
            outputs: Vec::new(),
        };
        for kind in KINDS {
            kind(&mut plan)?;
        }
        tf::plan(&mut plan)?;
        tf_static::plan(&mut plan)?;
        Ok(plan)
    }

    pub fn add(&mut self, output: impl Output + Send + 'static) {
        self.outputs.push(Box::new(output));
    }

    /// Adds an output that sends only while sensor broadcaster `controller` is active, when
    /// it stands for one.
    pub fn add_for<O: Output + Send + 'static>(&mut self, output: O, controller: Option<&str>) {
        match controller.and_then(|name| self.gates.gate(name)) {
            Some(open) => self.add(gated::Gated {
                inner: output,
                open,
            }),
            None => self.add(output),
        }
    }

    /// Adds an output that is not filled from the state (camera frames).
    pub fn add_planned(&mut self, output: Box<dyn Planned>) {
        self.outputs.push(output);
    }

    /// The planned outputs, in order.
    pub fn outputs(&self) -> impl Iterator<Item = &dyn Planned> {
        self.outputs.iter().map(|o| o.as_ref())
    }

    pub fn into_outputs(self) -> Vec<Box<dyn Planned>> {
        self.outputs
    }

    /// Whether robot `robot`'s topics and frames carry its name: yes unless it is the
    /// config's only robot (see `Config::unprefixed_robot`) or alone in the world.
    pub fn prefixed(&self, robot: usize) -> bool {
        robot_prefixed(self.config, self.robots, robot)
    }

    /// The schedule of a topic at `ros.rates.<field>`, or at its own rate from the robot's
    /// config (which a live change of the field leaves alone).
    pub fn rate(&self, field: &'static str, own: Option<f64>) -> Schedule {
        match own {
            Some(hz) => Schedule::Rate { hz, follows: None },
            None => Schedule::Rate {
                hz: self.config.ros.rates.get(field).unwrap_or(0.0),
                follows: Some(field),
            },
        }
    }

    /// A topic of robot `robot`: relative (`joint_states`) when it is alone, under its
    /// namespace (`ros.namespace`, by default its name: `g1/joint_states`) when several
    /// share the world.
    pub fn robot_topic(&self, robot: usize, name: &str) -> String {
        robot_topic(
            self.config,
            &self.robots[robot].name,
            self.prefixed(robot),
            name,
        )
    }

    /// Adds the fixed frame `parent -> child` for /tf_static, once per child.
    pub fn add_static_frame(&mut self, frame: TransformStamped) {
        if !self
            .static_frames
            .iter()
            .any(|t| t.child_frame_id == frame.child_frame_id)
        {
            self.static_frames.push(frame);
        }
    }
}

/// Whether robot `robot`'s topics and frames carry its name (see `Plan::prefixed`).
pub fn robot_prefixed(config: &Config, robots: &[RobotMap], robot: usize) -> bool {
    match &config.unprefixed_robot {
        Some(name) => robots[robot].name != *name,
        None => robots.len() > 1,
    }
}

/// A topic of robot `robot_name` of `config`, under its namespace when `prefixed`.
pub fn robot_topic(config: &Config, robot_name: &str, prefixed: bool, name: &str) -> String {
    // An absolute name is in no robot's namespace.
    if !prefixed || name.starts_with('/') {
        return name.to_string();
    }
    let namespace = config
        .robots
        .iter()
        .find(|r| r.name == robot_name)
        .and_then(|r| r.ros.namespace.as_deref())
        .unwrap_or(robot_name);
    format!("{}/{name}", namespace.trim_matches('/'))
}

/// The outputs of one world, planned where the world is built and taken by the node.
pub struct WorldOutputs(pub Vec<Box<dyn Planned>>);

/// The node's planner (see `SimHandle::follow`): the outputs of each world, planned once,
/// with the world; a world whose outputs cannot be planned is refused with the config field
/// named. Every build follows the world with it, so each refuses the same worlds.
pub fn plan(
    world: &World,
    context: &crate::sim::PlanContext,
) -> crate::error::InputResult<WorldOutputs> {
    let plan = plan_world(world, context.exported_contacts)
        .map_err(|e| crate::error::InputError::new(&world.config.origin, e))?;
    Ok(WorldOutputs(plan.into_outputs()))
}

/// Checks that the outputs of `world` can be planned (for what starts no simulation).
pub fn check(world: &World) -> Result<(), PlanError> {
    let config = &world.config;
    let contacts = config
        .sim
        .export_contacts
        .max(config.contact_sensor_capacity());
    plan_world(world, contacts as usize).map(drop)
}

fn plan_world(world: &World, exported_contacts: usize) -> Result<Plan<'_>, PlanError> {
    Plan::new(
        &world.model,
        &world.robots,
        &world.sensors,
        &world.config,
        &world.broadcaster_gates,
        exported_contacts,
    )
}

#[cfg(test)]
mod tests {
    use super::fixture::{Fixture, topics};

    #[test]
    fn every_kind_is_planned_from_the_model() {
        let f = Fixture::new("");
        let plan = f.plan().unwrap();
        assert_eq!(
            topics(&plan),
            [
                "/clock",
                "/diagnostics",
                "~/markers",
                "joint_states",
                "odom",
                "imu",
                "force_torque",
                "range/down",
                "scan",
                "/tf",
                "/tf_static"
            ],
            "the fan's rays go out in the scan only"
        );
    }

    #[test]
    fn a_listed_kind_replaces_only_what_is_found_of_that_kind() {
        let f = Fixture::new("    ros:\n      range: [{topic: front, sensor: ray_1}]\n");
        let names = topics(&f.plan().unwrap());
        assert!(names.contains(&"front".to_string()), "{names:?}");
        assert!(!names.contains(&"range/down".to_string()), "{names:?}");
        assert!(names.contains(&"imu".to_string()) && names.contains(&"scan".to_string()));
    }

    #[test]
    fn rays_outside_the_listed_scans_keep_their_range_topics() {
        let f = Fixture::new(
            "    ros:\n      laser_scans: [{topic: sides, sensors: [ray_0, ray_2]}]\n",
        );
        let names = topics(&f.plan().unwrap());
        for topic in ["sides", "range/ray_1", "range/down"] {
            assert!(names.contains(&topic.to_string()), "{topic} in {names:?}");
        }
        assert!(!names.contains(&"range/ray_0".to_string()), "{names:?}");
        assert!(!names.contains(&"scan".to_string()), "{names:?}");
    }

    #[test]
    fn a_wrong_sensor_is_refused_with_its_field() {
        let f = Fixture::new("    ros:\n      range: [{topic: r, sensor: nope}]\n");
        let error = f.plan().err().unwrap().to_string();
        assert_eq!(
            error,
            "robots[0].ros.range[0].sensor: robot 'bot' has no sensor 'nope'"
        );
        let f = Fixture::new("    ros:\n      imu: [{topic: i, orientation: imu_gyro}]\n");
        let error = f.plan().err().unwrap().to_string();
        assert_eq!(
            error,
            "robots[0].ros.imu[0].orientation: sensor 'imu_gyro' is not a framequat sensor"
        );
        let f = Fixture::new("    ros:\n      laser_scans: [{topic: s, sensors: [ray_0, down]}]\n");
        let error = f.plan().err().unwrap().to_string();
        assert_eq!(
            error,
            "robots[0].ros.laser_scans[0].sensors: the rays must start at one point of one body"
        );
    }
}
