//! The node: the command subscriptions, services and actions on an executor, /rosout, and
//! the publishers of the sampled topics (`publish`), which the sampler publishes through
//! from its own thread. The node's thread waits for what arrives; it wakes every few
//! milliseconds only while a goal follows the state or work off its thread is under way.
use super::clock::{ClockSettings, ClockThread};
use super::controller_manager::{Manager, ManagerState};
use super::executor::{Ticks, collect_tasks};
use super::parameters::LiveSettings;
use super::{Error, NodeError, ServeError, backend};
use crate::config::{Config, SimMode};
use crate::messages;
use crate::publish::{Publishers, RosSink};
use crate::record::RecordingSwitch;
use crate::sim::{Following, SimHandle};
use crate::topics::sampler::Retimes;
use crate::topics::{PublishCounters, Qos};
use futures::executor::{LocalPool, LocalSpawner};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest the node waits for ROS events: it then forwards the log to /rosout and
/// follows a world change (the DDS backend is woken for those at once).
const LONGEST_WAIT: Duration = Duration::from_millis(20);
/// How often it looks again while a goal follows the state (its feedback goes at this rate).
const TICK: Duration = Duration::from_millis(5);
/// How often it looks again while work off its thread (a world change, steps) is under way,
/// whose answer a client waits for.
const AWAITING: Duration = Duration::from_millis(1);

/// How long the middleware gets to let go of a stopping node. Fast DDS has hung in its
/// teardown on a busy host (the `ros2` CLI and rclpy did too): a run ends anyway.
const TEARDOWN_LIMIT: Duration = Duration::from_secs(10);

/// Set when a node's thread was left behind in its teardown (see `teardown_hung`).
static TEARDOWN_HUNG: AtomicBool = AtomicBool::new(false);

/// Whether a stopped node's middleware did not let go within TEARDOWN_LIMIT. Its thread is
/// left behind, so the process should end without the exit handlers, which may wait on it.
pub fn teardown_hung() -> bool {
    TEARDOWN_HUNG.load(Ordering::Relaxed)
}

pub struct RosNode {
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    publishing: Arc<PublishCounters>,
    /// The sampler's end of the node's publishers, until the sampler takes it.
    sink: Option<RosSink>,
}

/// Lowers this thread's scheduling weight to niceness `nice` (threads it starts inherit it,
/// world builds among them) where the physics thread runs at the normal weight: under CPU
/// contention it comes first. Where the kernel raised physics (and `/clock`) above the
/// normal weight, a niced node would only lose to the user's processes: a world build at
/// niceness 19 beside two busy processes took 45 s for Go1 (0.9 s alone).
fn give_way(handle: &SimHandle, nice: u8) {
    if crate::sim::raised_above_normal(&physics_grant(handle)) {
        return;
    }
    if let Err(e) = crate::sim::give_way(nice) {
        log::warn!("could not lower the ROS thread to niceness {nice}: {e}");
    }
}

