//! Servo gains for the actuators generated from a URDF when the robot's config gives none
//! (`urdf_gains`). A URDF says what a joint can do (`<limit effort>`) but not how stiffly
//! its simulator should hold it, and one fixed gain for every joint is either too soft for a
//! shoulder that carries an arm or unstable on a light wrist. The rule, per joint, with `I`
//! the smallest joint-space inertia it moves anywhere in its robot's range (the diagonal of
//! MuJoCo's mass matrix `M(q)`, armature included, at the initial pose and at `SAMPLES`
//! poses spread over the joints' ranges) and `dt` the timestep:
//! - position servo: `kp = max(I w^2, effort / e_full)`, capped at `I (1 / dt)^2`, and
//!   `kv = 2 sqrt(kp I)` (critically damped), with `w = 2 pi 10 Hz` the bandwidth and `e_full`
//!   the error at which it gives its full effort: 0.05 rad on a hinge, 0.01 m on a slide;
//! - velocity servo: `kv = max(I w, effort / 0.5 (rad or m)/s)`, a drive wheel's `I` with its
//!   share of the robot's mass at its radius (what it moves, rolling on the ground).
//!
//! The cap keeps each spring stable on its own (natural frequency times timestep at most
//! 1, half of where the undamped step diverges); damping is integrated implicitly (`implicitfast`). Joints move together, though: a
//! light wrist on a light forearm swings faster than either alone, and a floating base lets
//! each joint's reaction move the body. So at every sampled pose the servos are checked
//! together: each mode of `M(q)^-1 K` (the other degrees of freedom free), with the damping
//! the servos give it, must stay stable under MuJoCo's step at 1.5 times its frequency;
//! where one does not, the ruled springs that carry it are softened until it does. (A fast
//! coupled mode moves little inertia, so the joints' own damping damps it heavily; what
//! fails the check is a stiff mode that too little damping reaches, as when a config sets
//! kv low.) A gain the config gives is kept, and said once when it passes a joint's bound.
use mujoco_rs::mujoco_c::{mjNBIAS, mjNGAIN};
use mujoco_rs::prelude::*;
use nalgebra::{DMatrix, SymmetricEigen};
use std::fmt::Write;

/// Bandwidth of a servo under the rule, Hz.
pub const BANDWIDTH_HZ: f64 = 10.0;
/// Position error at which a servo gives its full effort: on a hinge (rad), on a slide (m).
const FULL_EFFORT_ANGLE: f64 = 0.05;
const FULL_EFFORT_TRAVEL: f64 = 0.01;
/// Velocity error (rad/s or m/s) at which a velocity servo gives its full effort.
const FULL_EFFORT_SPEED: f64 = 0.5;
/// The largest natural frequency times timestep a position servo's spring is given alone
/// (half of where MuJoCo's step of an undamped spring diverges; the check of the servos
/// together then keeps every coupled mode stable with `MARGIN` to spare).
const MAX_OMEGA_DT: f64 = 1.0;
/// How much faster than it is a mode of the servos together must still be stable: its
/// frequency is checked raised by this factor. (MuJoCo's semi-implicit step of an undamped
/// spring diverges above w dt = 2: measured, 1.9 holds and 2.1 diverges at 2 ms; one
/// critically damped, the damping implicit, held to 3; `step_growth` gives both.)
const MARGIN: f64 = 1.5;
/// What a softening round multiplies a spring by.
const SOFTEN: f64 = 0.7;
/// Poses besides the initial one at which the mass matrix is sampled.
const SAMPLES: usize = 24;
/// Softening rounds at most (each softens the joints of the worst mode).
const ROUNDS: usize = 60;
/// A joint takes part in a mode when its share of the mode is at least this part of the
/// largest joint's.
const PARTICIPATION: f64 = 0.1;

/// A generated servo some of whose gains the rule gives; a gain the config set is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct RuledServo {
    /// The actuator's name in the robot's own model (without the robot's prefix).
    pub actuator: String,
    pub kind: RuledKind,
    /// The joint's `<limit effort>`, when it has one.
    pub effort: Option<f64>,
    /// Inertia the joint moves that the mass matrix does not show, kg m^2: a drive wheel's
    /// share of the robot it rolls along the ground (0 for any other joint).
    pub rolled: f64,
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

