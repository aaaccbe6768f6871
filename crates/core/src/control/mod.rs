//! Controllers that run every physics step, one `RobotController` per robot: sticky
//! actuator commands from the robot's active control source, passthrough or PD, optional
//! gravity compensation, a joint-trajectory follower, the keyframe sequencer, and a
//! mobile-base controller (differential drive or planar). All buffers are sized at start:
//! computing `ctrl` never allocates.
mod base;
mod pd;
mod presets;
mod sequencer;
mod trajectory;
mod twist_limiter;

pub use base::{BaseController, TwistCommand};
pub use pd::{PdGains, pd_output};
pub use presets::{Preset, PresetError, PresetPose, STAY_BLEND, builtin_presets};
pub use sequencer::{START_DELAY, Sequencer};
pub use trajectory::{Trajectory, TrajectoryError};

/// `value` within `lo..=hi`. Unlike `f64::clamp`, it never panics: the bounds come from a
/// model or a config, and the physics thread must not stop on a NaN or swapped pair.
#[inline]
pub fn bounded(value: f64, lo: f64, hi: f64) -> f64 {
    value.max(lo).min(hi)
}

use crate::config::{ControlConfig, ControlMode, ControlSource};
use crate::error::{InputError, InputResult};
use crate::model::RobotMap;
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// Seconds (sim time) a twist stays in force on a robot without a base controller.
pub const TWIST_TIMEOUT: f64 = 0.5;

/// How an actuator turns `ctrl` into force, as far as the controllers care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActuatorKind {
    /// ctrl is a position target (MuJoCo `position` / affine bias with -kp).
    PositionServo,
    /// ctrl is a velocity target (MuJoCo `velocity`).
    VelocityServo,
    /// ctrl is a force or torque (motor or anything else).
    Force,
}

/// What the controllers need to know of one actuator.
#[derive(Debug, Clone, PartialEq)]
pub struct ActuatorInfo {
    pub id: usize,
    pub kind: ActuatorKind,
    /// The hinge or slide joint it drives, if any: (joint id, qpos address, dof address).
    pub joint: Option<(usize, usize, usize)>,
    /// The joint's range when limited.
    pub range: Option<[f64; 2]>,
    pub ctrlrange: Option<[f64; 2]>,
    pub gear: f64,
}

impl ActuatorInfo {
    pub fn of(model: &MjModel, id: usize) -> Self {
        let bias = model.actuator_biasprm()[id];
        let affine = model.actuator_biastype()[id] == MjtBias::mjBIAS_AFFINE;
        let kind = if affine && bias[1] < 0.0 {
            ActuatorKind::PositionServo
        } else if affine && bias[1] == 0.0 && bias[2] < 0.0 {
            ActuatorKind::VelocityServo
        } else {
            ActuatorKind::Force
        };
        let trn = model.actuator_trnid()[id][0];
        let joint = (model.actuator_trntype()[id] == MjtTrn::mjTRN_JOINT && trn >= 0)
            .then_some(trn as usize)
            .filter(|j| {
                matches!(
                    model.jnt_type()[*j],
                    MjtJoint::mjJNT_HINGE | MjtJoint::mjJNT_SLIDE
                )
            })
            .map(|j| {
                (
                    j,
                    model.jnt_qposadr()[j] as usize,
                    model.jnt_dofadr()[j] as usize,
                )
            });
        let range =
            joint.and_then(|(j, _, _)| model.jnt_limited()[j].then_some(model.jnt_range()[j]));
        let ctrlrange = model.actuator_ctrllimited()[id].then_some(model.actuator_ctrlrange()[id]);
        Self {
            id,
            kind,
            joint,
            range,
            ctrlrange,
            gear: model.actuator_gear()[id][0],
        }
    }

    fn clamp_ctrl(&self, value: f64) -> f64 {
        match self.ctrlrange {
            Some([lo, hi]) => bounded(value, lo, hi),
            None => value,
        }
    }
}

/// A trajectory being followed since `start_time`.
#[derive(Debug)]
struct ActiveTrajectory {
    trajectory: Box<Trajectory>,
    start_time: f64,
}

