//! The ROS 2 node on r2r (rcl): maps the simulation to ROS 2 topics and back. It runs on
//! its own thread and only reads the latest-state snapshot and sends commands through the
//! simulation handle, so nothing it does can stall the physics thread. `--ros-args`
//! (remaps, namespace, parameters) reach rcl through r2r's context.
mod commands;
mod convert;
mod services;

use crate::config::ControlSource;
use crate::sim::SimHandle;
use futures::StreamExt;
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use r2r::QosProfile;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the state publishers run (joint_states, tf; /clock follows every new step).
const STATE_PERIOD: Duration = Duration::from_millis(10);
/// How often the live figures go out on /diagnostics.
const DIAGNOSTICS_PERIOD: Duration = Duration::from_secs(1);

pub struct RosNode {
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
}

/// Topic names of one robot: relative (`joint_states`) when alone, under the robot's name
/// (`g1/joint_states`) when several share the world; the node's namespace applies on top.
fn topic(robots: usize, robot: &str, name: &str) -> String {
    if robots == 1 {
        name.to_string()
    } else {
        format!("{robot}/{name}")
    }
}

impl RosNode {
    /// Starts the node on its own thread; returns once it is up (or why it is not).
    pub fn start(handle: SimHandle) -> Result<Self, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let (ready, started) = std::sync::mpsc::channel();
        // r2r's executor types are not Send: the node is made on the thread that spins it.
        let thread = std::thread::Builder::new()
            .name("ros".into())
            .spawn(move || {
                let node = match Node::create(handle) {
                    Ok(node) => {
                        let _ = ready.send(Ok(()));
                        node
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                node.run(&stopping);
            })
            .map_err(|e| format!("ROS 2 thread: {e}"))?;
        started
            .recv()
            .map_err(|_| "the ROS 2 thread ended".to_string())??;
        Ok(Self {
            thread: Some(thread),
            stop,
        })
    }
}

struct Node {
    node: r2r::Node,
    pool: LocalPool,
    handle: SimHandle,
    clock: r2r::Publisher<r2r::rosgraph_msgs::msg::Clock>,
    joint_states: Vec<(
        r2r::Publisher<r2r::sensor_msgs::msg::JointState>,
        convert::JointStateMsg,
    )>,
    /// Kept alive for late subscribers (transient local).
    _descriptions: Vec<r2r::Publisher<r2r::std_msgs::msg::String>>,
    diagnostics: r2r::Publisher<r2r::diagnostic_msgs::msg::DiagnosticArray>,
    tf: r2r::Publisher<r2r::tf2_msgs::msg::TFMessage>,
    tf_static: r2r::Publisher<r2r::tf2_msgs::msg::TFMessage>,
    transforms: Vec<convert::Transforms>,
}

impl Node {
    fn create(handle: SimHandle) -> Result<Self, String> {
        let err = |what: &str, e: r2r::Error| format!("ROS 2 {what}: {e}");
        let ctx = r2r::Context::create().map_err(|e| err("context", e))?;
        let mut node = r2r::Node::create(ctx, "mujoco_bridge", "").map_err(|e| err("node", e))?;
        let clock = node
            .create_publisher::<r2r::rosgraph_msgs::msg::Clock>("/clock", QosProfile::default())
            .map_err(|e| err("/clock", e))?;
        let robots = handle.robots().to_vec();
        let count = robots.len();
        let mut joint_states = Vec::new();
        let mut descriptions = Vec::new();
        let tf = node
            .create_publisher::<r2r::tf2_msgs::msg::TFMessage>(
                "/tf",
                QosProfile::default().reliable(),
            )
            .map_err(|e| err("/tf", e))?;
        let diagnostics = node
            .create_publisher::<r2r::diagnostic_msgs::msg::DiagnosticArray>(
                "/diagnostics",
                QosProfile::default(),
            )
            .map_err(|e| err("/diagnostics", e))?;
        let tf_static = node
            .create_publisher::<r2r::tf2_msgs::msg::TFMessage>(
                "/tf_static",
                QosProfile::default()
                    .reliable()
                    .transient_local()
                    .keep_last(1),
            )
            .map_err(|e| err("/tf_static", e))?;
        let transforms: Vec<_> = robots
            .iter()
            .map(|r| convert::Transforms::new(handle.model(), r, count > 1))
            .collect();
        let pool = LocalPool::new();
        let spawner = pool.spawner();
        for (index, robot) in robots.iter().enumerate() {
            let publisher = node
                .create_publisher::<r2r::sensor_msgs::msg::JointState>(
                    &topic(count, &robot.name, "joint_states"),
                    QosProfile::default(),
                )
                .map_err(|e| err("joint_states", e))?;
            joint_states.push((
                publisher,
                convert::JointStateMsg::new(handle.model(), robot),
            ));
            if let Some(urdf) = &robot.urdf {
                // Transient local: a late robot_state_publisher or RViz still gets it.
                let description = node
                    .create_publisher::<r2r::std_msgs::msg::String>(
                        &topic(count, &robot.name, "robot_description"),
                        QosProfile::default()
                            .reliable()
                            .transient_local()
                            .keep_last(1),
                    )
                    .map_err(|e| err("robot_description", e))?;
                description
                    .publish(&r2r::std_msgs::msg::String { data: urdf.clone() })
                    .map_err(|e| err("robot_description", e))?;
                descriptions.push(description);
            }
            let robot_topic = |name: &str| topic(count, &robot.name, name);
            commands::start(&mut node, &spawner, &handle, index, &robot_topic)
                .map_err(|e| err("commands", e))?;
            let mut twists = node
                .subscribe::<r2r::geometry_msgs::msg::Twist>(
                    &topic(count, &robot.name, "cmd_vel"),
                    QosProfile::default(),
                )
                .map_err(|e| err("cmd_vel", e))?;
            let commands = handle.clone();
            spawner
                .spawn_local(async move {
                    while let Some(t) = twists.next().await {
                        // Refusals (NaN) are counted and logged by the handle.
                        let _ = commands.command_twist(
                            ControlSource::Ros,
                            index,
                            t.linear.x,
                            t.linear.y,
                            t.angular.z,
                        );
                    }
                })
                .map_err(|e| format!("ROS 2 executor: {e}"))?;
        }
        services::start(&mut node, &spawner, &handle).map_err(|e| err("services", e))?;
        Ok(Self {
            node,
            pool,
            handle,
            clock,
            joint_states,
            _descriptions: descriptions,
            diagnostics,
            tf,
            tf_static,
            transforms,
        })
    }

