//! The legacy server thread: publishes every physics step's rows (fed through a tap ring by
//! the physics thread), keeps publishing at the step rate while paused, sends the discovery
//! JSON on its schedule, and turns `control` / `set_gains` messages into commands. Every
//! malformed message is dropped, counted and logged at a limited rate.
use super::codec::{self, CommandKind, DecodeError};
use super::rows::{ArticulationRows, TapOffsets};
use crate::config::{ControlSource, SimMode, ZmqConfig, ZmqEndpoints};
use crate::rate_limit::RateLimiter;
use crate::record::RecordRing;
use crate::sim::{
    Command, GainsUpdate, Operation, OperationError, SimHandle, StateSnapshot, TapLayout,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Steps the tap ring holds before the server must have published them.
const RING_ROWS: usize = 4096;

/// What a server did, for the live figures and the tests.
#[derive(Debug, Default)]
pub struct LegacyCounters {
    /// Steps (or paused ticks) whose rows went out.
    pub row_sets: AtomicU64,
    /// Messages handled (applied or dropped).
    pub messages_received: AtomicU64,
    pub messages_dropped: AtomicU64,
    pub commands_sent: AtomicU64,
    /// Control pairs skipped (unknown actuator id, NaN or infinite value).
    pub pairs_skipped: AtomicU64,
    /// set_gains entries skipped (no such actuator), and set_gains messages refused.
    pub gains_skipped: AtomicU64,
    /// Steps whose rows were lost because this server fell behind the physics thread.
    pub steps_lost: AtomicU64,
    /// Physics steps done when each recent control batch arrived (the batch applies in the
    /// next step); the last `ARRIVALS_KEPT`, oldest first.
    pub control_arrivals: std::sync::Mutex<std::collections::VecDeque<u64>>,
}

/// Control-batch arrival steps kept for diagnostics and the benchmark.
pub const ARRIVALS_KEPT: usize = 4096;

pub struct LegacyServer {
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    pub counters: Arc<LegacyCounters>,
    pub endpoints: ZmqEndpoints,
}

struct Sockets {
    // The context must outlive the sockets: it is dropped after them.
    state: zmq::Socket,
    control: zmq::Socket,
    info: zmq::Socket,
    _context: zmq::Context,
}

/// Why a legacy server did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("zmq {role} socket: {error}")]
    Socket {
        role: &'static str,
        error: zmq::Error,
    },
    #[error("cannot bind the legacy {role} socket to {endpoint}: {error}")]
    Bind {
        role: &'static str,
        endpoint: String,
        error: zmq::Error,
    },
    #[error("legacy server: eventfd: {0}")]
    Wakeup(std::io::Error),
    #[error("legacy server: {0}")]
    Tap(OperationError),
    #[error("legacy server thread: {0}")]
    Thread(std::io::Error),
}

/// What the rows of one world are read with: the ring the physics thread fills with a row per
/// step of it (tapped there), the row it is read into, where each part of the row lies and the
/// period of a published row. Made by `tap`, at start and at every world change alike.
struct Tapped {
    /// The world the rows are planned for.
    generation: u64,
    ring: Arc<RecordRing>,
    row: Vec<f64>,
    offsets: TapOffsets,
    period: Duration,
    /// The ring's drop count already reported.
    lost_seen: u64,
}

fn tap(
    handle: &SimHandle,
    world: &crate::sim::WorldGeneration,
    divider: u64,
) -> Result<Tapped, ServerError> {
    let f = world.model.ffi();
    let row_len = TapLayout::Legacy.row_len(f);
    let ring = Arc::new(RecordRing::with_wakeup(row_len, RING_ROWS).map_err(ServerError::Wakeup)?);
    handle
        .request_in(
            world.number,
            Operation::Tap {
                ring: ring.clone(),
                layout: TapLayout::Legacy,
            },
        )
        .map_err(ServerError::Tap)?;
    Ok(Tapped {
        generation: world.number,
        ring,
        row: vec![0.0; row_len],
        offsets: TapOffsets::of(&world.model),
        period: Duration::from_secs_f64(world.model.opt().timestep * divider as f64),
        lost_seen: 0,
    })
}

