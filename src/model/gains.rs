//! Servo gains for the actuators generated from a URDF when the robot's config gives none
//! (`urdf_gains`). A URDF says what a joint can do (`<limit effort>`) but not how stiffly
//! its simulator should hold it, and one fixed gain for every joint is either too soft for a
//! shoulder that carries an arm or unstable on a light wrist. The rule, per joint, with `I`
//! the joint-space inertia it moves at the initial pose (MuJoCo's `dof_M0`, armature
//! included) and `dt` the timestep:
//! - position servo: `kp = max(I w^2, effort / e_full)`, capped at `I (0.5 / dt)^2`, and
//!   `kv = 2 sqrt(kp I)` (critically damped), with `w = 2 pi 10 Hz` the bandwidth and `e_full`
//!   the error at which it gives its full effort: 0.05 rad on a hinge, 0.01 m on a slide;
//! - velocity servo: `kv = max(I w, effort / 0.5 (rad or m)/s)`.
//!
//! The cap keeps the explicit part of the spring stable (natural frequency times timestep at
//! most 0.5); damping is integrated implicitly (`implicitfast`), so it needs none.
use mujoco_rs::mujoco_c::{mjNBIAS, mjNGAIN};
use mujoco_rs::prelude::*;
use std::fmt::Write;

/// Bandwidth of a servo under the rule, Hz.
pub const BANDWIDTH_HZ: f64 = 10.0;
/// Position error at which a servo gives its full effort: on a hinge (rad), on a slide (m).
const FULL_EFFORT_ANGLE: f64 = 0.05;
const FULL_EFFORT_TRAVEL: f64 = 0.01;
/// Velocity error (rad/s or m/s) at which a velocity servo gives its full effort.
const FULL_EFFORT_SPEED: f64 = 0.5;
/// The largest natural frequency times timestep a position servo's spring is given.
const MAX_OMEGA_DT: f64 = 0.5;

/// A generated servo some of whose gains the rule gives; a gain the config set is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct RuledServo {
    /// The actuator's name in the robot's own model (without the robot's prefix).
    pub actuator: String,
    pub kind: RuledKind,
    /// The joint's `<limit effort>`, when it has one.
    pub effort: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RuledKind {
    /// Position servo; `kp`, `kv`: what the config set.
    Position {
        kp: Option<f64>,
        kv: Option<f64>,
    },
    Velocity,
}

/// (kp, kv) of a position servo on a joint of inertia `inertia`.
fn position_gains(
    inertia: f64,
    effort: Option<f64>,
    slide: bool,
    timestep: f64,
    given: (Option<f64>, Option<f64>),
) -> (f64, f64) {
    let omega = 2.0 * std::f64::consts::PI * BANDWIDTH_HZ;
    let full_error = if slide {
        FULL_EFFORT_TRAVEL
    } else {
        FULL_EFFORT_ANGLE
    };
    let for_effort = effort.map_or(0.0, |e| e / full_error);
    let stable = inertia * (MAX_OMEGA_DT / timestep).powi(2);
    let kp = given
        .0
        .unwrap_or_else(|| (inertia * omega * omega).max(for_effort).min(stable));
    let kv = given.1.unwrap_or_else(|| 2.0 * (kp * inertia).sqrt());
    (kp, kv)
}

/// kv of a velocity servo on a joint of inertia `inertia`.
fn velocity_gain(inertia: f64, effort: Option<f64>) -> f64 {
    let omega = 2.0 * std::f64::consts::PI * BANDWIDTH_HZ;
    (inertia * omega).max(effort.map_or(0.0, |e| e / FULL_EFFORT_SPEED))
}

