//! The ROS 2 side: what the node publishes (`outputs`, planned from the model and config
//! with or without ROS, so every build checks a config the same way), the interface structs
//! both backends share, and the node itself.
//!
//! The node runs on its own thread and only reads the latest-state snapshot and sends
//! commands through the simulation handle, so nothing it does can stall the physics thread.
//! It is written once, on the shared interface structs (`interfaces`) and a small backend
//! API; the cargo feature picks the backend: `ros` is r2r on rcl (needs a ROS 2 installation
//! to build), `dds` is ros2-client on pure-Rust DDS (needs nothing).
//!
//! QoS follows REP-2003 (see `qos`).
#[cfg(all(feature = "ros", feature = "dds"))]
compile_error!(
    "the features `ros` (r2r) and `dds` (ros2-client) pick the ROS 2 backend: enable one (`--no-default-features --features dds` for DDS)"
);

#[cfg(feature = "dds")]
mod dds;
#[cfg(feature = "dds")]
use dds as backend;
#[cfg(feature = "ros")]
mod rcl;
#[cfg(feature = "ros")]
use rcl as backend;

pub mod convert;
pub mod interfaces;
pub mod outputs;
mod qos;
pub use qos::Qos;

#[cfg(any(feature = "ros", feature = "dds"))]
mod actions;
#[cfg(any(feature = "ros", feature = "dds"))]
mod commands;
#[cfg(any(feature = "ros", feature = "dds"))]
mod goals;
#[cfg(any(feature = "ros", feature = "dds"))]
mod gripper;
#[cfg(any(feature = "ros", feature = "dds"))]
mod node;
#[cfg(any(feature = "ros", feature = "dds"))]
mod services;
#[cfg(any(feature = "ros", feature = "dds"))]
mod simulation;
#[cfg(any(feature = "ros", feature = "dds"))]
pub use node::RosNode;
#[cfg(any(feature = "ros", feature = "dds"))]
use node::{Ticks, spawn};

/// An error of a backend: of its middleware, or of converting a message.
#[cfg(any(feature = "ros", feature = "dds"))]
#[derive(Debug)]
pub struct Error(String);

#[cfg(any(feature = "ros", feature = "dds"))]
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(any(feature = "ros", feature = "dds"))]
impl From<String> for Error {
    fn from(e: String) -> Self {
        Self(e)
    }
}

#[cfg(any(feature = "ros", feature = "dds"))]
impl From<interfaces::cdr::CdrError> for Error {
    fn from(e: interfaces::cdr::CdrError) -> Self {
        Self(e.to_string())
    }
}