/// The controller of one robot.
#[derive(Debug)]
pub struct RobotController {
    pub name: String,
    pub actuators: Vec<ActuatorInfo>,
    pub source: ControlSource,
    pub mode: ControlMode,
    configured: ControlConfig,
    /// The sticky command of each actuator (ctrl, or a position target in PD mode).
    pub values: Vec<f64>,
    pub gains: Vec<PdGains>,
    pub gravity_compensation: bool,
    pub base: Option<BaseController>,
    /// The last twist received (sticky; the base stops once it is older than its timeout).
    pub twist: TwistCommand,
    pub sequencer: Sequencer,
    trajectory: Option<ActiveTrajectory>,
    /// Positions when the trajectory started, one per actuator.
    trajectory_start: Vec<f64>,
    /// Setpoints of the trajectory or sequencer in this step.
    setpoints: Vec<f64>,
    setpoint_velocities: Vec<f64>,
    /// Seconds between trajectory samples (a controller manager's `update_rate`): the
    /// setpoints hold between them, as a controller's commands do. None: every step.
    update_period: Option<f64>,
}

impl Clone for RobotController {
    fn clone(&self) -> Self {
        // A fresh controller in its configured state (trajectories are not cloned).
        let mut copy = Self {
            name: self.name.clone(),
            actuators: self.actuators.clone(),
            source: self.source,
            mode: self.mode,
            configured: self.configured.clone(),
            values: self.values.clone(),
            gains: self.gains.clone(),
            gravity_compensation: self.gravity_compensation,
            base: self.base.clone(),
            twist: self.twist,
            sequencer: Sequencer::with_actuators(self.actuators.len()),
            trajectory: None,
            trajectory_start: self.trajectory_start.clone(),
            setpoints: self.setpoints.clone(),
            setpoint_velocities: self.setpoint_velocities.clone(),
            update_period: self.update_period,
        };
        if let Some(name) = self.sequencer.preset_name()
            && let Some(preset) = find_preset(&self.configured, name)
        {
            copy.sequencer.load(Box::new(preset));
        }
        copy
    }
}

/// A built-in or user preset by name.
pub fn find_preset(control: &ControlConfig, name: &str) -> Option<Preset> {
    control
        .presets
        .iter()
        .cloned()
        .chain(builtin_presets())
        .find(|p| p.name == name)
}

impl RobotController {
    /// Builds the controller of `robot`; `field` names its config entry for errors.
    pub fn new(
        model: &MjModel,
        robot: &RobotMap,
        control: &ControlConfig,
        origin: &str,
        field: &str,
    ) -> InputResult<Self> {
        let actuators: Vec<ActuatorInfo> = robot
            .actuators
            .iter()
            .map(|a| ActuatorInfo::of(model, a.id))
            .collect();
        let n = actuators.len();
        let base = match &control.base {
            Some(base) => Some(BaseController::new(model, robot, &actuators, base).map_err(
                |e| InputError::new(origin, e.to_string()).at(format!("{field}.control.base")),
            )?),
            None => None,
        };
        let gains = PdGains {
            kp: control.gains.kp,
            kv: control.gains.kv,
            torque_limit: control.gains.torque_limit,
        };
        if !gains.is_valid() {
            return Err(
                InputError::new(origin, "kp, kv and torque_limit must be finite and >= 0")
                    .at(format!("{field}.control.gains")),
            );
        }
        let mut sequencer = Sequencer::with_actuators(n);
        for (k, preset) in control.presets.iter().enumerate() {
            preset.validate().map_err(|e| {
                InputError::new(origin, e.describe(preset))
                    .at(format!("{field}.control.presets[{k}]"))
            })?;
        }
        if let Some(name) = &control.preset {
            let preset = find_preset(control, name).ok_or_else(|| {
                let known: Vec<String> = control
                    .presets
                    .iter()
                    .map(|p| p.name.clone())
                    .chain(builtin_presets().into_iter().map(|p| p.name))
                    .collect();
                InputError::new(
                    origin,
                    format!("unknown preset '{name}'; known presets: {known:?}"),
                )
                .at(format!("{field}.control.preset"))
            })?;
            sequencer.load(Box::new(preset));
        }
        Ok(Self {
            name: robot.name.clone(),
            actuators,
            source: control.source,
            mode: control.mode,
            configured: control.clone(),
            values: vec![0.0; n],
            gains: vec![gains; n],
            gravity_compensation: control.gravity_compensation,
            base,
            twist: TwistCommand::default(),
            sequencer,
            trajectory: None,
            trajectory_start: vec![0.0; n],
            setpoints: vec![0.0; n],
            setpoint_velocities: vec![0.0; n],
            update_period: control
                .update_rate
                .filter(|hz| hz.is_finite() && *hz > 0.0)
                .map(|hz| 1.0 / hz),
        })
    }

    pub fn configured(&self) -> &ControlConfig {
        &self.configured
    }