/// A socket of `kind` bound to `endpoint`; `max_message` (bytes) limits what a peer may send
/// (set before binding: the listener takes its options then).
fn bind(
    context: &zmq::Context,
    kind: zmq::SocketType,
    endpoint: &str,
    role: &'static str,
    max_message: Option<u64>,
) -> Result<zmq::Socket, ServerError> {
    let socket = context
        .socket(kind)
        .map_err(|error| ServerError::Socket { role, error })?;
    socket
        .set_linger(0)
        .map_err(|error| ServerError::Socket { role, error })?;
    if let Some(bytes) = max_message {
        // A peer that sends more is disconnected before the message is buffered.
        socket
            .set_maxmsgsize(bytes.min(i64::MAX as u64) as i64)
            .map_err(|error| ServerError::Socket { role, error })?;
    }
    socket.bind(endpoint).map_err(|error| ServerError::Bind {
        role,
        endpoint: endpoint.to_string(),
        error,
    })?;
    Ok(socket)
}

impl LegacyServer {
    pub fn start(
        handle: SimHandle,
        endpoints: ZmqEndpoints,
        options: &ZmqConfig,
        max_message_bytes: u64,
        cameras: &Arc<super::CameraList>,
    ) -> Result<Self, ServerError> {
        let context = zmq::Context::new();
        let state = bind(&context, zmq::PUB, &endpoints.state, "state", None)?;
        let info = bind(&context, zmq::PUB, &endpoints.info, "info", None)?;
        let control = bind(
            &context,
            zmq::SUB,
            &endpoints.control,
            "control",
            Some(max_message_bytes),
        )?;
        let world = handle.world();
        let divider = options.divider.max(1) as u64;
        let tapped = tap(&handle, &world, divider)?;
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(LegacyCounters::default());
        let mut worker = Worker {
            sockets: Sockets {
                state,
                control,
                info,
                _context: context,
            },
            handle,
            tapped,
            endpoints: endpoints.clone(),
            cameras: cameras.clone(),
            cameras_seen: 0,
            plans: Vec::new(),
            scratch: Vec::new(),
            pairs: Vec::new(),
            divider,
            publish_while_paused: options.publish_while_paused,
            ticks: 0,
            counters: counters.clone(),
            limiter: RateLimiter::default(),
            stop: stop.clone(),
        };
        worker.plan_rows(&world);
        let thread = std::thread::Builder::new()
            .name("legacy-zmq".into())
            .spawn(move || {
                crate::supervise::essential("legacy ZMQ", || worker.run());
            })
            .map_err(ServerError::Thread)?;
        log::info!(
            "legacy ZMQ protocol: state {}, control {}, info {}",
            endpoints.state,
            endpoints.control,
            endpoints.info
        );
        Ok(Self {
            thread: Some(thread),
            stop,
            counters,
            endpoints,
        })
    }

    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for LegacyServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

struct Worker {
    sockets: Sockets,
    handle: SimHandle,
    tapped: Tapped,
    /// This server's endpoints: robots spawned with the same ones join it.
    endpoints: ZmqEndpoints,
    /// The legacy camera streams, and the version of their list the rows were planned with.
    cameras: Arc<super::CameraList>,
    cameras_seen: u64,
    plans: Vec<ArticulationRows>,
    scratch: Vec<u8>,
    pairs: Vec<(u32, f32)>,
    divider: u64,
    publish_while_paused: bool,
    /// Physics steps seen (and ticks while paused): the clock of the discovery schedule.
    ticks: u64,
    counters: Arc<LegacyCounters>,
    limiter: RateLimiter,
    stop: Arc<AtomicBool>,
}

impl Worker {
    fn run(&mut self) {
        let mut next_paused_tick = Instant::now();
        let mut snapshot = self.handle.latest_state_buffer();
        while !self.stop.load(Ordering::Acquire) {
            // Wake on a control message or on a new step (the ring's eventfd), whichever first.
            let wake = self.tapped.ring.wake_fd().unwrap_or(-1);
            let mut items = [
                self.sockets.control.as_poll_item(zmq::POLLIN),
                zmq::PollItem::from_fd(wake, zmq::POLLIN),
            ];
            let _ = zmq::poll(&mut items, 1);
            self.tapped.ring.clear_wakeup();
            if self.handle.generation() != self.tapped.generation {
                self.follow_world();
                snapshot = self.handle.latest_state_buffer();
            } else if self.cameras.version() != self.cameras_seen {
                // The camera streams followed the world after the rows did.
                self.plan_rows(&self.handle.world());
            }
            self.take_commands();
            let published = self.drain_ring();
            if published {
                next_paused_tick = Instant::now() + self.tapped.period;
            } else if self.publish_while_paused
                && self.handle.mode() == SimMode::Paused
                && Instant::now() >= next_paused_tick
                && self.paused_state(&mut snapshot)
            {
                // Paused: the latest state again, at the step rate, as URLab does.
                self.tapped.row[0] = snapshot.step as f64;
                self.tapped.row[1] = snapshot.time;
                let parts = [
                    &snapshot.qpos,
                    &snapshot.qvel,
                    &snapshot.qacc,
                    &snapshot.sensordata,
                ];
                let mut at = 2;
                for part in parts {
                    self.tapped.row[at..at + part.len()].copy_from_slice(part);
                    at += part.len();
                }
                self.publish_row_set();
                self.tick();
                next_paused_tick += self.tapped.period;
                if next_paused_tick < Instant::now() {
                    next_paused_tick = Instant::now() + self.tapped.period;
                }
            }
        }
        // Rows of the last steps are still in the ring: publish them before leaving.
        let _ = self
            .handle
            .request(Operation::Untap(self.tapped.ring.clone()));
        self.drain_ring();
    }

