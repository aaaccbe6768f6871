//! Operations carried out by the physics thread between steps: reset, keyframes, snapshots,
//! wrenches, body poses, control settings, trajectories, presets, recording and playback.
//! Each checks its input and answers with an error instead of touching MuJoCo with it.
use super::commands::{Operation, OperationDone, OperationError, OperationResult, Request, Trash};
use super::physics::{ActivePlayback, ActiveWrench, Flow, Physics, Stepping};
use super::snapshot::{STATE_SPEC, Snapshot};
use super::tap::{Tap, TapLayout};
use crate::config::{ControlMode, SimMode};
use crate::control::{PdGains, Preset, Trajectory};
use crate::record::{Playback, RecordRing};
use mujoco_rs::prelude::*;
use std::sync::Arc;

impl Physics {
    fn done(&self) -> OperationDone {
        OperationDone {
            step: self.step,
            time: self.data.time(),
            snapshot: None,
        }
    }

    fn trash_trajectory(&self, trajectory: Option<Box<Trajectory>>) {
        if let Some(t) = trajectory {
            self.trash(Trash::Trajectory(t));
        }
    }

    fn robot_index(&self, robot: usize) -> Result<usize, OperationError> {
        if robot < self.controllers.robots.len() {
            Ok(robot)
        } else {
            Err(OperationError::NoRobot(robot))
        }
    }

    fn key_index(&self, key: usize) -> Result<usize, OperationError> {
        if key < self.data.model().ffi().nkey as usize {
            Ok(key)
        } else {
            Err(OperationError::NoKeyframe(key))
        }
    }