/// What the rule did to one robot: its gains in words (for the log and `--summary`), and
/// the gains the config asks for beyond the stable bound (kept, and said).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ruled {
    pub set: Option<String>,
    pub beyond_bound: Vec<String>,
}

/// (kp, kv) of a position servo on a joint that moves inertia `inertia` at its initial
/// pose and `smallest` anywhere in its range.
fn position_gains(
    inertia: Inertia,
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
    let kp = given.0.unwrap_or_else(|| {
        (inertia.at_start * omega * omega)
            .max(for_effort)
            .min(bound(inertia.smallest, timestep))
    });
    let kv = given.1.unwrap_or_else(|| critical(kp, inertia));
    (kp, kv)
}

/// What a joint moves, seen from its actuator (through the gear).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Inertia {
    /// At the initial pose: the bandwidth and the damping are set for it.
    at_start: f64,
    /// The smallest over the sampled poses: the caps are set for it.
    smallest: f64,
}

impl Inertia {
    fn same(value: f64) -> Self {
        Self {
            at_start: value,
            smallest: value,
        }
    }
}

/// kv that damps a spring `kp` critically at the initial pose (the damping is implicit, so
/// where the joint moves less inertia it is damped more, never unstably).
fn critical(kp: f64, inertia: Inertia) -> f64 {
    2.0 * (kp * inertia.at_start).sqrt()
}

/// The stiffest spring a joint of inertia `inertia` is given alone at `timestep`.
fn bound(inertia: f64, timestep: f64) -> f64 {
    inertia * (MAX_OMEGA_DT / timestep).powi(2)
}

/// The stiffest spring a joint of inertia `inertia` stays stable with at `timestep`, undamped
/// and with `MARGIN` to spare (what a given kp is held to before it is said to pass it).
fn stable_bound(inertia: f64, timestep: f64) -> f64 {
    inertia * (2.0 / MARGIN / timestep).powi(2)
}

/// kv of a velocity servo on a joint of inertia `inertia` (at its initial pose).
fn velocity_gain(inertia: f64, effort: Option<f64>) -> f64 {
    let omega = 2.0 * std::f64::consts::PI * BANDWIDTH_HZ;
    (inertia * omega).max(effort.map_or(0.0, |e| e / FULL_EFFORT_SPEED))
}

/// One servo of the robot, found in the compiled model.
struct Servo<'a> {
    ruled: &'a RuledServo,
    id: usize,
    joint: usize,
    dof: usize,
    gear: f64,
    slide: bool,
    /// The joint-space inertia it moves, seen from the actuator.
    inertia: Inertia,
    kp: f64,
    kv: f64,
    /// Whether the rule gives kp (else the config did).
    ruled_kp: bool,
    /// Whether the coupled check softened it.
    softened: bool,
    /// Whether its cap over the joints' ranges is below what the initial pose alone gives.
    capped_over_range: bool,
}

/// Sets the rule's gains on robot `prefix`'s `servos` in the compiled `model`.
pub fn apply(model: &mut MjModel, prefix: &str, servos: &[RuledServo]) -> Ruled {
    let timestep = model.opt().timestep;
    let mut found = find(model, prefix, servos);
    if found.is_empty() {
        return Ruled::default();
    }
    let poses = sampled_mass_matrices(model, &found);
    for servo in &mut found {
        let smallest = poses
            .iter()
            .map(|m| m[(servo.dof, servo.dof)])
            .fold(f64::INFINITY, f64::min);
        let g2 = servo.gear * servo.gear;
        let at_start = poses
            .first()
            .map_or(smallest, |m| m[(servo.dof, servo.dof)]);
        servo.inertia = Inertia {
            at_start: (at_start / g2).max(f64::MIN_POSITIVE),
            smallest: (smallest / g2).max(f64::MIN_POSITIVE),
        };
        rule_alone(servo, timestep);
        // What the rule would give from the initial pose alone (the range's cap if more).
        if let RuledKind::Position { kp: None, .. } = servo.ruled.kind {
            let alone = Inertia::same(servo.inertia.at_start);
            let (kp, _) = position_gains(
                alone,
                servo.ruled.effort,
                servo.slide,
                timestep,
                (None, None),
            );
            servo.capped_over_range = servo.kp < kp * (1.0 - 1e-9);
        }
    }
    soften_coupled(&mut found, &poses, timestep);
    let mut ruled = Ruled::default();
    let mut set = String::new();
    for servo in &mut found {
        // A ruled kv damps the kp it ends with (a given kv is kept).
        if let RuledKind::Position { kv: None, .. } = servo.ruled.kind {
            servo.kv = critical(servo.kp, servo.inertia);
        }
        describe(servo, &mut set);
        let stable = stable_bound(servo.inertia.smallest, timestep);
        if !servo.ruled_kp && servo.kp > stable {
            ruled.beyond_bound.push(format!(
                "actuator '{}' of joint {}: kp {} asked for passes the stable bound {:.4} \
                 (its smallest inertia {:.3e} at timestep {timestep} s); kept as asked",
                servo.ruled.actuator,
                joint_name(model, servo.joint),
                servo.kp,
                stable,
                servo.inertia.smallest
            ));
        }
        write_gains(model, servo);
    }
    ruled.set = (!set.is_empty()).then(|| set.trim_end_matches(", ").to_string());
    ruled
}

