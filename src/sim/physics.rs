//! The physics thread: the only owner of `MjData`. Each tick it takes operations, waits for
//! its deadline (realtime), then runs `substeps` steps of four phases: acquire commands,
//! control, `mj_step`, export the state. Nothing in a tick allocates, does I/O or takes a lock.
use super::Shared;
use super::clock::{now_ns, wait_until};
use super::commands::{Command, Operation, OperationDone, OperationError, Request};
use super::stats::StatsWindow;
use crate::config::SimMode;
use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A paced step that starts this much later than its deadline is an overrun; beyond
/// `MAX_LAG_PERIODS` the schedule is re-anchored instead of catching up in a burst.
const MAX_LAG_PERIODS: u64 = 50;

pub struct Physics {
    data: MjData<Arc<MjModel>>,
    shared: Arc<Shared>,
    requests: Receiver<Request>,
    mode: SimMode,
    speed: f64,
    substeps: u32,
    spin_ns: u64,
    step: u64,
    busy_ns_total: u64,
    deadline_ns: u64,
    window: StatsWindow,
}

enum Flow {
    Continue,
    Stop,
}

impl Physics {
    pub fn new(
        model: Arc<MjModel>,
        shared: Arc<Shared>,
        requests: Receiver<Request>,
        mode: SimMode,
        speed: f64,
        substeps: u32,
        spin_us: u32,
    ) -> Self {
        let mut data = MjData::new(model);
        data.forward();
        shared.state.publish(&data, 0);
        let window = StatsWindow::new(now_ns(), data.time());
        Self {
            data,
            shared,
            requests,
            mode,
            speed,
            substeps: substeps.max(1),
            spin_ns: spin_us as u64 * 1000,
            step: 0,
            busy_ns_total: 0,
            deadline_ns: now_ns(),
            window,
        }
    }

    fn period_ns(&self) -> u64 {
        let tick = self.data.model().opt().timestep * self.substeps as f64 / self.speed;
        (tick * 1e9).round().max(1.0) as u64
    }

    pub fn run(mut self) {
        self.publish_mode();
        loop {
            let flow = if self.mode == SimMode::Paused {
                self.wait_while_paused()
            } else {
                self.take_operations()
            };
            if let Flow::Stop = flow {
                return;
            }
            if self.mode == SimMode::Paused {
                continue;
            }
            if self.mode == SimMode::Realtime {
                self.pace();
            }
            for _ in 0..self.substeps {
                self.step_once();
                if self.step >= self.shared.pause_at_step.load(Ordering::Relaxed) {
                    // A batch run reached its last step: hold here, exactly.
                    self.mode = SimMode::Paused;
                    self.publish_mode();
                    break;
                }
            }
            self.window
                .maybe_publish(&self.shared.stats, now_ns(), self.data.time());
        }
    }

    /// Waits for this tick's deadline and records how late the tick starts.
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
        self.deadline_ns = if lateness > MAX_LAG_PERIODS * period {
            start + period
        } else {
            self.deadline_ns + period
        };
    }

    fn step_once(&mut self) {
        let started = now_ns();
        self.acquire_commands();
        // Control phase: controllers compute ctrl here (added with the control module).
        self.data.step();
        self.step += 1;
        self.shared.state.publish(&self.data, self.step);
        let stats = &self.shared.stats;
        stats.steps.store(self.step, Ordering::Relaxed);
        stats
            .sim_time_bits
            .store(self.data.time().to_bits(), Ordering::Relaxed);
        let bad_qacc = self.data.ffi().warning
            [mujoco_rs::mujoco_c::mjtWarning::mjWARN_BADQACC as usize]
            .number;
        stats
            .instabilities
            .store(bad_qacc.max(0) as u64, Ordering::Relaxed);
        let elapsed = now_ns() - started;
        self.busy_ns_total += elapsed;
        stats
            .busy_ns_total
            .store(self.busy_ns_total, Ordering::Relaxed);
        self.window.record_step(elapsed);
    }

    /// Applies every command that arrived before this step. Invalid ones are counted.
    fn acquire_commands(&mut self) {
        while let Some(command) = self.shared.inbox.pop() {
            match command {
                Command::SetCtrl { actuator, value } => {
                    let id = actuator as usize;
                    let model = self.data.model();
                    if id >= model.ffi().nu as usize || !value.is_finite() {
                        self.shared
                            .stats
                            .rejected_commands
                            .fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let value = if model.actuator_ctrllimited()[id] {
                        let [lo, hi] = model.actuator_ctrlrange()[id];
                        value.clamp(lo, hi)
                    } else {
                        value
                    };
                    self.data.ctrl_mut()[id] = value;
                }
            }
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

    fn done(&self) -> OperationDone {
        OperationDone {
            step: self.step,
            time: self.data.time(),
        }
    }

    fn handle(&mut self, request: Request) -> Flow {
        let result = match request.operation {
            Operation::Shutdown => {
                if let Some(reply) = request.reply {
                    let _ = reply.send(Ok(self.done()));
                }
                return Flow::Stop;
            }
            Operation::SetMode(mode) => {
                if mode == SimMode::Realtime && self.mode != SimMode::Realtime {
                    self.deadline_ns = now_ns();
                }
                self.mode = mode;
                self.publish_mode();
                Ok(self.done())
            }
            Operation::SetSpeed(speed) if speed.is_finite() && speed > 0.0 => {
                self.speed = speed;
                self.deadline_ns = now_ns();
                self.publish_mode();
                Ok(self.done())
            }
            Operation::SetSpeed(speed) => Err(OperationError::Rejected(format!(
                "speed must be a positive number, got {speed}"
            ))),
            Operation::Step(n) if self.mode == SimMode::Paused => {
                for _ in 0..n {
                    self.step_once();
                }
                Ok(self.done())
            }
            Operation::Step(_) => Err(OperationError::Rejected(
                "step N works while paused; pause the simulation first".into(),
            )),
        };
        if let Some(reply) = request.reply {
            let _ = reply.send(result);
        }
        Flow::Continue
    }

    fn publish_mode(&self) {
        self.shared.mode.store(self.mode as u8, Ordering::Relaxed);
        self.shared
            .speed_bits
            .store(self.speed.to_bits(), Ordering::Relaxed);
    }
}
