//! The simulation core: a physics thread that alone owns `MjData`, and one cloneable handle
//! through which every adapter (CLI, ROS, ZMQ) sends commands, requests operations and reads
//! the latest state.
mod api;
mod clock;
mod commands;
mod divergence;
mod follow;
mod initial;
mod memory;
mod observer;
mod operations;
mod ops;
mod physics;
pub mod priority;
mod samples;
mod snapshot;
mod state;
mod stats;
mod tap;
mod world;

pub use api::GainsUpdate;
pub use clock::now_ns;
pub use commands::{
    Bounded, Command, Operation, OperationDone, OperationError, OperationResult, Stamped,
};
pub use follow::{Following, PlanContext};
pub use initial::start_data;
pub use observer::Observer;
pub use physics::PauseCause;
pub use priority::{Granted, give_way, raised_above_normal};
pub use samples::{Attachment, MAX_SCHEDULES, READER_POLL, SampleRing};
pub use snapshot::{STATE_SPEC, Snapshot, SnapshotError, model_fingerprint};
pub use state::{Collider, ExportedContact, StateExchange, StateLayout, StateSnapshot};
pub use stats::SimStats;
pub use tap::TapLayout;
pub use world::{ChangeError, Changed, NextWorld, WorldEdit, WorldGeneration};

use crate::config::{ControlSource, SimConfig, SimMode};
use crate::control::{Controllers, TwistCommand};
use crate::error::{InputError, InputResult};
use crate::model::World;
use commands::{Request, Trash};
use crossbeam_queue::ArrayQueue;
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::thread::JoinHandle;

/// Capacity of the command inbox; commands beyond it are dropped and counted.
const INBOX_CAPACITY: usize = 1 << 16;
/// Owned values the physics thread hands back for dropping.
const TRASH_CAPACITY: usize = 256;

/// The twist in force for one robot, as the physics thread last applied it.
#[derive(Default)]
pub(crate) struct TwistSlot([AtomicU64; 3]);

impl TwistSlot {
    fn store(&self, twist: &TwistCommand) {
        for (cell, v) in self
            .0
            .iter()
            .zip([twist.linear_x, twist.linear_y, twist.angular_z])
        {
            cell.store(v.to_bits(), Ordering::Relaxed);
        }
    }

    fn load(&self) -> [f64; 3] {
        [0, 1, 2].map(|i| f64::from_bits(self.0[i].load(Ordering::Relaxed)))
    }
}

/// State shared between the physics thread and the handles.
pub(crate) struct Shared {
    /// The world as it is now (the physics thread holds its own reference and hands the
    /// next one over through an operation; only a world change writes this).
    world: std::sync::RwLock<Arc<WorldGeneration>>,
    /// Held while a world change is built and swapped in: changes happen one at a time.
    changing: std::sync::Mutex<()>,
    stats: stats::LiveStats,
    inbox: ArrayQueue<Stamped>,
    trash: ArrayQueue<Trash>,
    /// Snapshots kept in memory under a name.
    named_snapshots: std::sync::Mutex<std::collections::BTreeMap<String, Box<Snapshot>>>,
    recording: std::sync::Mutex<Option<crate::record::Recording>>,
    log_limiter: crate::rate_limit::RateLimiter,
    mode: AtomicU8,
    speed_bits: AtomicU64,
    /// The physics thread pauses itself after this step (u64::MAX: never).
    pause_at_step: AtomicU64,
    /// Why it last paused (`physics::PauseCause`).
    pause_cause: AtomicU8,
    /// A step request runs (from its first step until its answer): paused, yet moving.
    stepping: std::sync::atomic::AtomicBool,
    /// What the kernel granted the physics thread (set once it runs).
    granted: std::sync::OnceLock<priority::Granted>,
    /// How many contacts each state carries (a world change keeps it).
    contacts: usize,
    /// The adapters that follow the world, each planning every world (`follow`).
    followers: std::sync::Mutex<Vec<Arc<dyn follow::Follower>>>,
}

/// The handle adapters use. Cheap to clone; every method is safe from any thread.
#[derive(Clone)]
pub struct SimHandle {
    shared: Arc<Shared>,
    requests: crossbeam_channel::Sender<Request>,
}