    /// The latest state of the world the rows are planned for (not of a world a change
    /// swapped in meanwhile: its arrays would not fit the row); false when there is none or
    /// the world has changed.
    fn paused_state(&self, snapshot: &mut StateSnapshot) -> bool {
        let world = self.handle.world();
        let layout = world.layout();
        world.number == self.tapped.generation
            && 2 + layout.nq + layout.nv + layout.nv + layout.nsensordata <= self.tapped.row.len()
            && world.latest_state(snapshot)
    }

    /// Re-plans the rows for the world the physics thread now steps: the robots of this
    /// server that stay keep their rows (their ids move with the model), robots spawned with
    /// this server's endpoints join, deleted ones leave; a new tap ring sized for the model
    /// replaces the old one (the physics thread ended it at the change), and the discovery
    /// JSON goes out at once.
    fn follow_world(&mut self) {
        let world = self.handle.world();
        match tap(&self.handle, &world, self.divider) {
            Ok(tapped) => {
                self.tapped = tapped;
                self.plan_rows(&world);
            }
            Err(e) => {
                // Nothing is published for this world (the old ring is fed no more).
                log::error!(
                    "legacy ZMQ: the rows of world {} cannot be tapped: {e}",
                    world.number
                );
                self.tapped.generation = world.number;
            }
        }
    }