/// What the kernel granted the physics thread; it asks as it starts, just before the node.
fn physics_grant(handle: &SimHandle) -> Option<crate::sim::Granted> {
    let asked = std::time::Instant::now();
    loop {
        let granted = handle.granted_priority();
        if granted.is_some() || asked.elapsed() > Duration::from_secs(2) {
            return granted;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What the node reaches besides the simulation: the recorder (the streams) whose MCAP
/// recording `~/record` starts and stops, and the sampler's rates, which parameter sets
/// change.
#[derive(Clone, Default)]
pub struct Attached {
    pub recorder: Option<Arc<dyn RecordingSwitch>>,
    pub retimes: Retimes,
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
        attached: Attached,
    ) -> Result<Self, NodeError> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let config = config.clone();
        let ros_args = ros_args.to_vec();
        let publishing = Arc::new(PublishCounters::default());
        let counters = publishing.clone();
        let (publishers, sink) = Publishers::new(publishing.clone());
        let (ready, started) = std::sync::mpsc::channel();
        // Started first and apart from the node's thread (see ClockThread): a client that
        // waits for the node's topics finds /clock among the first.
        let remaps =
            crate::config::Remaps::from_ros_args(&ros_args).map_err(|e| NodeError::Middleware {
                what: "--ros-args".into(),
                error: Error::from(e.to_string()),
            })?;
        let settings = ClockSettings {
            hz: config.ros.rates.clock,
            names: crate::topics::names::Names::new(&remaps),
            dds: config.ros.dds.clone(),
            realtime_priority: config.sim.realtime_priority,
            renew_after: config
                .ros
                .dds
                .clock_renew_after
                .unwrap_or(crate::config::CLOCK_RENEW_AFTER),
        };
        let clock =
            ClockThread::start(handle.clone(), settings, publishing.clone()).map_err(|error| {
                NodeError::Middleware {
                    what: "/clock".into(),
                    error,
                }
            })?;
        // The executor's tasks are not Send: the node is made on the thread that spins it.
        let thread = std::thread::Builder::new()
            .name("ros".into())
            .spawn(move || {
                give_way(&handle, config.ros.nice);
                publishers.wake_here();
                let made = Node::create(
                    handle, publishers, &config, play_mode, &ros_args, counters, attached, clock,
                );
                let node = match made {
                    Ok(node) => {
                        let _ = ready.send(Ok(()));
                        node
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                crate::supervise::essential("ROS node", || node.run(&stopping));
            })
            .map_err(NodeError::Thread)?;
        started.recv().map_err(|_| NodeError::Ended)??;
        Ok(Self {
            thread: Some(thread),
            stop,
            publishing,
            sink: Some(sink),
        })
    }

    /// The node's publications so far, and those that failed.
    pub fn publishing(&self) -> Arc<PublishCounters> {
        self.publishing.clone()
    }

    /// The node's publishers as the sampler's sink (once).
    pub fn sink(&mut self) -> Option<RosSink> {
        self.sink.take()
    }
}

/// The tasks of one robot (command subscriptions, actions), planned in one world.
struct RobotTasks {
    /// The robot as it was when they started: while the world keeps it at this index with
    /// these ids, under the same topics and from the same config file, they go on (a goal
    /// in progress included).
    index: usize,
    map: crate::model::RobotMap,
    topics: String,
    origin: String,
    aborts: Vec<futures::future::AbortHandle>,
    /// Its action controllers: once these go, its action servers answer that it is gone.
    _kept: Vec<std::rc::Rc<dyn std::any::Any>>,
}

impl Drop for RobotTasks {
    fn drop(&mut self) {
        for abort in &self.aborts {
            abort.abort();
        }
    }
}

struct Node {
    pool: LocalPool,
    handle: SimHandle,
    /// The world the robot tasks were planned in.
    world: Arc<crate::sim::WorldGeneration>,
    /// The worlds as they take effect.
    following: Following<()>,
    /// The publishers of the sampled topics.
    publishers: Publishers,
    retimes: Retimes,
    robot_tasks: Vec<RobotTasks>,
    publishing: Arc<PublishCounters>,
    /// The bridge's log records, as rcl_interfaces/Log under the node's logger name.
    rosout: backend::Publisher<messages::rcl_interfaces::msg::Log>,
    logger_name: String,
    ticks: Ticks,
    /// ros2_control's controller manager: the robots' declared controllers and their states.
    manager: Manager,
    /// What parameter sets change on this thread.
    live: LiveSettings,
    /// The thread that publishes /clock; it ends before the node.
    clock: ClockThread,
    /// Last: fields drop in order, and the publishers, subscriptions and services above
    /// belong to this node.
    node: backend::Node,
}

impl Node {
    #[allow(clippy::too_many_arguments)]
    fn create(
        handle: SimHandle,
        publishers: Publishers,
        config: &Config,
        play_mode: SimMode,
        ros_args: &[String],
        publishing: Arc<PublishCounters>,
        attached: Attached,
        clock: ClockThread,
    ) -> Result<Self, NodeError> {
        let Attached { recorder, retimes } = attached;
        let (mut node, rosout) = Self::middleware(config, ros_args)?;
        let logger_name = node.logger_name();
        crate::logging::start_rosout_queue();
        // The robots' tasks follow the world; the topics are the sampler's.
        let following = handle
            .follow(|_, _| Ok(()))
            .map_err(|e| NodeError::Middleware {
                what: "world".into(),
                error: Error::from(e.to_string()),
            })?;
        let (world, ()) = following.changed().ok_or(NodeError::NotPlanned)?;
        let pool = LocalPool::new();
        let spawner = pool.spawner();
        let ticks = Ticks::new(publishing.clone());
        let live = LiveSettings::new(config);
        let manager = ManagerState::new();
        manager.borrow_mut().follow(&world);
        let recording = recorder.map(|recorder| super::services::Recording {
            recorder,
            folder: recording_folder(config),
        });
        Self::serve(
            &mut node, &spawner, &handle, config, play_mode, &live, recording,
        )?;
        super::controller_manager::start(&mut node, &spawner, &manager).map_err(|error| {
            NodeError::Middleware {
                what: "controller manager services".into(),
                error,
            }
        })?;
        let robot_tasks = (0..world.robots.len())
            .map(|index| {
                let start = RobotStart {
                    spawner: &spawner,
                    handle: &handle,
                    ticks: &ticks,
                    world: &world,
                    index,
                    manager: &manager,
                };
                start_robot(&mut node, &start).map_err(|error| NodeError::Serve {
                    origin: config.origin.clone(),
                    error,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            clock,
            node,
            pool,
            handle,
            world,
            following,
            publishers,
            retimes,
            robot_tasks,
            publishing,
            rosout,
            logger_name,
            ticks,
            manager,
            live,
        })
    }

    /// The backend's node, with its /rosout publisher.
    fn middleware(
        config: &Config,
        ros_args: &[String],
    ) -> Result<
        (
            backend::Node,
            backend::Publisher<messages::rcl_interfaces::msg::Log>,
        ),
        NodeError,
    > {
        let err = |what: &str, error: Error| NodeError::Middleware {
            what: what.to_string(),
            error,
        };
        let mut node =
            backend::Node::create(ros_args, &config.ros.dds).map_err(|e| err("node", e))?;
        let rosout = node
            .publisher::<messages::rcl_interfaces::msg::Log>("/rosout", Qos::ROSOUT)
            .map_err(|e| err("/rosout", e))?;
        Ok((node, rosout))
    }

    /// Starts the node's services (the robots' own tasks start in `start_robot`).
    fn serve(
        node: &mut backend::Node,
        spawner: &LocalSpawner,
        handle: &SimHandle,
        config: &Config,
        play_mode: SimMode,
        live: &LiveSettings,
        recording: Option<super::services::Recording>,
    ) -> Result<(), NodeError> {
        let err = |what: &str, error: Error| NodeError::Middleware {
            what: what.to_string(),
            error,
        };
        let stopped: super::simulation::Stopped = Default::default();
        super::world_services::start(node, spawner, handle, stopped.clone())
            .map_err(|e| err("simulation_interfaces world services", e))?;
        super::entities::start(node, spawner, handle).map_err(|error| NodeError::Serve {
            origin: config.origin.clone(),
            error,
        })?;
        super::services::start(
            node,
            spawner,
            handle,
            live.wrench_duration.clone(),
            recording,
        )
        .map_err(|e| err("services", e))?;
        super::parameters::start(node, spawner, handle, config, live)
            .map_err(|e| err("parameter services", e))?;
        super::simulation::start(node, spawner, handle, play_mode, stopped)
            .map_err(|e| err("simulation_interfaces services", e))?;
        Ok(())
    }

    /// How long to wait for what arrives.
    fn wait(&self) -> Duration {
        if super::executor::awaiting() {
            AWAITING
        } else if self.ticks.waiting() {
            TICK
        } else {
            LONGEST_WAIT
        }
    }

    /// Publishes what was logged since the last cycle on /rosout.
    fn forward_logs(&self) {
        use messages::rcl_interfaces::msg::Log;
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
            let ok = self
                .rosout
                .publish(&Log {
                    stamp: messages::builtin_interfaces::msg::Time {
                        sec: since_epoch.as_secs() as i32,
                        nanosec: since_epoch.subsec_nanos(),
                    },
                    level,
                    name: self.logger_name.clone(),
                    msg: line.message,
                    file: line.file,
                    function: line.function,
                    line: line.line,
                })
                .is_ok();
            self.publishing.count(ok);
        }
    }

    /// Starts the tasks of controllers the manager's parameters declared since the last
    /// cycle, with their robot's tasks (they end with it).
    fn start_added_controllers(&mut self) {
        let added = self.manager.borrow_mut().take_added();
        for name in added {
            let Some(index) = self.manager.borrow().robot_of(&name, &self.world) else {
                continue;
            };
            let spawner = self.pool.spawner();
            let (started, collected) = collect_tasks(|| {
                let start = RobotStart {
                    spawner: &spawner,
                    handle: &self.handle,
                    ticks: &self.ticks,
                    world: &self.world,
                    index,
                    manager: &self.manager,
                };
                let trajectory = super::controller_manager::trajectory_controllers(
                    &self.manager,
                    &self.world,
                    index,
                    Some(&name),
                );
                start_controllers(&mut self.node, &start, Some(&name), trajectory)
            });
            if let Err(e) = started {
                log::error!("controller_manager: {name}: {e}");
            }
            if let Some(tasks) = self.robot_tasks.iter_mut().find(|t| t.index == index) {
                tasks.aborts.extend(collected.aborts);
                tasks._kept.extend(collected.kept);
            }
        }
    }

    /// Hands the publisher rates that parameter sets changed to the clock and the sampler.
    fn retime(&mut self) {
        let retimes = std::mem::take(&mut *self.live.retimes.borrow_mut());
        for (field, hz) in retimes {
            if field == "clock" {
                self.clock.set_rate(hz);
            }
            self.retimes.push(field, hz);
        }
    }

    /// Re-plans the robots' tasks for the world the physics thread now steps: the tasks of
    /// robots the new world keeps at the same index with the same ids go on.
    fn follow_world(&mut self, world: Arc<crate::sim::WorldGeneration>) {
        let started = Instant::now();
        self.clock.set_rate(world.config.ros.rates.clock);
        self.manager.borrow_mut().follow(&world);
        let spawner = self.pool.spawner();
        let mut kept: Vec<Option<RobotTasks>> = self.robot_tasks.drain(..).map(Some).collect();
        for (index, map) in world.robots.iter().enumerate() {
            let topics = robot_topics(&world, index);
            let same = kept.iter().position(|t| {
                t.as_ref().is_some_and(|t| {
                    t.index == index
                        && t.map == *map
                        && t.topics == topics
                        && t.origin == world.config.origin
                })
            });
            if let Some(tasks) = same.and_then(|k| kept[k].take()) {
                self.robot_tasks.push(tasks);
                continue;
            }
            // Its old tasks (if its index or ids moved) end before the new ones start: their
            // subscriptions and servers go before the new ones take the same names.
            kept.retain(|t| t.as_ref().is_none_or(|t| t.map.name != map.name));
            self.pool.run_until_stalled();
            let start = RobotStart {
                spawner: &spawner,
                handle: &self.handle,
                ticks: &self.ticks,
                world: &world,
                index,
                manager: &self.manager,
            };
            match start_robot(&mut self.node, &start) {
                Ok(tasks) => self.robot_tasks.push(tasks),
                Err(e) => log::error!("world {}: robot '{}': {e}", world.number, map.name),
            }
        }
        drop(kept);
        self.pool.run_until_stalled();
        log::debug!(
            "world {}: {} robot(s) re-planned in {:.1} ms",
            world.number,
            world.robots.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
        self.world = world;
    }

    fn run(mut self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            self.node.spin_once(self.wait());
            self.ticks.wake_all();
            self.pool.run_until_stalled();
            self.start_added_controllers();
            self.forward_logs();
            self.retime();
            if let Some((world, ())) = self.following.changed() {
                self.follow_world(world);
            }
            self.publishers.serve(&mut self.node);
        }
    }
}

/// Where `~/record` writes its files: `record.folder`, or the working folder.
fn recording_folder(config: &Config) -> std::path::PathBuf {
    match &config.record.folder {
        Some(folder) => config.base_dir.join(folder),
        None => std::path::PathBuf::from("."),
    }
}

/// What a robot's tasks start from: the node's executor and handles, and robot `index` of
/// `world`.
#[derive(Clone, Copy)]
struct RobotStart<'a> {
    spawner: &'a LocalSpawner,
    handle: &'a SimHandle,
    ticks: &'a Ticks,
    world: &'a crate::sim::WorldGeneration,
    index: usize,
    manager: &'a Manager,
}

/// Starts the tasks of the controllers robot `index` of `world` declares for the controller
/// manager (`only`: of that one): forward commands' subscriptions, trajectory controllers'
/// action servers (`trajectory`, as `trajectory_controllers` gives them) and grippers'
/// action servers, under names the config's own controllers leave.
fn start_controllers(
    node: &mut backend::Node,
    start: &RobotStart,
    only: Option<&str>,
    trajectory: Vec<(crate::config::TrajectoryController, super::actions::Managed)>,
) -> Result<(), ServeError> {
    let (world, index) = (start.world, start.index);
    super::controller_manager::start_subscriptions(
        node,
        start.spawner,
        start.handle,
        world,
        index,
        start.manager,
        only,
    )
    .map_err(ServeError::Middleware)?;
    let map = &world.robots[index];
    let ros = &world.config.robots[index].ros;
    let own: Vec<&str> = ros
        .trajectory_controllers
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let (controllers, managed): (Vec<_>, Vec<_>) = left_to_manager(
        &map.name,
        "a trajectory controller",
        &own,
        trajectory,
        |c| &c.name,
    )
    .into_iter()
    .map(|(controller, by_manager)| (controller, Some(by_manager)))
    .unzip();
    let own: Vec<&str> = ros.grippers.iter().map(|g| g.name.as_str()).collect();
    let grippers =
        super::controller_manager::gripper_controllers(start.manager, world, index, only);
    let (grippers, managed_grippers): (Vec<_>, Vec<_>) =
        left_to_manager(&map.name, "a gripper", &own, grippers, |g| &g.name)
            .into_iter()
            .unzip();
    let prefixed = crate::topics::robot_prefixed(&world.config, &world.robots, index);
    let robot_topic =
        |name: &str| crate::topics::robot_topic(&world.config, &map.name, prefixed, name);
    super::controller_manager::published::start(
        node,
        start.spawner,
        start.handle,
        start.ticks,
        world,
        index,
        start.manager,
        only,
        &robot_topic,
    )
    .map_err(ServeError::Middleware)?;
    if !controllers.is_empty() {
        super::actions::start(
            node,
            start.spawner,
            start.handle,
            start.ticks,
            world,
            index,
            &controllers,
            &managed,
            &robot_topic,
        )?;
    }
    super::gripper::start(
        node,
        start.spawner,
        start.handle,
        start.ticks,
        world,
        index,
        &grippers,
        &managed_grippers,
        &robot_topic,
    )
}

/// The controller manager's controllers of robot `robot` whose names the config's own
/// controllers (`own`, of kind `what`) leave; the others get nothing, with a warning.
fn left_to_manager<T, M>(
    robot: &str,
    what: &str,
    own: &[&str],
    managed: Vec<(T, M)>,
    name: impl Fn(&T) -> &str,
) -> Vec<(T, M)> {
    managed
        .into_iter()
        .filter(|(controller, _)| {
            let taken = own.contains(&name(controller));
            if taken {
                log::warn!(
                    "robot '{robot}': the controller manager's '{}' gets no action server: the config names {what} so",
                    name(controller)
                );
            }
            !taken
        })
        .collect()
}

/// Where robot `index` of `world` has its topics (what its tasks serve under).
fn robot_topics(world: &crate::sim::WorldGeneration, index: usize) -> String {
    let prefixed = crate::topics::robot_prefixed(&world.config, &world.robots, index);
    crate::topics::robot_topic(&world.config, &world.robots[index].name, prefixed, "")
}

/// Starts the command subscriptions, actions and grippers of robot `index` of `world`. An
/// object without actuators has none.
fn start_robot(node: &mut backend::Node, start: &RobotStart) -> Result<RobotTasks, ServeError> {
    let RobotStart {
        spawner,
        handle,
        ticks,
        world,
        index,
        manager,
    } = *start;
    let map = &world.robots[index];
    let config = &world.config;
    let prefixed = crate::topics::robot_prefixed(config, &world.robots, index);
    let robot_topic = |name: &str| crate::topics::robot_topic(config, &map.name, prefixed, name);
    let ros = &config.robots[index].ros;
    let (started, collected) = collect_tasks(|| -> Result<(), ServeError> {
        if map.actuators.is_empty() {
            return Ok(());
        }
        super::commands::start(node, spawner, handle, world, index, &robot_topic)
            .map_err(ServeError::Middleware)?;
        // With none configured, the default group serves `joint_trajectory_controller`,
        // unless the controller manager runs trajectory controllers for the robot.
        let managed =
            super::controller_manager::trajectory_controllers(manager, world, index, None);
        if !ros.trajectory_controllers.is_empty() || managed.is_empty() {
            super::actions::start(
                node,
                spawner,
                handle,
                ticks,
                world,
                index,
                &ros.trajectory_controllers,
                &[],
                &robot_topic,
            )?;
        }
        start_controllers(node, start, None, managed)?;
        super::gripper::start(
            node,
            spawner,
            handle,
            ticks,
            world,
            index,
            &ros.grippers,
            &[],
            &robot_topic,
        )
    });
    let tasks = RobotTasks {
        index,
        map: map.clone(),
        topics: robot_topics(world, index),
        origin: world.config.origin.clone(),
        aborts: collected.aborts,
        _kept: collected.kept,
    };
    started?;
    Ok(tasks)
}

impl Drop for RosNode {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take()
            && !crate::supervise::joined_within(thread, TEARDOWN_LIMIT)
        {
            TEARDOWN_HUNG.store(true, Ordering::Relaxed);
            log::error!(
                "the ROS 2 node did not stop within {} s: its middleware hangs in its teardown; \
                 left behind",
                TEARDOWN_LIMIT.as_secs()
            );
        }
    }
}