/// The joint servos of `servos` in `model`, with their joints and gears.
fn find<'a>(model: &MjModel, prefix: &str, servos: &'a [RuledServo]) -> Vec<Servo<'a>> {
    let mut found = Vec::new();
    for ruled in servos {
        let Some(id) = model.name_to_id(
            MjtObjBase::mjOBJ_ACTUATOR,
            &format!("{prefix}{}", ruled.actuator),
        ) else {
            continue;
        };
        let joint = model.actuator_trnid()[id][0];
        if joint < 0 || model.actuator_trntype()[id] != MjtTrn::mjTRN_JOINT {
            continue;
        }
        let joint = joint as usize;
        let (kp, ruled_kp) = match ruled.kind {
            RuledKind::Position { kp: Some(kp), .. } => (kp, false),
            _ => (0.0, true),
        };
        found.push(Servo {
            ruled,
            id,
            joint,
            dof: model.jnt_dofadr()[joint] as usize,
            gear: model.actuator_gear()[id][0].abs().max(f64::MIN_POSITIVE),
            slide: model.jnt_type()[joint] == MjtJoint::mjJNT_SLIDE,
            inertia: Inertia::same(f64::MIN_POSITIVE),
            kp,
            kv: 0.0,
            ruled_kp,
            softened: false,
            capped_over_range: false,
        });
    }
    found
}

/// The gains of one servo by the rule alone (its own inertia and the timestep).
fn rule_alone(servo: &mut Servo, timestep: f64) {
    match servo.ruled.kind {
        RuledKind::Position { kp, kv } => {
            let (p, v) = position_gains(
                servo.inertia,
                servo.ruled.effort,
                servo.slide,
                timestep,
                (kp, kv),
            );
            servo.kp = p;
            servo.kv = v;
        }
        RuledKind::Velocity => {
            servo.kp = 0.0;
            let inertia = servo.inertia.at_start + servo.ruled.rolled;
            servo.kv = velocity_gain(inertia, servo.ruled.effort);
        }
    }
}

/// The full mass matrix at the initial pose and at `SAMPLES` poses where each servoed joint
/// is spread over its range (an unlimited hinge over a turn, an unlimited slide over 1 m).
/// The poses are the same from run to run.
fn sampled_mass_matrices(model: &MjModel, servos: &[Servo]) -> Vec<DMatrix<f64>> {
    let nv = model.ffi().nv as usize;
    let Ok(mut data) = MjData::try_new(model) else {
        return Vec::new();
    };
    let mut random = Xorshift(0x9e37_79b9_7f4a_7c15);
    let mut matrices = Vec::with_capacity(SAMPLES + 1);
    for sample in 0..=SAMPLES {
        let qpos0 = model.qpos0().to_vec();
        data.qpos_mut().copy_from_slice(&qpos0);
        if sample > 0 {
            for servo in servos {
                let j = servo.joint;
                let [lo, hi] = if model.jnt_limited()[j] {
                    model.jnt_range()[j]
                } else if servo.slide {
                    [-0.5, 0.5]
                } else {
                    [-std::f64::consts::PI, std::f64::consts::PI]
                };
                let adr = model.jnt_qposadr()[j] as usize;
                data.qpos_mut()[adr] = lo + (hi - lo) * random.unit();
            }
        }
        let mut full = vec![0.0; nv * nv];
        let m: *const mujoco_rs::mujoco_c::mjModel = model.ffi();
        // SAFETY: `data` was made for `model`; these compute the mass matrix from qpos (the
        // positions, the composite inertias, then qM), and mj_fullM writes nv x nv numbers.
        unsafe {
            let d = data.ffi_mut();
            mujoco_rs::mujoco_c::mj_kinematics(m, d);
            mujoco_rs::mujoco_c::mj_comPos(m, d);
            mujoco_rs::mujoco_c::mj_crb(m, d);
            mujoco_rs::mujoco_c::mj_fullM(m, d, full.as_mut_ptr());
        }
        matrices.push(DMatrix::from_row_slice(nv, nv, &full));
    }
    matrices
}