    /// Every controller holds the pose of `qpos` (with `key_ctrl` for the rest).
    fn hold(&mut self, qpos: &[f64], key_ctrl: Option<&[f64]>) {
        let shared = &self.shared;
        for robot in &mut self.controllers.robots {
            if let Some(old) = robot.hold_pose(qpos, key_ctrl) {
                let _ = shared.trash.push(Trash::Trajectory(old));
            }
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
        });
    }

    /// One step of a running step request; answers it after its last step.
    pub(super) fn step_while_paused(&mut self) {
        self.step_once();
        self.window
            .maybe_publish(&self.shared.stats, super::clock::now_ns(), self.data.time());
        if self.stepping.as_ref().is_some_and(|s| self.step >= s.until)
            && let Some(stepping) = self.stepping.take()
        {
            let done = Ok(self.done());
            self.answer(stepping.reply, done);
        }
    }

    /// A mode change ends a running step request early.
    pub(super) fn interrupt_steps(&mut self) {
        if let Some(stepping) = self.stepping.take() {
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

    /// Switches realtime / fast / paused; a running step request ends.
    fn set_mode(&mut self, mode: SimMode) -> Result<(), OperationError> {
        self.interrupt_steps();
        if mode == SimMode::Realtime && self.mode != SimMode::Realtime {
            self.deadline_ns = super::clock::now_ns();
        }
        self.mode = mode;
        if mode == SimMode::Paused {
            self.pause_for(super::physics::PauseCause::Requested);
        } else {
            self.publish_mode();
        }
        Ok(())
    }
    /// The real-time factor target of realtime mode.
    fn set_speed(&mut self, speed: f64) -> Result<(), OperationError> {
        if !crate::config::SPEED_RANGE.contains(&speed) {
            return Err(OperationError::BadSpeed(speed));
        }
        self.speed = speed;
        self.deadline_ns = super::clock::now_ns();
        self.publish_mode();
        Ok(())
    }
    /// mj_resetData; the controllers go back to their configured state.
    pub(super) fn reset_all(&mut self) -> Result<(), OperationError> {
        self.reset_to_initial(None)
    }

    /// mj_resetData, at sim time `time` (None: 0); the controllers go back to their
    /// configured state; the good state kept for a divergence is forgotten.
    pub(super) fn reset_to_initial(&mut self, time: Option<f64>) -> Result<(), OperationError> {
        self.data.reset();
        if let Some(time) = time {
            self.data.set_time(time);
        }
        self.guard.forget();
        let shared = &self.shared;
        for robot in &mut self.controllers.robots {
            if let Some(old) = robot.reset() {
                let _ = shared.trash.push(Trash::Trajectory(old));
            }
        }
        super::initial::apply(
            &self.world.model,
            &self.world.robots,
            &mut self.data,
            &mut self.controllers,
            |_| true,
            |old| {
                let _ = shared.trash.push(Trash::Trajectory(old));
            },
        );
        self.clear_transients();
        self.republish();
        Ok(())
    }
    /// Resets to keyframe `key`; the controllers hold its pose.
    fn reset_to_keyframe(&mut self, key: usize) -> Result<(), OperationError> {
        let key = self.key_index(key)?;
        self.guard.forget();
        if let Err(e) = self.data.reset_keyframe(key) {
            return Err(OperationError::Mujoco(e));
        }
        let model = self.world.model.clone();
        let (nq, nu) = (model.ffi().nq as usize, model.ffi().nu as usize);
        let qpos = &model.key_qpos()[key * nq..(key + 1) * nq];
        let ctrl = &model.key_ctrl()[key * nu..(key + 1) * nu];
        self.hold(qpos, Some(ctrl));
        self.clear_transients();
        self.republish();
        Ok(())
    }
    /// Keeps the state; the controllers drive the robots to keyframe `key`.
    fn hold_keyframe(&mut self, key: usize) -> Result<(), OperationError> {
        let key = self.key_index(key)?;
        let model = self.world.model.clone();
        let (nq, nu) = (model.ffi().nq as usize, model.ffi().nu as usize);
        self.hold(
            &model.key_qpos()[key * nq..(key + 1) * nq],
            Some(&model.key_ctrl()[key * nu..(key + 1) * nu]),
        );
        Ok(())
    }
    /// Fills `snapshot` with the integration state and the controllers' state.
    fn capture(&mut self, mut snapshot: Box<Snapshot>) -> OperationResult {
        let nv = self.data.model().ffi().nv as usize;
        let physics_len = self.data.model().state_size(STATE_SPEC);
        if snapshot.physics.len() != physics_len
            || snapshot.controllers.len() != nv + self.controllers.state_len()
        {
            return Err(OperationError::SnapshotBuffer);
        }
        self.data.read_state_into(STATE_SPEC, &mut snapshot.physics);
        // The bias force the controllers use next comes from the last step's forward
        // pass, not from the state: keep it so a restore computes the same control.
        snapshot.controllers[..nv].copy_from_slice(self.data.qfrc_bias());
        let mut at = nv;
        for robot in &self.controllers.robots {
            let len = robot.state_len();
            robot.save_state(&mut snapshot.controllers[at..at + len]);
            at += len;
        }
        snapshot.fingerprint = self.world.fingerprint;
        snapshot.generation = self.world.number;
        snapshot.step = self.step;
        Ok(OperationDone {
            snapshot: Some(snapshot),
            ..self.done()
        })
    }
    /// A force and torque on `body` for `duration` seconds of sim time.
    fn apply_wrench(
        &mut self,
        body: usize,
        wrench: [f64; 6],
        duration: f64,
    ) -> Result<(), OperationError> {
        if body == 0 || body >= self.data.model().ffi().nbody as usize {
            return Err(OperationError::NoMovableBody(body));
        }
        if wrench.iter().any(|v| !v.is_finite()) || !(duration.is_finite() && duration > 0.0) {
            return Err(OperationError::BadWrench);
        }
        let until = self.data.time() + duration;
        let active = self.wrenches.len();
        let Some(slot) = self.wrenches.iter_mut().find(|w| w.is_none()) else {
            return Err(OperationError::WrenchesFull(active));
        };
        *slot = Some(ActiveWrench {
            body,
            wrench,
            until,
        });
        Ok(())
    }
    /// Sets the pose and velocity of a body with a free joint.
    fn place_body(
        &mut self,
        body: usize,
        position: [f64; 3],
        quaternion_wxyz: [f64; 4],
        velocity_world: [f64; 6],
    ) -> Result<(), OperationError> {
        let model = self.data.model();
        if body == 0 || body >= model.ffi().nbody as usize {
            return Err(OperationError::NoMovableBody(body));
        }
        let joint = model.body_jntadr()[body];
        if model.body_jntnum()[body] < 1 || model.jnt_type()[joint as usize] != MjtJoint::mjJNT_FREE
        {
            return Err(OperationError::NotFree(body));
        }
        let norm = quaternion_wxyz.iter().map(|v| v * v).sum::<f64>().sqrt();
        if position
            .iter()
            .chain(&quaternion_wxyz)
            .chain(&velocity_world)
            .any(|v| !v.is_finite())
            || norm < 1e-9
        {
            return Err(OperationError::BadPose);
        }
        let (qadr, dadr) = (
            model.jnt_qposadr()[joint as usize] as usize,
            model.jnt_dofadr()[joint as usize] as usize,
        );
        let qpos = self.data.qpos_mut();
        qpos[qadr..qadr + 3].copy_from_slice(&position);
        for (k, q) in quaternion_wxyz.iter().enumerate() {
            qpos[qadr + 3 + k] = q / norm;
        }
        // A free joint's angular velocity is in the body frame: rotate it there.
        let [w, x, y, z] = quaternion_wxyz.map(|q| q / norm);
        let rotation =
            nalgebra::UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(w, x, y, z));
        let angular = rotation.inverse_transform_vector(&nalgebra::Vector3::new(
            velocity_world[3],
            velocity_world[4],
            velocity_world[5],
        ));
        let qvel = &mut self.data.qvel_mut()[dadr..dadr + 6];
        qvel[..3].copy_from_slice(&velocity_world[..3]);
        qvel[3..].copy_from_slice(angular.as_slice());
        self.republish();
        Ok(())
    }
    /// The PD gains of every actuator of `robot`.
    fn set_gains(
        &mut self,
        robot: usize,
        gains: Box<[PdGains]>,
        enable_pd: bool,
    ) -> Result<(), OperationError> {
        let check = self.robot_index(robot).and_then(|r| {
            let controller = &self.controllers.robots[r];
            if gains.len() != controller.gains.len() {
                return Err(OperationError::GainCount {
                    given: gains.len(),
                    actuators: controller.gains.len(),
                });
            }
            if gains.iter().any(|g| !g.is_valid()) {
                return Err(OperationError::BadGains);
            }
            Ok(r)
        });
        if let Ok(r) = check {
            let controller = &mut self.controllers.robots[r];
            controller.gains.copy_from_slice(&gains);
            if enable_pd {
                controller.mode = ControlMode::Pd;
            }
        }
        self.trash(Trash::Gains(gains));
        check?;
        Ok(())
    }
    /// `robot` follows `trajectory` from the current state.
    fn follow_trajectory(
        &mut self,
        robot: usize,
        trajectory: Box<Trajectory>,
    ) -> Result<(), OperationError> {
        let check = self.robot_index(robot).and_then(|r| {
            let n = self.controllers.robots[r].actuators.len();
            if trajectory.actuators.iter().any(|i| *i >= n) {
                return Err(OperationError::TrajectoryActuator);
            }
            trajectory.validate().map_err(OperationError::Trajectory)?;
            Ok(r)
        });
        match check {
            Ok(r) => {
                let time = self.data.time();
                let qpos = self.data.qpos();
                let old = self.controllers.robots[r].follow(trajectory, time, qpos);
                self.trash_trajectory(old);
            }
            Err(e) => {
                self.trash(Trash::Trajectory(trajectory));
                return Err(e);
            }
        }
        Ok(())
    }
    /// Installs `preset` (stopped) for `robot`.
    fn load_preset(&mut self, robot: usize, preset: Box<Preset>) -> Result<(), OperationError> {
        let check = self.robot_index(robot).and_then(|r| {
            preset
                .validate()
                .map(|_| r)
                .map_err(|error| OperationError::Preset { robot, error })
        });
        match check {
            Ok(r) => {
                if let Some(old) = self.controllers.robots[r].sequencer.load(preset) {
                    self.trash(Trash::Preset(old));
                }
            }
            Err(e) => {
                self.trash(Trash::Preset(preset));
                return Err(e);
            }
        }
        Ok(())
    }
    /// Plays the loaded preset of `robot` from pose `pose` after `delay` seconds.
    fn play_preset(&mut self, robot: usize, pose: usize, delay: f64) -> Result<(), OperationError> {
        let r = self.robot_index(robot)?;
        if !(delay.is_finite() && delay >= 0.0) {
            return Err(OperationError::BadDelay);
        }
        let time = self.data.time();
        let qpos = self.data.qpos();
        let old = self.controllers.robots[r]
            .play_preset(pose, time, qpos, delay)
            .map_err(|error| OperationError::Preset { robot, error })?;
        self.trash_trajectory(old);
        Ok(())
    }
    /// Starts pushing a row per step into `ring`.
    fn tap(&mut self, ring: Arc<RecordRing>, layout: TapLayout) -> Result<(), OperationError> {
        let f = self.data.model().ffi();
        let row = layout.row_len(f);
        if ring.row_len() != row {
            return Err(OperationError::TapRow { layout, row });
        }
        let Some(slot) = self.taps.iter_mut().find(|t| t.is_none()) else {
            self.trash(Trash::Ring(ring));
            return Err(OperationError::TapsFull);
        };
        *slot = Some(Tap {
            ring,
            layout,
            columns: None,
        });
        Ok(())
    }
    /// Stops pushing rows into `ring`.
    fn untap(&mut self, ring: Arc<RecordRing>) -> Result<(), OperationError> {
        for slot in &mut self.taps {
            if slot.as_ref().is_some_and(|t| Arc::ptr_eq(&t.ring, &ring))
                && let Some(old) = slot.take()
            {
                let _ = self.shared.trash.push(Trash::Tap(old));
            }
        }
        self.trash(Trash::Ring(ring));
        Ok(())
    }
    /// Kinematic playback of recorded rows.
    fn playback(&mut self, rows: Box<Playback>) -> Result<(), OperationError> {
        let model = self.data.model();
        let (nq, nv) = (model.ffi().nq as usize, model.ffi().nv as usize);
        let fits = !rows.times.is_empty()
            && rows.qpos_index.iter().all(|i| *i < nq)
            && rows.qvel_index.iter().all(|i| *i < nv)
            && rows.qpos.len() == rows.times.len() * rows.qpos_index.len()
            && rows.qvel.len() == rows.times.len() * rows.qvel_index.len();
        if !fits {
            self.trash(Trash::Playback(rows));
            return Err(OperationError::PlaybackRows);
        }
        let start_time = self.data.time();
        if let Some(old) = self.playback.replace(ActivePlayback {
            rows,
            start_time,
            played: 0,
        }) {
            self.trash(Trash::Playback(old.rows));
        }
        Ok(())
    }

    fn restore(&mut self, snapshot: &super::snapshot::Snapshot) -> Result<(), OperationError> {
        self.guard.forget();
        if snapshot.generation != self.world.number {
            return Err(OperationError::OtherWorld {
                snapshot: snapshot.generation,
                now: self.world.number,
            });
        }
        if snapshot.fingerprint != self.world.fingerprint {
            return Err(OperationError::OtherModel {
                snapshot: snapshot.fingerprint,
                model: self.world.fingerprint,
            });
        }
        let nv = self.data.model().ffi().nv as usize;
        if snapshot.physics.len() != self.data.model().state_size(STATE_SPEC)
            || snapshot.controllers.len() != nv + self.controllers.state_len()
        {
            return Err(OperationError::SnapshotSizes);
        }
        if let Err(e) = self.data.set_state(&snapshot.physics, STATE_SPEC) {
            return Err(OperationError::Mujoco(e));
        }
        let mut at = nv;
        for r in 0..self.controllers.robots.len() {
            let len = self.controllers.robots[r].state_len();
            let old = self.controllers.robots[r].load_state(&snapshot.controllers[at..at + len]);
            self.trash_trajectory(old);
            at += len;
        }
        self.clear_transients();
        self.republish();
        self.data
            .qfrc_bias_mut()
            .copy_from_slice(&snapshot.controllers[..nv]);
        Ok(())
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
                // The running controller keeps its state and takes the new model's ids.
                std::mem::swap(&mut fresh.actuators, &mut running.actuators);
                std::mem::swap(&mut fresh.base, &mut running.base);
                std::mem::swap(fresh, running);
            }
        }
        std::mem::swap(&mut self.data, &mut next.data);
        std::mem::swap(&mut self.controllers, &mut next.controllers);
        std::mem::swap(&mut self.world, &mut next.generation);
        std::mem::swap(&mut self.guard, &mut next.guard);
        self.wrenches = [None; super::physics::MAX_WRENCHES];
        if let Some(old) = self.playback.take() {
            self.trash(Trash::Playback(old.rows));
        }
        // A running recording goes on in its own columns (the map the change made for it);
        // the legacy taps end, their servers tap the new world again.
        for slot in &mut self.taps {
            let recording = next
                .recording
                .as_mut()
                .filter(|r| slot.as_ref().is_some_and(|t| Arc::ptr_eq(&t.ring, &r.ring)));
            match (recording, slot.take()) {
                (Some(mapped), Some(mut tap)) => {
                    // The old map leaves with the old world.
                    std::mem::swap(&mut tap.columns, &mut mapped.columns);
                    *slot = Some(tap);
                }
                (_, Some(tap)) => {
                    let _ = self.shared.trash.push(Trash::Tap(tap));
                }
                (_, None) => {}
            }
        }
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

    /// Drops what does not survive a reset or restore: wrenches, playback, pending commands.
    fn clear_transients(&mut self) {
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
