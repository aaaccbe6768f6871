//! mujoco_bridge: MuJoCo physics on a dedicated real-time thread, bridged to ROS 2 and to the
//! legacy URLab ZMQ protocol.
pub mod census;
pub mod cli;
pub mod config;
pub mod console;
pub mod control;
pub mod error;
pub mod logging;
pub mod model;
pub mod rate_limit;
pub mod record;
pub mod render;
pub mod ros;
pub mod sim;
pub mod stream;
pub mod supervise;
pub mod viewer;
pub mod world;
pub mod zmq;
