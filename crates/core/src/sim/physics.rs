//! The physics thread: the only owner of `MjData`. Each tick it takes operations, waits for
//! its deadline (realtime), then runs `substeps` steps of four phases: acquire commands,
//! control, `mj_step` (or a kinematic playback row), export the state. Nothing in a step
//! allocates, frees, does I/O or takes a lock.
use super::Shared;
use super::clock::{now_ns, wait_until};
use super::commands::{Command, OperationResult, Request, Stamped, Trash};
use super::priority::{self, Granted};
use super::stats::StatsWindow;
use super::tap::{Tap, TapLayout};
use super::world::WorldGeneration;
use crate::config::{ControlMode, OnDivergence, SimMode};
use crate::control::{ActuatorKind, Controllers, TwistCommand};
use crate::record::Playback;
use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};
use mujoco_rs::prelude::*;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Stamped commands waiting for their step.
const PENDING_CAPACITY: usize = 1 << 16;
/// External wrenches active at once.
pub(super) const MAX_WRENCHES: usize = 16;
/// Rings fed a row per step at once.
pub(super) const MAX_TAPS: usize = 4;

#[derive(Debug, Clone, Copy)]
pub(super) struct ActiveWrench {
    pub body: usize,
    pub wrench: [f64; 6],
    pub until: f64,
}

/// A "step N while paused" request in progress: one step per loop turn, so the thread keeps
/// taking operations (a pause or a mode change ends it early) however large N is.
pub(super) struct Stepping {
    pub until: u64,
    pub requested: u64,
    pub reply: Option<crossbeam_channel::Sender<OperationResult>>,
    /// When its last step was done (0: not yet); its answer waits for the topics.
    pub finished_ns: u64,
}

pub(super) struct ActivePlayback {
    pub rows: Box<Playback>,
    /// Sim time at which playback started.
    pub start_time: f64,
    /// Rows shown so far (a per-step playback shows the next each step).
    pub played: usize,
}

pub struct Physics {
    /// The world `data` was made from (its model is the one `data` holds).
    pub(super) world: Arc<WorldGeneration>,
    pub(super) data: MjData<Arc<MjModel>>,
    pub(super) shared: Arc<Shared>,
    requests: Receiver<Request>,
    pub(super) mode: SimMode,
    pub(super) speed: f64,
    substeps: u32,
    spin_ns: u64,
    /// How late a paced tick may start and still be caught up by stepping back to back.
    catch_up_ns: u64,
    /// What the kernel granted this thread (`raise_priority`), and whether SCHED_FIFO is on
    /// now: only while stepping in real time, where the thread sleeps between ticks.
    granted: Granted,
    fifo_now: bool,
    pub(super) step: u64,
    busy_ns_total: u64,
    /// Of which inside MuJoCo's `mj_step`.
    mujoco_ns_total: u64,
    pub(super) deadline_ns: u64,
    pub(super) window: StatsWindow,
    pub(super) controllers: Controllers,
    pub(super) pending: VecDeque<Stamped>,
    pub(super) wrenches: [Option<ActiveWrench>; MAX_WRENCHES],
    wrench_applied: bool,
    /// Rings that get a row per step (recorder, legacy publishers).
    pub(super) taps: [Option<Tap>; MAX_TAPS],
    /// When the topics' samples fall due, and where they go.
    pub(super) sample_clock: super::samples::SampleClock,
    pub(super) playback: Option<ActivePlayback>,
    pub(super) stepping: Option<Stepping>,
    /// The last good state and the answer to a diverging step.
    pub(super) guard: super::divergence::Guard,
}

/// The knobs of realtime pacing (`sim.spin_us`, `sim.catch_up`).
#[derive(Debug, Clone, Copy)]
pub struct Pacing {
    pub spin_us: u32,
    /// Seconds a paced run may fall behind and still catch up.
    pub catch_up: f64,
}

