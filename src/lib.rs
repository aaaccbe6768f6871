//! mujoco_bridge: MuJoCo physics on a dedicated real-time thread, bridged to ROS 2 and to the
//! legacy URLab ZMQ protocol. The simulation core is the `mujoco_bridge_core` crate; this
//! crate holds the adapters built on it, and names the core's modules as its own so that
//! `mujoco_bridge::sim` and `crate::sim` mean the same everywhere.
pub use mujoco_bridge_core::{
    census, config, control, controllers, error, logging, model, rate_limit, record, sim,
    supervise, world,
};
/// The ROS 2 interfaces every sink speaks, with their CDR and schema text.
pub use mujoco_bridge_messages as messages;

pub mod cli;
pub mod console;
pub mod render;
pub mod ros;
pub mod stream;
pub mod topics;
pub mod viewer;
pub mod zmq;
