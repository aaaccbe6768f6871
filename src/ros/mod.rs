//! The ROS 2 node: maps the simulation to ROS 2 topics, services and actions, and back. It
//! runs on its own thread and only reads the latest-state snapshot and sends commands
//! through the simulation handle, so nothing it does can stall the physics thread.
//!
//! The node is written once, on the shared interface structs (`interfaces`) and a small
//! backend API; the cargo feature picks the backend: `ros` is r2r on rcl (needs a ROS 2
//! installation to build), `dds` is ros2-client on pure-Rust DDS (needs nothing).
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

pub mod interfaces;
mod qos;
pub use qos::Qos;

mod actions;
mod commands;
mod convert;
mod goals;
mod gripper;
mod markers;
mod odometry;
mod sensors;
mod services;
mod simulation;

use crate::config::{Config, SimMode};
use crate::sim::SimHandle;
use futures::executor::{LocalPool, LocalSpawner};
use futures::task::LocalSpawnExt;
use interfaces::sensor_msgs::msg::JointState;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// While the sim time stands still (paused), /clock repeats at this period.
const CLOCK_WHILE_PAUSED: Duration = Duration::from_millis(100);
/// How many missed publisher cycles are made up after a stall.
const CATCH_UP: u32 = 20;
/// The longest the node waits for ROS events before it looks at its publishers again.
const LONGEST_WAIT: Duration = Duration::from_millis(5);

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

/// An error of a backend: of its middleware, or of converting a message.
#[derive(Debug)]
pub struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Error {
    fn from(e: String) -> Self {
        Self(e)
    }
}

/// Runs `task` on the node's executor.
fn spawn(
    spawner: &LocalSpawner,
    task: impl std::future::Future<Output = ()> + 'static,
) -> Result<(), Error> {
    spawner
        .spawn_local(task)
        .map_err(|e| Error::from(format!("executor: {e}")))
}

/// Wakes the executor's tasks that wait for the next cycle of the node's loop (goals that
/// watch the state).
#[derive(Clone, Default)]
struct Ticks(std::rc::Rc<std::cell::RefCell<Vec<std::task::Waker>>>);

impl Ticks {
    /// Resolves at the next cycle.
    fn next(&self) -> NextTick {
        NextTick {
            ticks: self.clone(),
            waiting: false,
        }
    }

    fn wake_all(&self) {
        for waker in self.0.borrow_mut().drain(..) {
            waker.wake();
        }
    }
}

struct NextTick {
    ticks: Ticks,
    waiting: bool,
}

impl std::future::Future for NextTick {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.waiting {
            return std::task::Poll::Ready(());
        }
        self.waiting = true;
        self.ticks.0.borrow_mut().push(cx.waker().clone());
        std::task::Poll::Pending
    }
}

/// When a publisher is due: every `period` on average. After a short stall (the node's thread
/// was descheduled) the missed cycles follow at once, so the rate holds; after a long one
/// (more than `CATCH_UP` periods) the schedule restarts from now instead of bursting.
struct Every {
    period: Option<Duration>,
    next: Instant,
}

impl Every {
    /// `rate` in Hz; 0 never fires.
    fn hz(rate: f64) -> Self {
        Self {
            period: (rate > 0.0).then(|| Duration::from_secs_f64(1.0 / rate)),
            next: Instant::now(),
        }
    }

    fn due(&mut self, now: Instant) -> bool {
        let Some(period) = self.period else {
            return false;
        };
        if now < self.next {
            return false;
        }
        self.next += period;
        if self.next + period * CATCH_UP <= now {
            self.next = now + period;
        }
        true
    }

    fn deadline(&self) -> Option<Instant> {
        self.period.map(|_| self.next)
    }
}