/// Why the simulation last paused (kept in `Shared::pause_cause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PauseCause {
    /// Not paused since it started (or it started paused).
    None = 0,
    /// A batch run's last step.
    LastStep = 1,
    /// A playback or replay ran out of rows.
    PlaybackEnded = 2,
    /// A step diverged (`sim.on_divergence` restore or pause).
    Diverged = 3,
    /// Someone asked for it (a service, the console, a legacy client).
    Requested = 4,
}

impl PauseCause {
    pub fn from_u8(value: u8) -> Self {
        match value {
            1 => Self::LastStep,
            2 => Self::PlaybackEnded,
            3 => Self::Diverged,
            4 => Self::Requested,
            _ => Self::None,
        }
    }
}

pub(super) enum Flow {
    Continue,
    Stop,
}

impl Physics {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        world: Arc<WorldGeneration>,
        shared: Arc<Shared>,
        requests: Receiver<Request>,
        mut controllers: Controllers,
        mode: SimMode,
        speed: f64,
        substeps: u32,
        pacing: Pacing,
    ) -> std::io::Result<Self> {
        let mut data = super::memory::fresh_data(world.model.clone()).ok_or_else(|| {
            std::io::Error::other("MuJoCo could not allocate the simulation data (mjData)")
        })?;
        super::initial::apply(
            &world.model,
            &world.robots,
            &mut data,
            &mut controllers,
            |_| true,
            drop,
        );
        data.forward();
        world.state.publish(&data, 0);
        let window = StatsWindow::new(now_ns(), data.time());
        let guard = super::divergence::Guard::new(&world.model, world.config.sim.on_divergence);
        let sample_clock =
            super::samples::SampleClock::new(world.samples.clone(), world.model.opt().timestep);
        Ok(Self {
            sample_clock,
            world,
            data,
            shared,
            requests,
            mode,
            speed,
            substeps: substeps.max(1),
            spin_ns: u64::from(pacing.spin_us) * 1000,
            catch_up_ns: (pacing.catch_up * 1e9) as u64,
            granted: Granted::Normal,
            fifo_now: false,
            step: 0,
            busy_ns_total: 0,
            mujoco_ns_total: 0,
            deadline_ns: now_ns(),
            window,
            controllers,
            pending: VecDeque::with_capacity(PENDING_CAPACITY),
            wrenches: [None; MAX_WRENCHES],
            wrench_applied: false,
            taps: [const { None }; MAX_TAPS],
            playback: None,
            stepping: None,
            guard,
        })
    }

    /// Raises this thread as far as the kernel allows (SCHED_FIFO at `realtime_priority`,
    /// else a raised niceness); `run` then keeps SCHED_FIFO to realtime mode. Returns what
    /// was granted, and the kernel's reason when it fell short.
    pub fn raise_priority(&mut self, realtime_priority: u8) -> (Granted, Option<std::io::Error>) {
        let (granted, refused) = priority::raise(realtime_priority);
        self.granted = granted;
        self.fifo_now = matches!(granted, Granted::Fifo(_));
        (granted, refused)
    }

    /// SCHED_FIFO while stepping in real time, the normal scheduler otherwise: a fast run
    /// steps back to back and must leave the other threads their share.
    fn follow_priority(&mut self) {
        let Granted::Fifo(level) = self.granted else {
            return;
        };
        let wanted = self.mode == SimMode::Realtime;
        if wanted != self.fifo_now {
            self.fifo_now = if wanted {
                priority::set_fifo(level)
            } else {
                !priority::set_normal(0)
            };
        }
    }

    fn period_ns(&self) -> u64 {
        let tick = self.data.model().opt().timestep * self.substeps as f64 / self.speed;
        (tick * 1e9).round().max(1.0) as u64
    }

    pub fn run(mut self) {
        self.publish_mode();
        loop {
            let stepping = self.stepping.is_some();
            let flow = if self.mode == SimMode::Paused && !stepping {
                self.wait_while_paused()
            } else {
                self.take_operations()
            };
            if let Flow::Stop = flow {
                return;
            }
            // A reader that just attached starts from the state as it is.
            self.sample_clock.current(&self.data, self.step, false);
            if self.mode == SimMode::Paused {
                if self.stepping.is_some() {
                    self.step_while_paused();
                }
                continue;
            }
            if self.mode == SimMode::Realtime {
                self.pace();
            }
            for _ in 0..self.substeps {
                self.step_once();
                let last = self.step >= self.shared.pause_at_step.load(Ordering::Relaxed);
                if last || self.mode == SimMode::Paused {
                    // A batch run reached its last step, or a playback ended: hold here.
                    self.mode = SimMode::Paused;
                    self.pause_for(if last {
                        PauseCause::LastStep
                    } else {
                        PauseCause::PlaybackEnded
                    });
                    break;
                }
            }
            self.window
                .maybe_publish(&self.shared.stats, now_ns(), self.data.time());
        }
    }

    /// Waits for this tick's deadline and records how late the tick starts. A tick later
    /// than `catch_up_ns` restarts the schedule from now: the time lost is let go (and
    /// counted) rather than caught up in a burst of back-to-back steps.
    fn pace(&mut self) {
        let period = self.period_ns();
        wait_until(self.deadline_ns, self.spin_ns);
        let start = now_ns();
        let lateness = start.saturating_sub(self.deadline_ns);
        let stats = &self.shared.stats;
        stats.lateness.record(lateness);
        if lateness > period {
            stats.overruns.fetch_add(1, Ordering::Relaxed);
        }
        self.deadline_ns = if lateness > self.catch_up_ns.max(period) {
            stats.lag_resets.fetch_add(1, Ordering::Relaxed);
            stats.let_go_ns.fetch_add(lateness, Ordering::Relaxed);
            start + period
        } else {
            self.deadline_ns + period
        };
    }

    pub(super) fn step_once(&mut self) {
        let started = now_ns();
        self.acquire_commands();
        let mut diverged = false;
        if self.playback.is_some() {
            self.playback_step();
        } else {
            self.control();
            let mujoco_started = now_ns();
            self.data.step();
            self.mujoco_ns_total += now_ns() - mujoco_started;
            match self.guard.check(&mut self.data) {
                Some((found, dof)) => {
                    self.diverged(found, dof);
                    diverged = true;
                }
                None => self.guard.keep(&self.data, self.step),
            }
        }
        self.step += 1;
        self.export();
        if diverged && self.guard.policy() != OnDivergence::Reset {
            // A "step N" request ends here, once this step's state and figures are out: its
            // steps would diverge again.
            self.interrupt_steps();
        }
        let elapsed = now_ns() - started;
        self.busy_ns_total += elapsed;
        self.shared
            .stats
            .busy_ns_total
            .store(self.busy_ns_total, Ordering::Relaxed);
        self.shared
            .stats
            .mujoco_ns_total
            .store(self.mujoco_ns_total, Ordering::Relaxed);
        self.window.record_step(elapsed);
    }

    fn export(&mut self) {
        self.world.state.publish(&self.data, self.step);
        let lossless = self.mode != SimMode::Realtime;
        self.sample_clock
            .after_step(&self.data, self.step, lossless);
        let stats = &self.shared.stats;
        stats.steps.store(self.step, Ordering::Relaxed);
        stats
            .sim_time_bits
            .store(self.data.time().to_bits(), Ordering::Relaxed);
        for (r, controller) in self.controllers.robots.iter().enumerate() {
            if let Some(slot) = self.world.twists.get(r) {
                slot.store(&controller.active_twist(self.data.time()));
            }
        }
        let (step, time) = (self.step as f64, self.data.time());
        for tap in self.taps.iter_mut().flatten() {
            let d = &self.data;
            // Fast and stepped runs lose no row: the tap's reader sets their pace.
            let push = |parts: &[&[f64]]| tap.ring.push_or_wait(parts, lossless);
            match (tap.layout, &mut tap.columns) {
                (TapLayout::Recording, Some(columns)) => {
                    push(&[columns.fill(time, d.qpos(), d.qvel())])
                }
                (TapLayout::Recording, None) => push(&[&[time], d.qpos(), d.qvel()]),
                (TapLayout::Legacy, _) => {
                    push(&[&[step, time], d.qpos(), d.qvel(), d.qacc(), d.sensordata()])
                }
                (TapLayout::Steps, _) => push(&[
                    &[step, time],
                    d.qpos(),
                    d.qvel(),
                    d.act(),
                    d.ctrl(),
                    d.sensordata(),
                ]),
            };
        }
    }

    /// Applies every command due in this step; keeps stamped ones for later steps.
    fn acquire_commands(&mut self) {
        let next = self.step + 1;
        while let Some(stamped) = self.shared.inbox.pop() {
            if stamped.at_step > next {
                if self.pending.len() == PENDING_CAPACITY {
                    self.shared
                        .stats
                        .dropped_commands
                        .fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                // Keep arrival order among commands for the same step.
                let at = self
                    .pending
                    .partition_point(|p| p.at_step <= stamped.at_step);
                self.pending.insert(at, stamped);
                continue;
            }
            if stamped.at_step != 0 && stamped.at_step < next {
                self.shared
                    .stats
                    .late_commands
                    .fetch_add(1, Ordering::Relaxed);
            }
            self.apply(stamped);
        }
        while self.pending.front().is_some_and(|p| p.at_step <= next) {
            if let Some(stamped) = self.pending.pop_front() {
                self.apply(stamped);
            }
        }
    }

    fn apply(&mut self, stamped: Stamped) {
        let stats = &self.shared.stats;
        if stamped.generation != self.world.number {
            // Its ids belong to a world that has changed since it was sent.
            stats.stale_commands.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let command = stamped.command;
        let time = self.data.time();
        match command {
            Command::Actuator {
                source,
                actuator,
                value,
            } => {
                let id = actuator as usize;
                if !value.is_finite() || id >= self.controllers.owner.len() {
                    stats.rejected_commands.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                let Some((r, i)) = self.controllers.owner[id] else {
                    // An actuator of no robot: straight to ctrl.
                    let model = self.data.model();
                    let value = if model.actuator_ctrllimited()[id] {
                        let [lo, hi] = model.actuator_ctrlrange()[id];
                        crate::control::bounded(value, lo, hi)
                    } else {
                        value
                    };
                    self.data.ctrl_mut()[id] = value;
                    return;
                };
                let robot = &mut self.controllers.robots[r];
                if robot.source != source {
                    stats.ignored_commands.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                let info = &robot.actuators[i];
                // A PD target is clamped to the joint range by the PD law; a ctrl value is
                // clamped to the actuator's ctrlrange here.
                let pd_target = robot.mode == ControlMode::Pd
                    && info.kind == ActuatorKind::Force
                    && info.joint.is_some();
                robot.values[i] = if pd_target {
                    value
                } else {
                    match info.ctrlrange {
                        Some([lo, hi]) => crate::control::bounded(value, lo, hi),
                        None => value,
                    }
                };
            }
            // A twist is not an actuator command: whoever drives the actuators, it reaches the
            // base controller and the legacy twist row (a ROS teleop feeding a ZMQ policy).
            Command::Twist {
                source: _,
                robot,
                linear_x,
                linear_y,
                angular_z,
            } => {
                let values = [linear_x, linear_y, angular_z];
                let Some(controller) = self.controllers.robots.get_mut(robot as usize) else {
                    stats.rejected_commands.fetch_add(1, Ordering::Relaxed);
                    return;
                };
                if values.iter().any(|v| !v.is_finite()) {
                    stats.rejected_commands.fetch_add(1, Ordering::Relaxed);
                } else {
                    controller.twist = TwistCommand {
                        linear_x,
                        linear_y,
                        angular_z,
                        stamp: time,
                    };
                }
            }
            Command::StopBase { robot } => match self.controllers.robots.get_mut(robot as usize) {
                Some(controller) => controller.stop_base(),
                None => {
                    stats.rejected_commands.fetch_add(1, Ordering::Relaxed);
                }
            },
        }
    }

    /// The control phase: controllers write ctrl; active wrenches go to xfrc_applied.
    fn control(&mut self) {
        let time = self.data.time();
        let sizes = self.data.model().ffi();
        let (nq, nv, nu) = (sizes.nq as usize, sizes.nv as usize, sizes.nu as usize);
        // SAFETY: only the raw array pointers are used, below.
        let raw = unsafe { self.data.ffi_mut() };
        // SAFETY: MjData owns these arrays with exactly these lengths; they do not overlap,
        // and nothing else touches `data` while the slices live.
        let (qpos, qvel, bias, ctrl) = unsafe {
            (
                std::slice::from_raw_parts(raw.qpos, nq),
                std::slice::from_raw_parts_mut(raw.qvel, nv),
                std::slice::from_raw_parts(raw.qfrc_bias, nv),
                std::slice::from_raw_parts_mut(raw.ctrl, nu),
            )
        };
        for robot in &mut self.controllers.robots {
            robot.compute(qpos, qvel, bias, ctrl, time);
        }
        if self.wrench_applied || self.wrenches.iter().any(Option::is_some) {
            let xfrc = self.data.xfrc_applied_mut();
            for row in xfrc.iter_mut() {
                *row = [0.0; 6];
            }
            self.wrench_applied = false;
            for slot in &mut self.wrenches {
                match slot {
                    Some(w) if w.until > time => {
                        for (a, b) in xfrc[w.body].iter_mut().zip(w.wrench) {
                            *a += b;
                        }
                        self.wrench_applied = true;
                    }
                    _ => *slot = None,
                }
            }
        }
    }

    /// Kinematic playback: sets qpos (and qvel) from the rows at this step's time, then
    /// computes the derived quantities without integrating.
    fn playback_step(&mut self) {
        let Some(active) = &mut self.playback else {
            return;
        };
        let dt = self.data.model().opt().timestep;
        let rows = &active.rows;
        let last = rows.times.len() - 1;
        let (t, a, b, w, finished) = if rows.per_step {
            // One recorded step per step, at its recorded time: nothing is interpolated.
            let row = active.played.min(last);
            active.played += 1;
            (rows.times[row], row, row, 0.0, row == last)
        } else {
            let t = self.data.time() + dt;
            // The first playback step shows the first row; rows are timed relative to it.
            let row_time = rows.times[0] + (t - active.start_time - dt);
            let k = rows.times.partition_point(|r| *r <= row_time + 1e-12);
            let (a, b, w) = match k {
                0 => (0, 0, 0.0),
                k if k > last => (last, last, 0.0),
                k => (
                    k - 1,
                    k,
                    (row_time - rows.times[k - 1]) / (rows.times[k] - rows.times[k - 1]),
                ),
            };
            (t, a, b, w, k > last)
        };
        let (nq, nv) = (rows.qpos_index.len(), rows.qvel_index.len());
        // A NaN cell is a gap in the recording: that entry keeps its value (qvel: 0).
        let between = |x: f64, y: f64| if w == 0.0 { x } else { x + w * (y - x) };
        {
            let qpos = self.data.qpos_mut();
            for (c, &index) in rows.qpos_index.iter().enumerate() {
                let q = between(rows.qpos[a * nq + c], rows.qpos[b * nq + c]);
                if !q.is_nan() {
                    qpos[index] = q;
                }
            }
        }
        {
            let qvel = self.data.qvel_mut();
            qvel.fill(0.0);
            for (c, &index) in rows.qvel_index.iter().enumerate() {
                let v = between(rows.qvel[a * nv + c], rows.qvel[b * nv + c]);
                if !v.is_nan() {
                    qvel[index] = v;
                }
            }
        }
        // The model lives in the Arc that `data` holds, so the pointer outlives this call.
        let model: *const mujoco_rs::mujoco_c::mjModel = self.data.model().ffi();
        // SAFETY: only qpos and time are written through it.
        let raw = unsafe { self.data.ffi_mut() };
        // Recorded steps hold the physics' own quaternions; rows from elsewhere may not be unit.
        if !rows.per_step {
            // SAFETY: mj_normalizeQuat reads the model and rewrites the quaternions of qpos in
            // place.
            unsafe { mujoco_rs::mujoco_c::mj_normalizeQuat(model, raw.qpos) };
        }
        raw.time = t;
        self.data.forward();
        if finished {
            if let Some(done) = self.playback.take() {
                self.trash(Trash::Playback(done.rows));
            }
            self.mode = SimMode::Paused;
        }
    }

    /// Answers a step that diverged as `sim.on_divergence` says, and reports it (numbers
    /// only: the handle's side tells it).
    fn diverged(&mut self, found: super::divergence::Found, dof: i32) {
        super::divergence::report(&self.shared.stats, found, dof, self.data.time());
        match self.guard.policy() {
            OnDivergence::Restore => {
                self.guard.restore(&mut self.data);
                self.mode = SimMode::Paused;
                self.pause_for(PauseCause::Diverged);
            }
            OnDivergence::Reset => {
                let time = self.data.time();
                let _ = self.reset_to_initial(Some(time));
            }
            OnDivergence::Pause => {
                self.mode = SimMode::Paused;
                self.pause_for(PauseCause::Diverged);
            }
        }
    }

    /// Hands an owned value to the handle side for dropping.
    pub(super) fn trash(&self, item: Trash) {
        if let Err(item) = self.shared.trash.push(item) {
            // The handle side has not emptied the queue: dropping here is the lesser evil.
            drop(item);
        }
    }

    fn take_operations(&mut self) -> Flow {
        loop {
            match self.requests.try_recv() {
                Ok(request) => {
                    if let Flow::Stop = self.handle(request) {
                        return Flow::Stop;
                    }
                }
                Err(TryRecvError::Empty) => return Flow::Continue,
                Err(TryRecvError::Disconnected) => return Flow::Stop,
            }
        }
    }

    fn wait_while_paused(&mut self) -> Flow {
        match self.requests.recv_timeout(Duration::from_millis(100)) {
            Ok(request) => self.handle(request),
            Err(RecvTimeoutError::Timeout) => {
                self.window
                    .maybe_publish(&self.shared.stats, now_ns(), self.data.time());
                Flow::Continue
            }
            Err(RecvTimeoutError::Disconnected) => Flow::Stop,
        }
    }

    pub(super) fn publish_mode(&mut self) {
        self.follow_priority();
        self.shared.mode.store(self.mode as u8, Ordering::Relaxed);
        self.shared
            .speed_bits
            .store(self.speed.to_bits(), Ordering::Relaxed);
    }

    /// Publishes a pause and what caused it (a batch run that pauses short of its last
    /// step ends with it).
    pub(super) fn pause_for(&mut self, cause: PauseCause) {
        self.shared
            .pause_cause
            .store(cause as u8, Ordering::Relaxed);
        self.publish_mode();
    }

    /// Publishes the current state again (after an operation changed it without a step).
    pub(super) fn republish(&mut self) {
        self.data.forward();
        self.world.state.publish(&self.data, self.step);
        self.sample_clock.current(&self.data, self.step, true);
        self.shared
            .stats
            .sim_time_bits
            .store(self.data.time().to_bits(), Ordering::Relaxed);
    }
}
