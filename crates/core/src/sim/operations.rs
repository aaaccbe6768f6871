//! How the physics thread takes operations between steps: the dispatch to each family's half
//! (in `ops`), stepping N, the answers, world changes, and what goes back for dropping. Each
//! operation checks its input and answers with an error instead of touching MuJoCo with it.
use super::commands::{Operation, OperationDone, OperationError, OperationResult, Request, Trash};
use super::physics::{Flow, Physics, Stepping};
use crate::config::SimMode;
use crate::control::Trajectory;
use std::sync::Arc;

/// How long a finished step request waits for the topics to send its samples.
const SAMPLES_PATIENCE_NS: u64 = 1_000_000_000;

impl Physics {
    pub(in crate::sim) fn done(&self) -> OperationDone {
        OperationDone {
            step: self.step,
            time: self.data.time(),
            snapshot: None,
        }
    }

    pub(in crate::sim) fn trash_trajectory(&self, trajectory: Option<Box<Trajectory>>) {
        if let Some(t) = trajectory {
            self.trash(Trash::Trajectory(t));
        }
    }

    pub(in crate::sim) fn robot_index(&self, robot: usize) -> Result<usize, OperationError> {
        if robot < self.controllers.robots.len() {
            Ok(robot)
        } else {
            Err(OperationError::NoRobot(robot))
        }
    }

    pub(super) fn handle(&mut self, request: Request) -> Flow {
        if let super::commands::Operation::Shutdown = request.operation {
            if let Some(reply) = request.reply {
                let _ = reply.send(Ok(self.done()));
            }
            return Flow::Stop;
        }
        if let super::commands::Operation::Step(n) = request.operation {
            self.begin_steps(n, request.reply);
            return Flow::Continue;
        }
        if request.generation != self.world.number && request.operation.names_world_ids() {
            let stale = Err(OperationError::WorldChanged {
                now: self.world.number,
            });
            self.trash_operation(request.operation);
            self.answer(request.reply, stale);
            return Flow::Continue;
        }
        let result = self.carry_out(request.operation);
        // Operations that switch sources (set, reset, restore) show on the handle side.
        for (slot, robot) in self.world.sources.iter().zip(&self.controllers.robots) {
            slot.store(robot.source as u8, std::sync::atomic::Ordering::Relaxed);
        }
        self.answer(request.reply, result);
        Flow::Continue
    }

    fn answer(
        &self,
        reply: Option<crossbeam_channel::Sender<OperationResult>>,
        result: OperationResult,
    ) {
        if let Some(reply) = reply {
            let _ = reply.send(result);
            // The requester may drop its receiver first; the channel must not be freed here.
            self.trash(Trash::Reply(reply));
        }
    }