/// Softens the ruled springs until every mode of the robot's servos together stays stable
/// under MuJoCo's step with `MARGIN` to spare, at every sampled pose: each round finds the
/// worst pose's worst mode and softens the ruled springs that carry it.
fn soften_coupled(servos: &mut [Servo], poses: &[DMatrix<f64>], timestep: f64) {
    let factors: Vec<DMatrix<f64>> = poses
        .iter()
        .filter_map(|m| m.clone().cholesky().map(|c| c.l()))
        .collect();
    for _ in 0..ROUNDS {
        let Some(worst) = factors
            .iter()
            .map(|l| worst_mode(servos, l, timestep))
            .max_by(|a, b| a.growth.total_cmp(&b.growth))
        else {
            return;
        };
        if worst.growth <= 1.0 + 1e-9 {
            return;
        }
        let largest = worst.shares.iter().copied().fold(0.0, f64::max);
        let mut softened = false;
        for (servo, share) in servos.iter_mut().zip(&worst.shares) {
            if servo.ruled_kp && *share >= PARTICIPATION * largest {
                servo.kp *= SOFTEN;
                servo.softened = true;
                softened = true;
                if let RuledKind::Position { kv: None, .. } = servo.ruled.kind {
                    servo.kv = critical(servo.kp, servo.inertia);
                }
            }
        }
        if !softened {
            // Only springs the config gives carry it: they are kept (and said).
            return;
        }
    }
}

/// A mode of the servos' springs at one pose: how much one step multiplies it (above 1: it
/// grows), and each servo's share of its stiffness.
struct Mode {
    growth: f64,
    shares: Vec<f64>,
}

/// The worst mode of the servos at the pose whose mass matrix has Cholesky factor `l`: the
/// undamped modes of `M^-1 K` (the other degrees of freedom free), each with the servos'
/// damping it sees, stepped as MuJoCo steps it with the stiffness raised by `MARGIN^2`.
fn worst_mode(servos: &[Servo], l: &DMatrix<f64>, timestep: f64) -> Mode {
    let nv = l.nrows();
    let mut stiffness = vec![0.0; nv];
    let mut damping = vec![0.0; nv];
    for servo in servos {
        let g2 = servo.gear * servo.gear;
        if let RuledKind::Position { .. } = servo.ruled.kind {
            stiffness[servo.dof] += servo.kp * g2;
        }
        damping[servo.dof] += servo.kv * g2;
    }
    // Mass-normalised modes: M = L L^T, S = L^-1 K L^-T = Y diag(lambda) Y^T, phi = L^-T y.
    let Some(l_inverse) = l.clone().try_inverse() else {
        return Mode {
            growth: 0.0,
            shares: vec![0.0; servos.len()],
        };
    };
    let s = DMatrix::from_fn(nv, nv, |a, b| {
        (0..nv)
            .map(|k| l_inverse[(a, k)] * stiffness[k] * l_inverse[(b, k)])
            .sum::<f64>()
    });
    let eigen = SymmetricEigen::new(s);
    let shapes = l_inverse.transpose() * &eigen.eigenvectors;
    let mut worst = Mode {
        growth: 0.0,
        shares: vec![0.0; servos.len()],
    };
    for (i, lambda) in eigen.eigenvalues.iter().enumerate() {
        if *lambda <= 0.0 {
            continue;
        }
        let shape = shapes.column(i);
        let modal_damping: f64 = (0..nv).map(|k| damping[k] * shape[k] * shape[k]).sum();
        let growth = step_growth(lambda * MARGIN * MARGIN, modal_damping, timestep);
        if growth > worst.growth {
            worst.growth = growth;
            worst.shares = servos
                .iter()
                .map(|servo| {
                    let k = servo.kp * servo.gear * servo.gear;
                    k * shape[servo.dof] * shape[servo.dof] / lambda
                })
                .collect();
        }
    }
    worst
}