    /// The rows (and discovery JSON, sent at once) of the robots this server serves in
    /// `world`, with the camera streams as they are listed now; the control subscriptions
    /// follow the robots that come and go.
    fn plan_rows(&mut self, world: &crate::sim::WorldGeneration) {
        let (cameras_seen, camera_list) = self.cameras.get();
        self.cameras_seen = cameras_seen;
        let config = &world.config;
        let serves =
            |index: usize| config.zmq.enabled && config.zmq_endpoints(index) == self.endpoints;
        let robots: Vec<usize> = (0..world.robots.len()).filter(|r| serves(*r)).collect();
        for plan in &self.plans {
            if !robots.iter().any(|r| world.robots[*r].name == plan.name) {
                for filter in [
                    format!("{}/control ", plan.name),
                    format!("{}/set_gains ", plan.name),
                ] {
                    let _ = self.sockets.control.set_unsubscribe(filter.as_bytes());
                }
            }
        }
        let plans: Vec<ArticulationRows> = robots
            .iter()
            .map(|r| ArticulationRows::plan(&world.model, &world.robots[*r], *r, &camera_list))
            .collect();
        for plan in &plans {
            if !self.plans.iter().any(|p| p.name == plan.name) {
                for filter in [
                    format!("{}/control ", plan.name),
                    format!("{}/set_gains ", plan.name),
                ] {
                    let _ = self.sockets.control.set_subscribe(filter.as_bytes());
                }
            }
        }
        self.plans = plans;
        for plan in &self.plans {
            let _ = self.sockets.info.send(plan.discovery.as_bytes(), 0);
        }
    }

    /// Publishes the rows of every step waiting in the ring (every `divider`th step);
    /// returns whether any step arrived.
    fn drain_ring(&mut self) -> bool {
        let mut any = false;
        while self.tapped.ring.pop(&mut self.tapped.row) {
            any = true;
            if (self.tapped.row[0] as u64).is_multiple_of(self.divider) {
                self.publish_row_set();
            }
            self.tick();
        }
        let dropped = self.tapped.ring.dropped();
        let lost = dropped - self.tapped.lost_seen;
        if lost > 0 {
            self.counters.steps_lost.fetch_add(lost, Ordering::Relaxed);
            self.limiter.warn(
                "lost",
                &format!(
                    "legacy ZMQ: the rows of {lost} step(s) were lost: this server fell behind \
                     the physics thread"
                ),
            );
            self.tapped.lost_seen = dropped;
        }
        any
    }

    /// One physics step (or paused tick) on the discovery schedule's clock.
    fn tick(&mut self) {
        self.ticks += 1;
        if codec::info_due(self.ticks) {
            for plan in &self.plans {
                let _ = self.sockets.info.send(plan.discovery.as_bytes(), 0);
            }
        }
    }

    fn publish_row_set(&mut self) {
        let state = &self.sockets.state;
        let mut send = |topic: &[u8], payload: &[u8]| {
            // A PUB socket drops at its high-water mark instead of blocking.
            let _ = state.send(topic, zmq::SNDMORE);
            let _ = state.send(payload, 0);
        };
        for plan in &self.plans {
            let twist = self.handle.twist(plan.robot);
            let actions = self.handle.actions(plan.robot);
            plan.encode(
                &self.tapped.row,
                &self.tapped.offsets,
                twist,
                actions,
                &mut self.scratch,
                &mut send,
            );
        }
        self.counters.row_sets.fetch_add(1, Ordering::Relaxed);
    }

    fn take_commands(&mut self) {
        loop {
            match self.sockets.control.recv_multipart(zmq::DONTWAIT) {
                Ok(frames) => {
                    if let Err(e) = self.on_message(&frames) {
                        self.counters
                            .messages_dropped
                            .fetch_add(1, Ordering::Relaxed);
                        let key = format!("{:?}", std::mem::discriminant(&e));
                        self.limiter
                            .warn(&key, &format!("legacy ZMQ: dropped a message: {e}"));
                    }
                    // Counted once handled: a client that sees the count knows its message
                    // (a set_gains included) has taken effect or been dropped.
                    self.counters
                        .messages_received
                        .fetch_add(1, Ordering::Relaxed);
                }
                Err(zmq::Error::EAGAIN) => return,
                Err(e) => {
                    self.limiter
                        .warn("recv", &format!("legacy ZMQ: receive failed: {e}"));
                    return;
                }
            }
        }
    }