    fn run(mut self, stop: &AtomicBool) {
        let mut state = self.handle.new_snapshot();
        let mut last_step = u64::MAX;
        let mut static_sent = false;
        let mut next_diagnostics = Instant::now();
        let mut next_state = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            self.node.spin_once(Duration::from_millis(1));
            self.pool.run_until_stalled();
            if !self.handle.latest_state(&mut state) {
                continue;
            }
            let stamp = convert::time(state.time);
            let now = Instant::now();
            // /clock goes out for every new step, and keeps going while paused.
            if state.step != last_step || now >= next_state {
                let _ = self.clock.publish(&r2r::rosgraph_msgs::msg::Clock {
                    clock: stamp.clone(),
                });
                last_step = state.step;
            }
            if now >= next_diagnostics {
                next_diagnostics = now + DIAGNOSTICS_PERIOD;
                let _ = self
                    .diagnostics
                    .publish(&convert::diagnostics(&self.handle.stats(), &stamp));
            }
            if now >= next_state {
                next_state = now + STATE_PERIOD;
                for (publisher, message) in self.joint_states.iter_mut() {
                    let _ = publisher.publish(message.fill(&state, &stamp));
                }
                let mut moving = r2r::tf2_msgs::msg::TFMessage::default();
                for transforms in &self.transforms {
                    if let Some(message) = transforms.moving(&state, &stamp) {
                        moving.transforms.extend(message.transforms);
                    }
                }
                if !moving.transforms.is_empty() {
                    let _ = self.tf.publish(&moving);
                }
                if !static_sent {
                    // One latched message with every fixed frame (transient local).
                    let mut fixed = r2r::tf2_msgs::msg::TFMessage::default();
                    for transforms in &self.transforms {
                        if let Some(message) = transforms.fixed(&state, &stamp) {
                            fixed.transforms.extend(message.transforms);
                        }
                    }
                    static_sent = self.tf_static.publish(&fixed).is_ok();
                }
            }
        }
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