/// How much one step multiplies a mode of squared frequency `lambda` and damping `c` (per
/// unit modal mass) under MuJoCo's semi-implicit step with the damping implicit:
/// `v' = (v - dt lambda q) / (1 + dt c)`, `q' = q + dt v'` (the spectral radius).
fn step_growth(lambda: f64, c: f64, dt: f64) -> f64 {
    let d = 1.0 / (1.0 + dt * c.max(0.0));
    let (a, b) = (1.0 - dt * dt * lambda * d, dt * d);
    let (cc, dd) = (-dt * lambda * d, d);
    let trace = a + dd;
    let det = a * dd - b * cc;
    let discriminant = trace * trace / 4.0 - det;
    if discriminant >= 0.0 {
        let root = discriminant.sqrt();
        (trace / 2.0 + root).abs().max((trace / 2.0 - root).abs())
    } else {
        det.max(0.0).sqrt()
    }
}

fn describe(servo: &Servo, set: &mut String) {
    let name = &servo.ruled.actuator;
    let _ = match servo.ruled.kind {
        RuledKind::Position { .. } => write!(
            set,
            "{name} kp {:.1} kv {:.3}{}, ",
            servo.kp,
            servo.kv,
            match (servo.softened, servo.capped_over_range) {
                (true, _) => " (softened: coupled bound)",
                (false, true) => " (capped over its range)",
                _ => "",
            }
        ),
        RuledKind::Velocity => write!(set, "{name} kv {:.3}, ", servo.kv),
    };
}

fn joint_name(model: &MjModel, joint: usize) -> String {
    model
        .id_to_name(MjtObjBase::mjOBJ_JOINT, joint)
        .map_or_else(|| format!("#{joint}"), str::to_string)
}

/// Writes `servo`'s gains into the model's gain and bias parameters.
fn write_gains(model: &mut MjModel, servo: &Servo) {
    let (gain, bias) = match servo.ruled.kind {
        RuledKind::Position { .. } => ([servo.kp], [0.0, -servo.kp, -servo.kv]),
        RuledKind::Velocity => ([servo.kv], [0.0, 0.0, -servo.kv]),
    };
    // SAFETY: `id` is an actuator of this model, so its rows of the gain and bias arrays
    // (mjNGAIN and mjNBIAS numbers each) lie inside them; nothing else holds the model.
    unsafe {
        let raw = model.ffi_mut();
        let gains = raw.actuator_gainprm.add(servo.id * mjNGAIN as usize);
        let biases = raw.actuator_biasprm.add(servo.id * mjNBIAS as usize);
        for (k, value) in gain.iter().enumerate() {
            *gains.add(k) = *value;
        }
        for (k, value) in bias.iter().enumerate() {
            *biases.add(k) = *value;
        }
    }
}

/// A small deterministic generator for the sampled poses.
struct Xorshift(u64);