    /// Step N: the steps run one per loop turn (`step_while_paused`), and the reply goes out
    /// when the last is done.
    fn begin_steps(&mut self, n: u64, reply: Option<crossbeam_channel::Sender<OperationResult>>) {
        let refusal = if self.mode != SimMode::Paused {
            Some(OperationError::StepWhileRunning)
        } else if self.stepping.is_some() {
            Some(OperationError::StepAlreadyRunning)
        } else {
            None
        };
        if let Some(refusal) = refusal {
            return self.answer(reply, Err(refusal));
        }
        if n == 0 {
            return self.answer(reply, Ok(self.done()));
        }
        self.stepping = Some(Stepping {
            until: self.step.saturating_add(n),
            requested: n,
            reply,
            finished_ns: 0,
        });
        self.shared
            .stepping
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// One step of a running step request; answers it after its last step, once the topics
    /// have sent what its steps sampled (a client that reads after the answer sees the state
    /// it stepped to), or after `SAMPLES_PATIENCE_NS` if they are stuck.
    pub(super) fn step_while_paused(&mut self) {
        let Some(stepping) = &self.stepping else {
            return;
        };
        let now = super::clock::now_ns();
        if stepping.finished_ns == 0 {
            self.step_once();
            self.window
                .maybe_publish(&self.shared.stats, now, self.data.time());
            match self.stepping.as_mut() {
                Some(s) if self.step >= s.until => s.finished_ns = now.max(1),
                _ => return,
            }
        }
        let finished_ns = self.stepping.as_ref().map_or(now, |s| s.finished_ns);
        if !self.sample_clock.drained() && now.saturating_sub(finished_ns) < SAMPLES_PATIENCE_NS {
            std::thread::sleep(std::time::Duration::from_micros(50));
            return;
        }
        if let Some(stepping) = self.stepping.take() {
            self.shared
                .stepping
                .store(false, std::sync::atomic::Ordering::Release);
            let done = Ok(self.done());
            self.answer(stepping.reply, done);
        }
    }

    /// A mode change ends a running step request early.
    pub(super) fn interrupt_steps(&mut self) {
        if let Some(stepping) = self.stepping.take() {
            self.shared
                .stepping
                .store(false, std::sync::atomic::Ordering::Release);
            let done = stepping.requested - (stepping.until - self.step);
            let interrupted = OperationError::StepInterrupted {
                done,
                requested: stepping.requested,
            };
            self.answer(stepping.reply, Err(interrupted));
        }
    }

    fn carry_out(&mut self, operation: Operation) -> OperationResult {
        match operation {
            Operation::Shutdown => unreachable!("handled before"),
            Operation::SetMode(mode) => self.set_mode(mode)?,
            Operation::SetSpeed(speed) => self.set_speed(speed)?,
            Operation::Step(_) => unreachable!("handled before"),
            Operation::Reset => self.reset_all()?,
            Operation::ResetToKeyframe(key) => self.reset_to_keyframe(key)?,
            Operation::HoldKeyframe(key) => self.hold_keyframe(key)?,
            Operation::CaptureSnapshot(snapshot) => return self.capture(snapshot),
            Operation::RestoreSnapshot(snapshot) => {
                let result = self.restore(&snapshot);
                self.trash(Trash::Snapshot(snapshot));
                result?;
            }
            Operation::ApplyWrench {
                body,
                wrench,
                duration,
            } => self.apply_wrench(body, wrench, duration)?,
            Operation::SetBodyPose {
                body,
                position,
                quaternion_wxyz,
                velocity_world,
            } => self.place_body(body, position, quaternion_wxyz, velocity_world)?,
            Operation::SetSource { robot, source } => {
                let r = self.robot_index(robot)?;
                self.controllers.robots[r].source = source;
            }
            Operation::SetControlMode { robot, mode } => {
                let r = self.robot_index(robot)?;
                self.controllers.robots[r].mode = mode;
            }
            Operation::SetGravityCompensation { robot, enabled } => {
                let r = self.robot_index(robot)?;
                self.controllers.robots[r].gravity_compensation = enabled;
            }
            Operation::SetGains {
                robot,
                gains,
                enable_pd,
            } => self.set_gains(robot, gains, enable_pd)?,
            Operation::FollowTrajectory { robot, trajectory } => {
                self.follow_trajectory(robot, trajectory)?
            }
            Operation::CancelTrajectory { robot } => {
                let r = self.robot_index(robot)?;
                let old = self.controllers.robots[r].cancel_trajectory();
                self.trash_trajectory(old);
            }
            Operation::LoadPreset { robot, preset } => self.load_preset(robot, preset)?,
            Operation::PlayPreset { robot, pose, delay } => self.play_preset(robot, pose, delay)?,
            Operation::StopPreset { robot } => {
                let r = self.robot_index(robot)?;
                self.controllers.robots[r].stop_sequencer();
            }
            Operation::Tap { ring, layout } => self.tap(ring, layout)?,
            Operation::Untap(ring) => self.untap(ring)?,
            Operation::Playback(rows) => self.playback(rows)?,
            Operation::ChangeWorld(next) => self.change_world(next)?,
            Operation::StopPlayback => {
                if let Some(old) = self.playback.take() {
                    self.trash(Trash::Playback(old.rows));
                }
            }
        }
        Ok(self.done())
    }

    /// Hands what a refused operation brought in back for dropping.
    fn trash_operation(&self, operation: Operation) {
        match operation {
            Operation::CaptureSnapshot(s) | Operation::RestoreSnapshot(s) => {
                self.trash(Trash::Snapshot(s))
            }
            Operation::SetGains { gains, .. } => self.trash(Trash::Gains(gains)),
            Operation::FollowTrajectory { trajectory, .. } => {
                self.trash(Trash::Trajectory(trajectory))
            }
            Operation::LoadPreset { preset, .. } => self.trash(Trash::Preset(preset)),
            Operation::Tap { ring, .. } | Operation::Untap(ring) => self.trash(Trash::Ring(ring)),
            Operation::Playback(rows) => self.trash(Trash::Playback(rows)),
            Operation::ChangeWorld(next) => self.trash(Trash::World(next)),
            _ => {}
        }
    }

    /// Swaps in the next world: the state of what stays (joints, actuators, mocap bodies by
    /// name; the controllers of the robots that stay, with their commands, gains,
    /// trajectories and presets) carries over, then the old world goes out for dropping.
    /// Wrenches, playback and taps end: their ids and row sizes belong to the old model.
    fn change_world(
        &mut self,
        mut next: Box<super::world::NextWorld>,
    ) -> Result<(), OperationError> {
        let started = super::clock::now_ns();
        if next.replaces != self.world.number {
            let now = self.world.number;
            self.trash(Trash::World(next));
            return Err(OperationError::WorldChanged { now });
        }
        if !next.fresh {
            self.carry_into(&mut next);
        }
        std::mem::swap(&mut self.data, &mut next.data);
        std::mem::swap(&mut self.controllers, &mut next.controllers);
        std::mem::swap(&mut self.world, &mut next.generation);
        std::mem::swap(&mut self.guard, &mut next.guard);
        std::mem::swap(&mut self.sample_clock, &mut next.sample_clock);
        self.wrenches = [None; super::physics::MAX_WRENCHES];
        if let Some(old) = self.playback.take() {
            self.trash(Trash::Playback(old.rows));
        }
        self.retap(&mut next);
        self.pending.clear();
        if next.fresh {
            // A new world counts its steps from 0: a step request or a batch end counted
            // in the old one's steps ends here.
            self.interrupt_steps();
            self.step = 0;
            self.shared
                .pause_at_step
                .store(u64::MAX, std::sync::atomic::Ordering::Relaxed);
        }
        self.republish();
        self.trash(Trash::World(next));
        let stats = &self.shared.stats;
        stats
            .steps
            .store(self.step, std::sync::atomic::Ordering::Relaxed);
        stats
            .world_changes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        stats.last_change_ns.store(
            super::clock::now_ns() - started,
            std::sync::atomic::Ordering::Relaxed,
        );
        Ok(())
    }

    /// What the kept robots bring into the next world: the state values that stay (by name),
    /// and their running controllers, which take the new model's ids.
    fn carry_into(&mut self, next: &mut super::world::NextWorld) {
        next.carry.apply(&self.data, &mut next.data);
        for (r, kept) in next.kept.iter().enumerate() {
            let Some(old) = *kept else { continue };
            let (Some(fresh), Some(running)) = (
                next.controllers.robots.get_mut(r),
                self.controllers.robots.get_mut(old),
            ) else {
                continue;
            };
            if fresh.actuators.len() != running.actuators.len() {
                continue;
            }
            std::mem::swap(&mut fresh.actuators, &mut running.actuators);
            std::mem::swap(&mut fresh.base, &mut running.base);
            std::mem::swap(fresh, running);
        }
    }

    /// A running recording goes on in its own columns (the map the change made for it; the
    /// old map leaves with the old world); the legacy taps end, their servers tap the new
    /// world again.
    fn retap(&mut self, next: &mut super::world::NextWorld) {
        for slot in &mut self.taps {
            let recording = next
                .recording
                .as_mut()
                .filter(|r| slot.as_ref().is_some_and(|t| Arc::ptr_eq(&t.ring, &r.ring)));
            match (recording, slot.take()) {
                (Some(mapped), Some(mut tap)) => {
                    std::mem::swap(&mut tap.columns, &mut mapped.columns);
                    *slot = Some(tap);
                }
                (_, Some(tap)) => {
                    let _ = self.shared.trash.push(Trash::Tap(tap));
                }
                (_, None) => {}
            }
        }
    }

    /// Drops what does not survive a reset or restore: wrenches, playback, pending commands.
    pub(in crate::sim) fn clear_transients(&mut self) {
        self.wrenches = [None; super::physics::MAX_WRENCHES];
        self.data
            .xfrc_applied_mut()
            .iter_mut()
            .for_each(|row| *row = [0.0; 6]);
        if let Some(old) = self.playback.take() {
            self.trash(Trash::Playback(old.rows));
        }
        self.pending.clear();
    }
}