    /// Back to the configured mode and gains, commands zeroed, trajectory and sequencer
    /// stopped. Returns the dropped trajectory for disposal off the physics thread.
    pub fn reset(&mut self) -> Option<Box<Trajectory>> {
        let dropped = self.discard_trajectory();
        self.mode = self.configured.mode;
        self.gravity_compensation = self.configured.gravity_compensation;
        let gains = PdGains {
            kp: self.configured.gains.kp,
            kv: self.configured.gains.kv,
            torque_limit: self.configured.gains.torque_limit,
        };
        self.gains.fill(gains);
        self.values.fill(0.0);
        self.stop_base();
        self.sequencer.stop();
        dropped
    }

    /// Sets every command so that the robot holds the joint positions in `qpos`: position
    /// targets where a position (servo or PD) is commanded, `key_ctrl` elsewhere.
    pub fn hold_pose(&mut self, qpos: &[f64], key_ctrl: Option<&[f64]>) -> Option<Box<Trajectory>> {
        let dropped = self.discard_trajectory();
        for (i, info) in self.actuators.iter().enumerate() {
            let pd = self.mode == ControlMode::Pd && info.kind == ActuatorKind::Force;
            self.values[i] = match info.joint {
                Some((_, qadr, _)) if info.kind == ActuatorKind::PositionServo || pd => qpos[qadr],
                _ => key_ctrl.map(|c| c[info.id]).unwrap_or(0.0),
            };
        }
        self.stop_base();
        self.sequencer.stop();
        dropped
    }

    /// No twist, and the base stands at once, past its ramps.
    pub fn stop_base(&mut self) {
        self.twist = TwistCommand {
            stamp: self.twist.stamp,
            ..Default::default()
        };
        if let Some(base) = &mut self.base {
            base.halt();
        }
    }

    /// The twist in force at `time`: zero once older than the base's timeout, or than
    /// `TWIST_TIMEOUT` for a robot without a base controller (whose twist only goes to legacy
    /// clients): a teleop that stops publishing stops the robot.
    pub fn active_twist(&self, time: f64) -> TwistCommand {
        let timeout = self.base.as_ref().map_or(TWIST_TIMEOUT, |b| b.timeout);
        if timeout > 0.0 && time - self.twist.stamp > timeout {
            TwistCommand {
                stamp: self.twist.stamp,
                ..Default::default()
            }
        } else {
            self.twist
        }
    }

    /// Plays the loaded preset from pose `pose`, blending from the current joint positions.
    /// Returns the trajectory it takes over from, for disposal off the physics thread.
    pub fn play_preset(
        &mut self,
        pose: usize,
        now: f64,
        qpos: &[f64],
        delay: f64,
    ) -> Result<Option<Box<Trajectory>>, PresetError> {
        for (i, info) in self.actuators.iter().enumerate() {
            self.setpoints[i] = info
                .joint
                .map(|(_, qadr, _)| qpos[qadr])
                .unwrap_or(self.values[i]);
        }
        if !self.sequencer.play_from(pose, now, &self.setpoints, delay) {
            return Err(match self.sequencer.preset_name() {
                Some(_) => PresetError::NoPose(pose),
                None => PresetError::NotLoaded,
            });
        }
        Ok(self.trajectory.take().map(|a| a.trajectory))
    }

    /// Stops the sequencer; the robot holds the pose it had reached.
    pub fn stop_sequencer(&mut self) {
        if self.sequencer.is_playing() {
            self.sequencer.stop();
            self.keep_sequencer_targets();
        }
    }

    /// The sequencer's targets become the sticky commands of the actuators it drives.
    fn keep_sequencer_targets(&mut self) {
        let (targets, driven) = self.sequencer.targets();
        let pd = self.mode == ControlMode::Pd;
        let driven_actuators = self.actuators.iter().zip(targets).take(driven);
        for (value, (info, target)) in self.values.iter_mut().zip(driven_actuators) {
            if info.kind == ActuatorKind::PositionServo || (pd && info.kind == ActuatorKind::Force)
            {
                *value = *target;
            }
        }
    }

    /// Starts following `trajectory` at sim time `now` from the current joint positions
    /// (an open-loop one that replaces another: from that one's setpoints). Returns the
    /// replaced trajectory, if any.
    pub fn follow(
        &mut self,
        trajectory: Box<Trajectory>,
        now: f64,
        qpos: &[f64],
    ) -> Option<Box<Trajectory>> {
        let continues = trajectory.open_loop && self.trajectory.is_some();
        let previous = self.cancel_trajectory();
        for (i, info) in self.actuators.iter().enumerate() {
            self.trajectory_start[i] = match info.joint {
                _ if continues => self.setpoints[i],
                Some((_, qadr, _)) => qpos[qadr],
                None => self.values[i],
            };
        }
        self.setpoints.copy_from_slice(&self.trajectory_start);
        self.sequencer.stop();
        self.trajectory = Some(ActiveTrajectory {
            trajectory,
            start_time: now,
        });
        previous
    }