impl Xorshift {
    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heavy_joint_gets_its_bandwidth_and_a_light_one_its_effort_within_the_stable_cap() {
        let omega = 2.0 * std::f64::consts::PI * BANDWIDTH_HZ;
        // A shoulder moving 3 kg m^2: the bandwidth governs, critically damped.
        let (kp, kv) = position_gains(Inertia::same(3.0), Some(150.0), false, 0.002, (None, None));
        assert!((kp - 3.0 * omega * omega).abs() < 1e-9);
        assert!((kv - 2.0 * (kp * 3.0f64).sqrt()).abs() < 1e-9);
        // A wrist moving 0.05 kg m^2 with 28 N m: full effort at 0.05 rad.
        let (kp, _) = position_gains(Inertia::same(0.05), Some(28.0), false, 0.002, (None, None));
        assert!((kp - 28.0 / 0.05).abs() < 1e-9);
        // A flange moving 1e-5 kg m^2: capped where w dt = 1.
        let (kp, _) = position_gains(Inertia::same(1e-5), Some(28.0), false, 0.002, (None, None));
        assert!(((kp / 1e-5).sqrt() * 0.002 - 1.0).abs() < 1e-9);
        // What the config gives is kept; kv is then critical for that kp.
        let (kp, kv) = position_gains(Inertia::same(3.0), None, false, 0.002, (Some(400.0), None));
        assert_eq!(kp, 400.0);
        assert!((kv - 2.0 * (400.0f64 * 3.0).sqrt()).abs() < 1e-9);
        // A wheel's velocity servo: the effort governs a light wheel.
        assert!((velocity_gain(0.01, Some(20.0)) - 40.0).abs() < 1e-9);
        assert!((velocity_gain(2.0, None) - 2.0 * omega).abs() < 1e-9);
    }

    #[test]
    fn a_step_grows_a_mode_as_mujoco_does() {
        let dt = 0.002;
        let lambda = |w_dt: f64| (w_dt / dt).powi(2);
        // Undamped: MuJoCo held w dt = 1.9 and diverged at 2.1.
        assert!(step_growth(lambda(1.9), 0.0, dt) <= 1.0 + 1e-12);
        assert!(step_growth(lambda(2.1), 0.0, dt) > 1.0);
        // Critically damped, the damping implicit: MuJoCo held w dt = 3.
        let w = 3.0 / dt;
        assert!(step_growth(w * w, 2.0 * w, dt) <= 1.0);
    }

    /// Two light links in a row, each spring at its own cap and their damping set to
    /// nothing by the config: alone each is stable, together the chain swings faster than
    /// the step allows; the check softens them until every mode is stable with the margin.
    #[test]
    fn springs_that_are_stable_alone_are_softened_until_they_are_together() {
        let xml = r#"<mujoco><option timestep="0.002"/><worldbody>
            <body><joint name="a" type="hinge" axis="0 0 1" range="-3 3"/>
              <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.02"/>
              <body pos="0.3 0 0"><joint name="b" type="hinge" axis="0 0 1" range="-3 3"/>
                <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.02"/>
              </body></body></worldbody>
            <actuator><position name="a" joint="a"/><position name="b" joint="b"/>
            </actuator></mujoco>"#;
        let mut model = MjModel::from_xml_string(xml).unwrap();
        let servos: Vec<RuledServo> = ["a", "b"]
            .iter()
            .map(|name| RuledServo {
                actuator: name.to_string(),
                kind: RuledKind::Position {
                    kp: None,
                    kv: Some(0.0),
                },
                effort: Some(1000.0),
                rolled: 0.0,
            })
            .collect();
        let ruled = apply(&mut model, "", &servos);
        assert!(ruled.set.unwrap().contains("softened"));
        let mut check = find(&model, "", &servos);
        for servo in &mut check {
            servo.kp = model.actuator_gainprm()[servo.id][0];
        }
        for l in sampled_mass_matrices(&model, &check)
            .iter()
            .filter_map(|m| m.clone().cholesky().map(|c| c.l()))
        {
            assert!(worst_mode(&check, &l, 0.002).growth <= 1.0 + 1e-9);
        }
    }

    #[test]
    fn a_given_gain_beyond_the_bound_is_kept_and_said() {
        let xml = r#"<mujoco><worldbody><body><joint name="j" type="hinge" range="-1 1"/>
            <geom type="sphere" size="0.01" mass="0.01"/></body></worldbody>
            <actuator><position name="j" joint="j" kp="5000"/></actuator></mujoco>"#;
        let mut model = MjModel::from_xml_string(xml).unwrap();
        let servos = [RuledServo {
            actuator: "j".into(),
            kind: RuledKind::Position {
                kp: Some(5000.0),
                kv: None,
            },
            effort: None,
            rolled: 0.0,
        }];
        let ruled = apply(&mut model, "", &servos);
        assert_eq!(model.actuator_gainprm()[0][0], 5000.0);
        assert_eq!(ruled.beyond_bound.len(), 1, "{ruled:?}");
        assert!(ruled.beyond_bound[0].contains("joint j"));
    }
}
