//! ROS 2 node benchmark (Unitree Go1). Prints, from one run:
//! (a) physics steps/s in fast mode with every publisher at 1 kHz (Go1's publishers:
//!     /clock, joint_states, /tf of every body, odom, /diagnostics) and an rclpy
//!     subscriber attached to all of them, divided by a raw `mj_step` loop in the same
//!     process (alternating rounds of equal length); and the rate each topic reached the
//!     subscriber at;
//! (b) command -> state latency seen by an rclpy client (physics at 1 kHz realtime,
//!     joint_states at 1 kHz) beside an rclpy -> rclpy echo, p50 and p99;
//! (c) the share of 1 kHz joint_states an rclpy subscriber receives over 30 s;
//! (d) 16 Go1 in one world, every publisher on: the bridge's overhead on the physics thread
//!     as a share of MuJoCo's own step time.
//! Beside each throughput figure: CPU per 1000 published messages of the node's threads
//! other than physics, and of the rclpy subscriber, so that a busy machine hides no cost.
//!
//! Built once per ROS 2 backend (r2r, or ros2-client with `--features dds`). Given the other
//! build in `BENCH_PEER`, it runs each part for itself and then the same part in the peer,
//! so both backends are measured side by side in one run on the same machine state.
//! Run: bash scripts/bench-ros.sh   (private network namespace, LOCALHOST discovery)
#[cfg(any(feature = "ros", feature = "dds"))]
#[path = "ros/node.rs"]
mod node;

#[cfg(any(feature = "ros", feature = "dds"))]
fn main() {
    node::main();
}

#[cfg(not(any(feature = "ros", feature = "dds")))]
fn main() {
    eprintln!("the ROS 2 benchmark needs a backend: the feature ros (default) or dds");
}