    /// Drops the active trajectory without touching the sticky commands (for operations
    /// that set every command themselves: reset, hold a pose, restore a snapshot).
    fn discard_trajectory(&mut self) -> Option<Box<Trajectory>> {
        self.trajectory.take().map(|active| active.trajectory)
    }

    /// Stops the active trajectory; the robot holds where it was.
    pub fn cancel_trajectory(&mut self) -> Option<Box<Trajectory>> {
        let active = self.trajectory.take()?;
        // Hold where the trajectory was: its last setpoints become the sticky commands.
        for &i in &active.trajectory.actuators {
            if let Some(info) = self.actuators.get(i)
                && (info.kind == ActuatorKind::PositionServo || self.mode == ControlMode::Pd)
            {
                self.values[i] = self.setpoints[i];
            }
        }
        Some(active.trajectory)
    }

    /// Seconds left of the active trajectory (0 when it has reached its last point), or None.
    pub fn trajectory_remaining(&self, now: f64) -> Option<f64> {
        self.trajectory
            .as_ref()
            .map(|a| (a.start_time + a.trajectory.duration() - now).max(0.0))
    }

    /// The control phase: writes this robot's `ctrl` (and a planar base's velocity).
    pub fn compute(
        &mut self,
        qpos: &[f64],
        qvel: &mut [f64],
        qfrc_bias: &[f64],
        ctrl: &mut [f64],
        time: f64,
    ) {
        let n = self.actuators.len();
        // Setpoints from the trajectory follower, else from the sequencer.
        let mut generated = false;
        if let Some(active) = &self.trajectory {
            let t = match self.update_period {
                // The sample of the last update (the epsilon keeps an update that falls on
                // this step from rounding down to the one before).
                Some(period) => ((time - active.start_time) / period + 1e-9).floor() * period,
                None => time - active.start_time,
            };
            for (j, &i) in active.trajectory.actuators.iter().enumerate() {
                let (p, v) = active.trajectory.sample(j, t, self.trajectory_start[i]);
                self.setpoints[i] = p;
                self.setpoint_velocities[i] = v;
            }
            generated = true;
        } else if self.sequencer.is_playing() {
            let targets = self.sequencer.update(time);
            self.setpoints[..n].copy_from_slice(targets);
            self.setpoint_velocities.fill(0.0);
            generated = true;
            if !self.sequencer.is_playing() {
                // A preset without loop has ended: its last pose stays commanded.
                self.keep_sequencer_targets();
            }
        }
        for i in 0..n {
            let info = &self.actuators[i];
            let in_trajectory = generated
                && self
                    .trajectory
                    .as_ref()
                    .is_none_or(|a| a.trajectory.actuators.contains(&i));
            let force_pd = info.kind == ActuatorKind::Force && info.joint.is_some();
            let value = if in_trajectory {
                match (info.kind, info.joint) {
                    (ActuatorKind::PositionServo, _) => self.setpoints[i],
                    (ActuatorKind::VelocityServo, _) => self.setpoint_velocities[i],
                    (ActuatorKind::Force, Some((_, qadr, dadr))) => pd_output(
                        self.setpoints[i],
                        info.range,
                        qpos[qadr],
                        qvel[dadr],
                        &self.gains[i],
                    ),
                    (ActuatorKind::Force, None) => self.values[i],
                }
            } else if self.mode == ControlMode::Pd && force_pd {
                let (_, qadr, dadr) = info.joint.unwrap_or_default();
                pd_output(
                    self.values[i],
                    info.range,
                    qpos[qadr],
                    qvel[dadr],
                    &self.gains[i],
                )
            } else {
                self.values[i]
            };
            let compensation = match (self.gravity_compensation, info.kind, info.joint) {
                (true, ActuatorKind::Force, Some((_, _, dadr))) if info.gear != 0.0 => {
                    qfrc_bias[dadr] / info.gear
                }
                _ => 0.0,
            };
            ctrl[info.id] = info.clamp_ctrl(value + compensation);
        }
        let twist = self.active_twist(time);
        if let Some(base) = &mut self.base {
            base.apply(&twist, &self.actuators, &self.gains, qpos, qvel, ctrl);
        }
    }