impl RosNode {
    /// Starts the node on its own thread; returns once it is up (or why it is not).
    /// `play_mode` is what "play" means to the simulation services (realtime or fast).
    /// `ros_args` are the process's `--ros-args` (namespace, remaps).
    pub fn start(
        handle: SimHandle,
        config: &Config,
        play_mode: SimMode,
        ros_args: &[String],
    ) -> Result<Self, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let config = config.clone();
        let ros_args = ros_args.to_vec();
        let (ready, started) = std::sync::mpsc::channel();
        // The executor's tasks are not Send: the node is made on the thread that spins it.
        let thread = std::thread::Builder::new()
            .name("ros".into())
            .spawn(move || {
                let node = match Node::create(handle, &config, play_mode, &ros_args) {
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

struct SensorOutput {
    output: sensors::Output,
    every: Every,
}

struct Node {
    pool: LocalPool,
    handle: SimHandle,
    clock: backend::Publisher<interfaces::rosgraph_msgs::msg::Clock>,
    clock_every: Every,
    joint_states: Vec<(backend::Publisher<JointState>, convert::JointStateMsg)>,
    joint_states_every: Every,
    /// Kept alive for late subscribers (transient local).
    _descriptions: Vec<backend::Publisher<interfaces::std_msgs::msg::String>>,
    /// Latched geom markers of MJCF robots, kept alive for late subscribers.
    _markers: backend::Publisher<interfaces::visualization_msgs::msg::MarkerArray>,
    diagnostics: backend::Publisher<interfaces::diagnostic_msgs::msg::DiagnosticArray>,
    diagnostics_every: Every,
    tf: backend::Publisher<interfaces::tf2_msgs::msg::TFMessage>,
    tf_every: Every,
    tf_static: backend::Publisher<interfaces::tf2_msgs::msg::TFMessage>,
    transforms: Vec<convert::Transforms>,
    /// Frames of sensor sites, fixed to their bodies.
    sensor_frames: Vec<interfaces::geometry_msgs::msg::TransformStamped>,
    sensors: Vec<SensorOutput>,
    /// Contact points and forces (when the physics thread exports contacts).
    contacts: Option<backend::Publisher<interfaces::visualization_msgs::msg::MarkerArray>>,
    contacts_every: Every,
    contact_force_scale: f64,
    odometries: Vec<(
        backend::Publisher<interfaces::nav_msgs::msg::Odometry>,
        odometry::Odometry,
    )>,
    odometry_every: Every,
    /// The bridge's log records, as rcl_interfaces/Log under the node's logger name.
    rosout: backend::Publisher<interfaces::rcl_interfaces::msg::Log>,
    logger_name: String,
    ticks: Ticks,
    /// Last: fields drop in order, and the publishers, subscriptions and services above
    /// belong to this node.
    node: backend::Node,
}

impl Node {
    fn create(
        handle: SimHandle,
        config: &Config,
        play_mode: SimMode,
        ros_args: &[String],
    ) -> Result<Self, String> {
        let err = |what: &str, e: Error| format!("ROS 2 {what}: {e}");
        let rates = &config.ros.rates;
        let mut node =
            backend::Node::create(ros_args, &config.ros.dds).map_err(|e| err("node", e))?;
        let rosout = node
            .publisher::<interfaces::rcl_interfaces::msg::Log>("/rosout", Qos::ROSOUT)
            .map_err(|e| err("/rosout", e))?;
        let logger_name = node.logger_name();
        crate::logging::start_rosout_queue();
        let clock = node
            .publisher::<interfaces::rosgraph_msgs::msg::Clock>("/clock", Qos::STATE)
            .map_err(|e| err("/clock", e))?;
        let robots = handle.robots().to_vec();
        let count = robots.len();
        let mut joint_states = Vec::new();
        let mut descriptions = Vec::new();
        let tf = node
            .publisher::<interfaces::tf2_msgs::msg::TFMessage>("/tf", Qos::STATE)
            .map_err(|e| err("/tf", e))?;
        let diagnostics = node
            .publisher::<interfaces::diagnostic_msgs::msg::DiagnosticArray>(
                "/diagnostics",
                Qos::STATE,
            )
            .map_err(|e| err("/diagnostics", e))?;
        let tf_static = node
            .publisher::<interfaces::tf2_msgs::msg::TFMessage>("/tf_static", Qos::LATCHED)
            .map_err(|e| err("/tf_static", e))?;
        let odometries = robots
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let base = config.robots[i].control.base.as_ref();
                odometry::Odometry::new(
                    handle.model(),
                    r,
                    &config.robots[i].ros.odometry,
                    base,
                    count > 1,
                )
                .map_err(|e| format!("{}: robots[{i}].ros.odometry: {e}", config.origin))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let transforms: Vec<_> = robots
            .iter()
            .zip(&odometries)
            .map(|(r, o)| {
                convert::Transforms::new(handle.model(), r, count > 1, o.as_ref().map(|o| o.root()))
            })
            .collect();
        let mut odometry_outputs = Vec::new();
        for (robot, odometry) in robots.iter().zip(odometries) {
            let Some(odometry) = odometry else {
                continue;
            };
            let name = topic(count, &robot.name, "odom");
            let publisher = node
                .publisher::<interfaces::nav_msgs::msg::Odometry>(&name, Qos::STATE)
                .map_err(|e| err(&name, e))?;
            odometry_outputs.push((publisher, odometry));
        }
        let pool = LocalPool::new();
        let spawner = pool.spawner();
        let ticks = Ticks::default();
        // The geoms of MJCF robots, latched: RViz shows them on the bodies' tf frames.
        let geoms = interfaces::visualization_msgs::msg::MarkerArray {
            markers: robots
                .iter()
                .flat_map(|r| markers::of_robot(handle.model(), r, count > 1))
                .collect(),
        };
        let markers = node
            .publisher::<interfaces::visualization_msgs::msg::MarkerArray>(
                "~/markers",
                Qos::LATCHED,
            )
            .map_err(|e| err("~/markers", e))?;
        markers.publish(&geoms).map_err(|e| err("~/markers", e))?;
        let contacts = if handle.state_layout().ncontact > 0 {
            Some(
                node.publisher::<interfaces::visualization_msgs::msg::MarkerArray>(
                    "~/contacts",
                    Qos::STATE,
                )
                .map_err(|e| err("~/contacts", e))?,
            )
        } else {
            None
        };
        let mut sensor_frames = Vec::new();
        let mut sensor_outputs = Vec::new();
        for (index, robot) in robots.iter().enumerate() {
            let robot_topic = |name: &str| topic(count, &robot.name, name);
            let publisher = node
                .publisher::<JointState>(&robot_topic("joint_states"), Qos::STATE)
                .map_err(|e| err("joint_states", e))?;
            joint_states.push((
                publisher,
                convert::JointStateMsg::new(handle.model(), robot),
            ));
            if let Some(urdf) = &robot.urdf {
                // Transient local: a late robot_state_publisher or RViz still gets it.
                let description = node
                    .publisher::<interfaces::std_msgs::msg::String>(
                        &robot_topic("robot_description"),
                        Qos::LATCHED,
                    )
                    .map_err(|e| err("robot_description", e))?;
                description
                    .publish(&interfaces::std_msgs::msg::String { data: urdf.clone() })
                    .map_err(|e| err("robot_description", e))?;
                descriptions.push(description);
            }
            let plan = sensors::plan(
                handle.model(),
                robot,
                index,
                &config.robots[index].ros,
                rates,
                count > 1,
            )
            .map_err(|e| format!("{}: {e}", config.origin))?;
            sensor_frames.extend(plan.frames);
            for sensor in plan.topics {
                let name = robot_topic(&sensor.topic);
                let every = Every::hz(sensor.rate);
                let output = sensor
                    .advertise(&mut node, &name, Qos::STATE)
                    .map_err(|e| err(&name, e))?;
                sensor_outputs.push(SensorOutput { output, every });
            }
            commands::start(&mut node, &spawner, &handle, index, &robot_topic)
                .map_err(|e| err("commands", e))?;
            actions::start(
                &mut node,
                &spawner,
                &handle,
                &ticks,
                index,
                &config.robots[index].ros.trajectory_controllers,
                &robot_topic,
            )
            .map_err(|e| format!("{}: {e}", config.origin))?;
            gripper::start(
                &mut node,
                &spawner,
                &handle,
                &ticks,
                index,
                &config.robots[index].ros.grippers,
                &robot_topic,
            )
            .map_err(|e| format!("{}: {e}", config.origin))?;
        }
        services::start(&mut node, &spawner, &handle, config.ros.wrench_duration)
            .map_err(|e| err("services", e))?;
        simulation::start(&mut node, &spawner, &handle, play_mode)
            .map_err(|e| err("simulation_interfaces services", e))?;
        Ok(Self {
            node,
            pool,
            handle,
            clock,
            clock_every: Every::hz(rates.clock),
            joint_states,
            joint_states_every: Every::hz(rates.joint_states),
            _descriptions: descriptions,
            _markers: markers,
            diagnostics,
            diagnostics_every: Every::hz(rates.diagnostics),
            tf,
            tf_every: Every::hz(rates.tf),
            tf_static,
            transforms,
            sensor_frames,
            sensors: sensor_outputs,
            contacts_every: Every::hz(if contacts.is_some() {
                rates.contacts
            } else {
                0.0
            }),
            contacts,
            contact_force_scale: config.ros.contact_force_scale,
            odometries: odometry_outputs,
            odometry_every: Every::hz(rates.odom),
            rosout,
            logger_name,
            ticks,
        })
    }

    /// The earliest moment a publisher is due.
    fn next_deadline(&self) -> Option<Instant> {
        [
            &self.clock_every,
            &self.joint_states_every,
            &self.diagnostics_every,
            &self.tf_every,
            &self.odometry_every,
            &self.contacts_every,
        ]
        .into_iter()
        .chain(self.sensors.iter().map(|s| &s.every))
        .filter_map(Every::deadline)
        .min()
    }

    /// Publishes what was logged since the last cycle on /rosout.
    fn forward_logs(&self) {
        use interfaces::rcl_interfaces::msg::Log;
        while let Some(line) = crate::logging::next_rosout_line() {
            let since_epoch = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            let level = match line.level {
                log::Level::Error => Log::ERROR,
                log::Level::Warn => Log::WARN,
                log::Level::Info => Log::INFO,
                log::Level::Debug | log::Level::Trace => Log::DEBUG,
            };
            let _ = self.rosout.publish(&Log {
                stamp: interfaces::builtin_interfaces::msg::Time {
                    sec: since_epoch.as_secs() as i32,
                    nanosec: since_epoch.subsec_nanos(),
                },
                level,
                name: self.logger_name.clone(),
                msg: line.message,
                file: line.file,
                function: line.function,
                line: line.line,
            });
        }
    }

    fn run(mut self, stop: &AtomicBool) {
        let mut state = self.handle.new_snapshot();
        let mut clock_step = u64::MAX;
        let mut clock_sent = Instant::now();
        let mut static_sent = false;
        while !stop.load(Ordering::Relaxed) {
            let wait = self
                .next_deadline()
                .map_or(LONGEST_WAIT, |d| {
                    d.saturating_duration_since(Instant::now())
                })
                .min(LONGEST_WAIT);
            self.node.spin_once(wait);
            self.ticks.wake_all();
            self.pool.run_until_stalled();
            self.forward_logs();
            // Woken by incoming messages only: no publisher is due, nothing to read.
            let now = Instant::now();
            let due = self.next_deadline().is_some_and(|d| d <= now);
            if (static_sent && !due) || !self.handle.latest_state(&mut state) {
                continue;
            }
            let stamp = convert::time(state.time);
            if !static_sent {
                static_sent = self.send_static(&state, &stamp);
            }
            // /clock follows the sim time, and repeats while paused so late nodes start.
            if self.clock_every.due(now)
                && (state.step != clock_step || now - clock_sent >= CLOCK_WHILE_PAUSED)
            {
                let _ = self.clock.publish(&interfaces::rosgraph_msgs::msg::Clock {
                    clock: stamp.clone(),
                });
                clock_step = state.step;
                clock_sent = now;
            }
            if self.diagnostics_every.due(now) {
                let _ = self
                    .diagnostics
                    .publish(&convert::diagnostics(&self.handle.stats(), &stamp));
            }
            if self.joint_states_every.due(now) {
                for (publisher, message) in self.joint_states.iter_mut() {
                    let _ = publisher.publish(message.fill(&state, &stamp));
                }
            }
            for (_, odometry) in self.odometries.iter_mut() {
                odometry.update(&state);
            }
            if self.tf_every.due(now) {
                let mut moving = interfaces::tf2_msgs::msg::TFMessage::default();
                for transforms in &self.transforms {
                    if let Some(message) = transforms.moving(&state, &stamp) {
                        moving.transforms.extend(message.transforms);
                    }
                }
                for (_, odometry) in &self.odometries {
                    moving.transforms.push(odometry.transform(&state, &stamp));
                }
                if !moving.transforms.is_empty() {
                    let _ = self.tf.publish(&moving);
                }
            }
            if let Some(publisher) = &self.contacts
                && self.contacts_every.due(now)
            {
                let markers = markers::contacts(&state, &stamp, self.contact_force_scale);
                let _ = publisher
                    .publish(&interfaces::visualization_msgs::msg::MarkerArray { markers });
            }
            if self.odometry_every.due(now) {
                for (publisher, odometry) in self.odometries.iter_mut() {
                    let _ = publisher.publish(odometry.fill(&state, &stamp));
                }
            }
            for sensor in self.sensors.iter_mut() {
                if sensor.every.due(now) {
                    sensor.output.publish(&state, &stamp);
                }
            }
        }
    }

    /// One latched /tf_static message with every fixed frame: bodies without joints and
    /// sensor sites.
    fn send_static(
        &self,
        state: &crate::sim::StateSnapshot,
        stamp: &interfaces::builtin_interfaces::msg::Time,
    ) -> bool {
        let mut fixed = interfaces::tf2_msgs::msg::TFMessage::default();
        for transforms in &self.transforms {
            if let Some(message) = transforms.fixed(state, stamp) {
                fixed.transforms.extend(message.transforms);
            }
        }
        for (_, odometry) in &self.odometries {
            fixed.transforms.extend(odometry.world_to_odom(stamp));
        }
        for frame in &self.sensor_frames {
            let mut frame = frame.clone();
            frame.header.stamp = stamp.clone();
            fixed.transforms.push(frame);
        }
        fixed.transforms.is_empty() || self.tf_static.publish(&fixed).is_ok()
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