/// Sets the rule's gains on robot `prefix`'s `servos` in the compiled `model`; returns what
/// was set, one `joint kp .. kv ..` entry per servo, for the log and `--summary`.
pub fn apply(model: &mut MjModel, prefix: &str, servos: &[RuledServo]) -> Option<String> {
    let timestep = model.opt().timestep;
    let mut set = String::new();
    for servo in servos {
        let Some(id) = model.name_to_id(
            MjtObjBase::mjOBJ_ACTUATOR,
            &format!("{prefix}{}", servo.actuator),
        ) else {
            continue;
        };
        let joint = model.actuator_trnid()[id][0];
        if joint < 0 || model.actuator_trntype()[id] != MjtTrn::mjTRN_JOINT {
            continue;
        }
        let joint = joint as usize;
        let inertia = model.dof_m0()[model.jnt_dofadr()[joint] as usize].max(f64::MIN_POSITIVE);
        let slide = model.jnt_type()[joint] == MjtJoint::mjJNT_SLIDE;
        let gear = model.actuator_gear()[id][0].abs().max(f64::MIN_POSITIVE);
        // Seen from the actuator, the joint's inertia is divided by the gear squared.
        let inertia = inertia / (gear * gear);
        let (gain, bias) = match servo.kind {
            RuledKind::Position { kp, kv } => {
                let (kp, kv) = position_gains(inertia, servo.effort, slide, timestep, (kp, kv));
                let _ = write!(set, "{} kp {kp:.1} kv {kv:.3}, ", servo.actuator);
                ([kp], [0.0, -kp, -kv])
            }
            RuledKind::Velocity => {
                let kv = velocity_gain(inertia, servo.effort);
                let _ = write!(set, "{} kv {kv:.3}, ", servo.actuator);
                ([kv], [0.0, 0.0, -kv])
            }
        };
        // SAFETY: `id` is an actuator of this model, so its rows of the gain and bias arrays
        // (mjNGAIN and mjNBIAS numbers each) lie inside them; nothing else holds the model.
        unsafe {
            let raw = model.ffi_mut();
            let gains = raw.actuator_gainprm.add(id * mjNGAIN as usize);
            let biases = raw.actuator_biasprm.add(id * mjNBIAS as usize);
            for (k, value) in gain.iter().enumerate() {
                *gains.add(k) = *value;
            }
            for (k, value) in bias.iter().enumerate() {
                *biases.add(k) = *value;
            }
        }
    }
    (!set.is_empty()).then(|| set.trim_end_matches(", ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heavy_joint_gets_its_bandwidth_and_a_light_one_its_effort_within_the_stable_cap() {
        let omega = 2.0 * std::f64::consts::PI * BANDWIDTH_HZ;
        // A shoulder moving 3 kg m^2: the bandwidth governs, critically damped.
        let (kp, kv) = position_gains(3.0, Some(150.0), false, 0.002, (None, None));
        assert!((kp - 3.0 * omega * omega).abs() < 1e-9);
        assert!((kv - 2.0 * (kp * 3.0f64).sqrt()).abs() < 1e-9);
        // A wrist moving 0.05 kg m^2 with 28 N m: full effort at 0.05 rad.
        let (kp, _) = position_gains(0.05, Some(28.0), false, 0.002, (None, None));
        assert!((kp - 28.0 / 0.05).abs() < 1e-9);
        // A flange moving 1e-4 kg m^2: capped where w dt = 0.5.
        let (kp, _) = position_gains(1e-4, Some(28.0), false, 0.002, (None, None));
        assert!(((kp / 1e-4).sqrt() * 0.002 - 0.5).abs() < 1e-9);
        // What the config gives is kept; kv is then critical for that kp.
        let (kp, kv) = position_gains(3.0, None, false, 0.002, (Some(400.0), None));
        assert_eq!(kp, 400.0);
        assert!((kv - 2.0 * (400.0f64 * 3.0).sqrt()).abs() < 1e-9);
        // A wheel's velocity servo: the effort governs a light wheel.
        assert!((velocity_gain(0.01, Some(20.0)) - 40.0).abs() < 1e-9);
        assert!((velocity_gain(2.0, None) - 2.0 * omega).abs() < 1e-9);
    }
}
