//! mujoco_bridge: MuJoCo physics on a dedicated real-time thread, bridged to ROS 2 and to the
//! legacy URLab ZMQ protocol. The workspace's crates are its layers (see docs/architecture.md);
//! this one is the node that composes them, and names their modules as its own so that
//! `mujoco_bridge::sim`, `mujoco_bridge::ros` and the rest mean the same in the node, the
//! tests and the benchmarks.
pub use mujoco_bridge_core::{
    census, config, control, controllers, error, logging, model, rate_limit, record, sim,
    supervise, world,
};
/// The ROS 2 interfaces every sink speaks, with their CDR and schema text.
pub use mujoco_bridge_messages as messages;
/// Cameras and lidars off the physics thread.
pub use mujoco_bridge_render as render;
/// The ROS 2 node.
pub use mujoco_bridge_ros as ros;
/// The Foxglove live view and MCAP.
pub use mujoco_bridge_streams as stream;
/// What every sink publishes and reads.
pub use mujoco_bridge_topics as topics;
/// The --viewer window.
pub use mujoco_bridge_viewer as viewer;
/// The legacy URLab ZMQ protocol.
pub use mujoco_bridge_zmq as zmq;

pub mod cli;
pub mod console;