impl SimHandle {
    /// The world as it is now. Hold on to it to plan from one model: its ids and sizes
    /// stay valid however the world changes later.
    pub fn world(&self) -> Arc<WorldGeneration> {
        match self.shared.world.read() {
            Ok(world) => world.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The current world's generation number (0 at start, +1 per change).
    pub fn generation(&self) -> u64 {
        self.world().number
    }

    pub fn model(&self) -> Arc<MjModel> {
        self.world().model.clone()
    }

    pub fn state_layout(&self) -> StateLayout {
        self.world().layout()
    }

    /// A buffer for the latest state (the physics thread's exported arrays), sized for the
    /// current model, to pass to `latest_state`.
    pub fn latest_state_buffer(&self) -> StateSnapshot {
        StateSnapshot::with_layout(&self.world().layout())
    }

    /// Copies the newest published state of the current world into `out` (resized when the
    /// world changed); never stalls the physics thread.
    pub fn latest_state(&self, out: &mut StateSnapshot) -> bool {
        self.world().latest_state(out)
    }

    pub fn stats(&self) -> SimStats {
        self.shared.stats.snapshot()
    }

    /// The adapters' plans of a new world (see `follow`).
    pub(in crate::sim) fn plan_world(
        &self,
        world: &World,
    ) -> InputResult<Vec<Box<dyn follow::Delivery>>> {
        follow::plan_all(&self.shared.followers, world, &self.plan_context())
    }

    /// Follows the world with `planner`: it plans the world now in effect (an error is
    /// returned, and nothing follows) and every later world where it is built, refusing
    /// the change of a world it cannot plan for. The plans reach the returned `Following`
    /// as their worlds take effect; dropping it ends the following.
    pub fn follow<P, F>(&self, planner: F) -> InputResult<Following<P>>
    where
        P: Send + 'static,
        F: Fn(&World, &PlanContext) -> InputResult<P> + Send + Sync + 'static,
    {
        // No world changes meanwhile: the follower sees every world from this one on.
        let edit = self.edit_world();
        follow::start(
            &self.shared.followers,
            planner,
            &edit.world,
            &self.plan_context(),
        )
    }

    fn plan_context(&self) -> PlanContext {
        PlanContext {
            exported_contacts: self.shared.contacts,
        }
    }

    /// The sim time of the latest state (one atomic read: what /clock sends).
    pub fn sim_time(&self) -> f64 {
        let bits = self.shared.stats.sim_time_bits.load(Ordering::Relaxed);
        f64::from_bits(bits)
    }

    /// The last step that diverged, in words (None while none has).
    pub fn last_divergence(&self) -> Option<String> {
        divergence::describe(&self.shared.stats, &self.world())
    }

    /// The lateness of paced step starts (seconds) below which `fraction` of them fall.
    pub fn lateness_quantile(&self, fraction: f64) -> f64 {
        self.shared.stats.lateness.quantile(fraction)
    }

    /// Number of paced step starts recorded in the lateness histogram.
    pub fn lateness_samples(&self) -> u64 {
        self.shared.stats.lateness.count()
    }

    pub fn clear_lateness(&self) {
        self.shared.stats.lateness.clear();
    }

    pub fn mode(&self) -> SimMode {
        match self.shared.mode.load(Ordering::Relaxed) {
            x if x == SimMode::Fast as u8 => SimMode::Fast,
            x if x == SimMode::Paused as u8 => SimMode::Paused,
            _ => SimMode::Realtime,
        }
    }

    /// Where robot `robot` takes its commands from now (None: no such robot).
    pub fn control_source(&self, robot: usize) -> Option<ControlSource> {
        let world = self.world();
        let source = world.sources.get(robot)?;
        Some(ControlSource::from_u8(source.load(Ordering::Relaxed)))
    }

    pub fn speed(&self) -> f64 {
        f64::from_bits(self.shared.speed_bits.load(Ordering::Relaxed))
    }

    /// Queues a command for the next step. Returns false (and counts it) when the inbox is full.
    pub fn send(&self, command: Command) -> bool {
        self.send_at(0, command)
    }

    /// Queues a command for physics step `step` (the count of steps once it has run); 0 means
    /// the next step. Stamped commands make runs reproducible (lockstep). Its ids are those
    /// of the current world; `send_in` names the world they were resolved in.
    pub fn send_at(&self, step: u64, command: Command) -> bool {
        self.send_in(self.generation(), step, command)
    }

    /// Queues a command whose ids belong to world generation `generation`: if the world has
    /// changed by the time it applies, it is dropped (and counted) instead of reaching
    /// whatever now has those ids.
    pub fn send_in(&self, generation: u64, step: u64, command: Command) -> bool {
        if self
            .shared
            .inbox
            .push(Stamped {
                at_step: step,
                generation,
                command,
            })
            .is_err()
        {
            self.shared
                .stats
                .dropped_commands
                .fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Asks the physics thread to carry out an operation on the current world and waits for
    /// its result.
    pub fn request(&self, operation: Operation) -> OperationResult {
        self.request_in(self.generation(), operation)
    }

    /// Asks for an operation whose ids belong to world generation `generation`; refused if
    /// the world has changed since.
    pub fn request_in(&self, generation: u64, operation: Operation) -> OperationResult {
        let (reply, result) = crossbeam_channel::bounded(1);
        let sent = self.requests.send(Request {
            operation,
            generation,
            reply: Some(reply),
        });
        let answer = match sent {
            Ok(()) => result
                .recv()
                .map_err(|_| OperationError::Stopped)
                .and_then(|r| r),
            Err(_) => Err(OperationError::Stopped),
        };
        self.empty_trash();
        // Counted and logged here, on the caller's thread: the physics thread formats nothing.
        if let Err(refusal) = &answer
            && *refusal != OperationError::Stopped
        {
            self.note_refusal(&refusal.to_string());
        }
        answer
    }

    /// Counts a refused operation and logs it (rate-limited).
    fn note_refusal(&self, message: &str) {
        self.shared
            .stats
            .refused_operations
            .fetch_add(1, Ordering::Relaxed);
        self.shared
            .log_limiter
            .warn("refused", &format!("refused: {message}"));
    }

    /// Drops what the physics thread handed back (it never frees memory itself).
    pub fn empty_trash(&self) {
        while self.shared.trash.pop().is_some() {}
    }

    /// The twist each robot's base is driven with now (zeros when nobody drives or after the
    /// timeout): (vx, vy, yaw rate).
    pub fn twist(&self, robot: usize) -> [f64; 3] {
        self.world()
            .twists
            .get(robot)
            .map(TwistSlot::load)
            .unwrap_or_default()
    }

    /// The model fingerprint snapshots carry.
    pub fn fingerprint(&self) -> u64 {
        self.world().fingerprint
    }

    /// Why the simulation last paused.
    pub fn pause_cause(&self) -> PauseCause {
        PauseCause::from_u8(self.shared.pause_cause.load(Ordering::Relaxed))
    }

    /// What the kernel granted the physics thread (None until it runs).
    pub fn granted_priority(&self) -> Option<priority::Granted> {
        self.shared.granted.get().copied()
    }

    /// Makes the physics thread pause itself right after step `step` (a batch run's end).
    pub fn pause_at_step(&self, step: u64) {
        self.shared.pause_at_step.store(step, Ordering::Relaxed);
    }
}

/// The controllers of `world`'s robots, in their configured state: built from the robots'
/// `control` settings, which name actuators, joints and presets of the model.
pub fn controllers(world: &World) -> InputResult<Controllers> {
    Controllers::new(&world.model, &world.robots, &world.controls, &world.origin)
}

/// Why the physics thread did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The robots' control settings do not fit their models.
    #[error("{0}")]
    Input(#[from] InputError),
    #[error("cannot start the physics thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// The running physics thread. Dropping it stops the thread.
pub struct Simulation {
    handle: SimHandle,
    thread: Option<JoinHandle<()>>,
}

impl Simulation {
    /// Starts the physics thread on `world`, with its robots' controllers built here.
    pub fn start(world: &World, options: &SimConfig) -> Result<Self, StartError> {
        Self::start_with(world, controllers(world)?, options)
    }

    /// Starts the physics thread on `world` with `controllers` already built from it (the
    /// binary builds them once, to refuse a wrong config before anything starts). Adapters
    /// then follow the world through its handle (`SimHandle::follow`).
    pub fn start_with(
        world: &World,
        controllers: Controllers,
        options: &SimConfig,
    ) -> Result<Self, StartError> {
        let contacts = options
            .export_contacts
            .max(world.config.contact_sensor_capacity()) as usize;
        let autoplay: Vec<bool> = controllers
            .robots
            .iter()
            .map(|c| c.configured().autoplay && c.sequencer.preset_name().is_some())
            .collect();
        let generation = Arc::new(WorldGeneration::new(0, world, &controllers, contacts));
        let shared = Arc::new(Shared {
            world: std::sync::RwLock::new(generation.clone()),
            changing: Default::default(),
            stats: Default::default(),
            inbox: ArrayQueue::new(INBOX_CAPACITY),
            trash: ArrayQueue::new(TRASH_CAPACITY),
            named_snapshots: Default::default(),
            recording: Default::default(),
            log_limiter: Default::default(),
            mode: AtomicU8::new(options.mode as u8),
            speed_bits: AtomicU64::new(options.speed.to_bits()),
            pause_at_step: AtomicU64::new(u64::MAX),
            pause_cause: AtomicU8::new(physics::PauseCause::None as u8),
            stepping: Default::default(),
            granted: std::sync::OnceLock::new(),
            contacts,
            followers: Default::default(),
        });
        let (requests, inbox) = crossbeam_channel::bounded(64);
        let mut physics = physics::Physics::new(
            generation,
            shared.clone(),
            inbox,
            controllers,
            options.mode,
            options.speed,
            options.substeps,
            physics::Pacing {
                spin_us: options.spin_us,
                catch_up: options.catch_up,
            },
        )?;
        let asked = options.realtime_priority;
        let granted = shared.clone();
        let thread = std::thread::Builder::new()
            .name("physics".into())
            .spawn(move || {
                clock::tighten_timer_slack();
                let (got, refused) = physics.raise_priority(asked);
                let _ = granted.granted.set(got);
                log::info!("{}", priority::describe(asked, got, refused.as_ref()));
                crate::supervise::essential("physics", || physics.run());
            })?;
        let simulation = Self {
            handle: SimHandle { shared, requests },
            thread: Some(thread),
        };
        // Robots whose config asks for it start playing their preset.
        for (r, play) in autoplay.into_iter().enumerate() {
            if play {
                let _ = simulation.handle.play_preset(r, 0);
            }
        }
        Ok(simulation)
    }

    pub fn handle(&self) -> SimHandle {
        self.handle.clone()
    }

    /// Stops the physics thread and waits for it.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.handle.requests.send(Request {
                operation: Operation::Shutdown,
                generation: 0,
                reply: None,
            });
            let _ = thread.join();
        }
    }
}

impl Drop for Simulation {
    fn drop(&mut self) {
        self.stop();
    }
}