    fn on_message(&mut self, frames: &[Vec<u8>]) -> Result<(), DecodeError> {
        if frames.len() != 2 {
            return Err(DecodeError::FrameCount(frames.len()));
        }
        let (robot, kind) = codec::parse_command_topic(&frames[0])?;
        let plan = self
            .plans
            .iter()
            .find(|p| p.name == robot)
            .ok_or_else(|| DecodeError::UnknownTopic(robot.to_string()))?;
        let (index, name) = (plan.robot, plan.name.clone());
        match kind {
            CommandKind::Control => self.on_control(index, &name, &frames[1]),
            CommandKind::SetGains => self.on_set_gains(index, &name, &frames[1]),
        }
    }

    /// A control message: (actuator, value) pairs for robot `index`, sent as commands.
    fn on_control(&mut self, index: usize, name: &str, frame: &[u8]) -> Result<(), DecodeError> {
        if let Some(source) = self.handle.control_source(index)
            && source != ControlSource::Zmq
        {
            // The physics thread ignores (and counts) them: say why, once in a while.
            self.limiter.warn(
                "source",
                &format!(
                    "legacy ZMQ: robot '{}' takes its commands from {}, so its \
                     control messages are ignored (set control.source: zmq)",
                    name,
                    format!("{source:?}").to_lowercase()
                ),
            );
        }
        let nu = self.handle.model().ffi().nu as usize;
        let skipped = codec::decode_control(frame, nu, &mut self.pairs)?;
        if let Some(first) = skipped.first() {
            self.counters
                .pairs_skipped
                .fetch_add(skipped.len() as u64, Ordering::Relaxed);
            self.limiter.warn(
                "pair",
                &format!(
                    "legacy ZMQ: skipped {} control pair(s): {first}",
                    skipped.len()
                ),
            );
        }
        if let Ok(mut arrivals) = self.counters.control_arrivals.lock() {
            if arrivals.len() == ARRIVALS_KEPT {
                arrivals.pop_front();
            }
            arrivals.push_back(self.handle.stats().steps);
        }
        for (actuator, value) in &self.pairs {
            self.handle.send(Command::Actuator {
                source: ControlSource::Zmq,
                actuator: *actuator,
                value: *value as f64,
            });
        }
        self.counters
            .commands_sent
            .fetch_add(self.pairs.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// A set_gains message: gains of robot `index`'s actuators by name.
    fn on_set_gains(
        &mut self,
        index: usize,
        robot_name: &str,
        frame: &[u8],
    ) -> Result<(), DecodeError> {
        let entries = codec::decode_set_gains(frame)?;
        let robots = self.handle.robots();
        // A world change the server has not followed yet: the robot may be gone.
        let Some(map) = robots.get(index).filter(|m| m.name == robot_name) else {
            return Err(DecodeError::UnknownTopic(robot_name.to_string()));
        };
        let mut updates = Vec::with_capacity(entries.len());
        for (name, gains) in entries {
            if map
                .actuators
                .iter()
                .any(|a| a.name == name || a.full_name == name)
            {
                updates.push((
                    name,
                    GainsUpdate {
                        kp: gains.kp,
                        kv: gains.kv,
                        torque_limit: gains.torque_limit,
                    },
                ));
            } else {
                self.counters.gains_skipped.fetch_add(1, Ordering::Relaxed);
                self.limiter.warn(
                    "gains-name",
                    &format!(
                        "legacy ZMQ: set_gains names no actuator '{name}' of '{}'",
                        map.name
                    ),
                );
            }
        }
        if let Err(e) = self.handle.set_gains(index, &updates) {
            self.counters.gains_skipped.fetch_add(1, Ordering::Relaxed);
            self.limiter
                .warn("gains", &format!("legacy ZMQ: set_gains refused: {e}"));
        }
        Ok(())
    }
}
