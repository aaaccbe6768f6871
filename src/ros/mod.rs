//! The ROS 2 node (r2r): publishes the simulation to ROS 2 and takes commands from it.
use crate::sim::SimHandle;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct RosNode {
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
}

impl RosNode {
    pub fn start(handle: SimHandle, ros_args: Vec<String>) -> Result<Self, String> {
        let ctx = r2r::Context::create().map_err(|e| format!("ROS 2 context: {e}"))?;
        let _ = ros_args;
        let mut node =
            r2r::Node::create(ctx, "mujoco_bridge", "").map_err(|e| format!("ROS 2 node: {e}"))?;
        let clock = node
            .create_publisher::<r2r::rosgraph_msgs::msg::Clock>(
                "/clock",
                r2r::QosProfile::default(),
            )
            .map_err(|e| format!("/clock: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("ros".into())
            .spawn(move || {
                while !stopping.load(Ordering::Relaxed) {
                    node.spin_once(Duration::from_millis(10));
                    let t = handle.stats().sim_time;
                    let msg = r2r::rosgraph_msgs::msg::Clock {
                        clock: r2r::builtin_interfaces::msg::Time {
                            sec: t.floor() as i32,
                            nanosec: ((t - t.floor()) * 1e9) as u32,
                        },
                    };
                    let _ = clock.publish(&msg);
                }
            })
            .map_err(|e| format!("ROS 2 thread: {e}"))?;
        Ok(Self {
            thread: Some(thread),
            stop,
        })
    }
}

impl Drop for RosNode {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
