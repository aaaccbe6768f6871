//! The YAML schema, one file per section. Every struct denies unknown fields, so a typo is
//! an error that names it.
mod camera;
mod classes;
mod contact_sensor;
mod control;
mod lidar;
mod limits;
mod noise;
mod point_sensor;
mod robot;
mod ros;
mod stream;
mod world;
mod zmq;

pub use camera::*;
pub use classes::{MAX_CLASS_ID, SemanticClass};
pub use classes::{labels as class_labels, problem as classes_problem};
pub use contact_sensor::*;
pub use control::*;
pub use lidar::*;
pub use limits::*;
pub use noise::*;
pub use point_sensor::*;
pub use robot::*;
pub use ros::*;
pub use stream::*;
pub use world::*;
pub use zmq::*;

use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub world: WorldConfig,
    #[serde(default)]
    pub sim: SimConfig,
    #[serde(default)]
    pub robots: Vec<RobotConfig>,
    /// The legacy URLab ZMQ protocol.
    #[serde(default)]
    pub zmq: ZmqConfig,
    /// The ROS 2 node: publisher rates and the wrench topic.
    #[serde(default)]
    pub ros: RosConfig,
    /// Bounds on what requests bring and on what one world holds.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// What requests may ask for (world changes, files).
    #[serde(default)]
    pub requests: RequestsConfig,
    /// The render and ray-casting threads.
    #[serde(default)]
    pub render: RenderConfig,
    /// The Foxglove live view.
    #[serde(default)]
    pub foxglove: FoxgloveConfig,
    /// MCAP recording.
    #[serde(default)]
    pub record: RecordConfig,
    /// Where the config came from (file path or `<embedded>/...`); set by the loader.
    #[serde(skip)]
    pub origin: String,
    /// Folder that relative paths in the config resolve against; set by the loader.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The robot whose topics and frames carry no robot prefix: the only robot of a config
    /// that has one (set by the loader). Robots spawned beside it get their name as prefix,
    /// so its topics stay where they were. Empty: every robot carries its name (a config of
    /// several). None (a config not made by the loader): prefixed when several.
    #[serde(skip)]
    pub unprefixed_robot: Option<String>,
    /// The robots spawned into the world since it was loaded (what `SCOPE_SPAWNED` deletes).
    #[serde(skip)]
    pub spawned: Vec<String>,
}

/// serde's default for flags that are on unless turned off.
fn yes() -> bool {
    true
}