    /// Number of f64 values `save_state` writes.
    pub fn state_len(&self) -> usize {
        Self::state_len_for(self.actuators.len())
    }

    /// Number of f64 values `save_state` writes for a robot with `actuators` actuators:
    /// values, gains (3 each), mode, source, gravity compensation, twist.
    pub fn state_len_for(actuators: usize) -> usize {
        4 * actuators + 3 + TwistCommand::LEN
    }

    /// Writes the controller state a snapshot needs to reproduce what follows.
    pub fn save_state(&self, out: &mut [f64]) {
        let n = self.actuators.len();
        out[..n].copy_from_slice(&self.values);
        for (i, g) in self.gains.iter().enumerate() {
            out[n + 3 * i..n + 3 * i + 3].copy_from_slice(&[g.kp, g.kv, g.torque_limit]);
        }
        let at = 4 * n;
        out[at] = self.mode as u8 as f64;
        out[at + 1] = self.source as u8 as f64;
        out[at + 2] = self.gravity_compensation as u8 as f64;
        self.twist.write(&mut out[at + 3..]);
    }

    /// Restores what `save_state` wrote; stops trajectory and sequencer.
    pub fn load_state(&mut self, state: &[f64]) -> Option<Box<Trajectory>> {
        // Runs on the physics thread: read in place, without building a ControlStatus.
        let dropped = self.discard_trajectory();
        let n = self.actuators.len();
        self.values.copy_from_slice(&state[..n]);
        for (i, g) in self.gains.iter_mut().enumerate() {
            let s = &state[n + 3 * i..n + 3 * i + 3];
            *g = PdGains {
                kp: s[0],
                kv: s[1],
                torque_limit: s[2],
            };
        }
        let at = 4 * n;
        self.mode = mode_from(state[at]);
        self.source = source_from(state[at + 1]);
        self.gravity_compensation = state[at + 2] != 0.0;
        self.twist = TwistCommand::read(&state[at + 3..]);
        if let Some(base) = &mut self.base {
            base.halt();
        }
        self.sequencer.stop();
        dropped
    }
}

fn mode_from(value: f64) -> ControlMode {
    if value == ControlMode::Pd as u8 as f64 {
        ControlMode::Pd
    } else {
        ControlMode::Passthrough
    }
}

fn source_from(value: f64) -> ControlSource {
    ControlSource::from_u8(value as u8)
}

/// A robot controller's settings and commands, as a snapshot holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlStatus {
    pub mode: ControlMode,
    pub source: ControlSource,
    pub gravity_compensation: bool,
    /// Sticky command per actuator, in the robot's actuator order.
    pub values: Vec<f64>,
    pub gains: Vec<PdGains>,
    pub twist: TwistCommand,
}

impl ControlStatus {
    /// Reads what `RobotController::save_state` wrote for a robot with `n` actuators.
    pub fn decode(n: usize, state: &[f64]) -> Self {
        let at = 4 * n;
        Self {
            values: state[..n].to_vec(),
            gains: (0..n)
                .map(|i| {
                    let g = &state[n + 3 * i..n + 3 * i + 3];
                    PdGains {
                        kp: g[0],
                        kv: g[1],
                        torque_limit: g[2],
                    }
                })
                .collect(),
            mode: mode_from(state[at]),
            source: source_from(state[at + 1]),
            gravity_compensation: state[at + 2] != 0.0,
            twist: TwistCommand::read(&state[at + 3..]),
        }
    }
}

/// Every robot's controller, and which robot owns each actuator.
#[derive(Debug, Clone)]
pub struct Controllers {
    pub robots: Vec<RobotController>,
    /// Per actuator: (robot index, index within the robot), or None.
    pub owner: Vec<Option<(usize, usize)>>,
}

impl Controllers {
    pub fn new(
        model: &Arc<MjModel>,
        robots: &[RobotMap],
        controls: &[ControlConfig],
        origin: &str,
    ) -> InputResult<Self> {
        let mut owner = vec![None; model.ffi().nu.max(0) as usize];
        let mut controllers = Vec::with_capacity(robots.len());
        for (r, (robot, control)) in robots.iter().zip(controls).enumerate() {
            for (i, a) in robot.actuators.iter().enumerate() {
                owner[a.id] = Some((r, i));
            }
            controllers.push(RobotController::new(
                model,
                robot,
                control,
                origin,
                &format!("robots[{r}]"),
            )?);
        }
        Ok(Self {
            robots: controllers,
            owner,
        })
    }

    pub fn state_len(&self) -> usize {
        self.robots.iter().map(|r| r.state_len()).sum()
    }
}
