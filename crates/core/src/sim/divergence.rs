//! Divergence: after a step, MuJoCo's checks flag a NaN, infinite or huge position,
//! velocity or acceleration. MuJoCo's own answer, resetting the whole world (sim time back to
//! 0 under every node on sim time), is turned off when the world is built; the physics thread
//! answers instead, as `sim.on_divergence` says: put back the last good state and pause (the
//! default), reset the world, or pause where it is. Sim time goes on in every case. Each one
//! is counted and its details (what, which degree of freedom, when) go out as numbers, for
//! the caller's side to tell.
use super::stats::LiveStats;
use crate::config::OnDivergence;
use mujoco_rs::mujoco_c::{mj_getState, mj_setState, mjtWarning};
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Steps between two copies of the state kept as good.
const KEEP_EVERY: u64 = 50;

/// What MuJoCo found bad, in the order it checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Found {
    Position = 1,
    Velocity = 2,
    Acceleration = 3,
}

impl Found {
    const CHECKS: [(Found, mjtWarning); 3] = [
        (Found::Position, mjtWarning::mjWARN_BADQPOS),
        (Found::Velocity, mjtWarning::mjWARN_BADQVEL),
        (Found::Acceleration, mjtWarning::mjWARN_BADQACC),
    ];

    pub fn from_u8(value: u8) -> Option<Self> {
        Self::CHECKS
            .iter()
            .map(|(found, _)| *found)
            .find(|found| *found as u8 == value)
    }

    pub fn name(self) -> &'static str {
        match self {
            Found::Position => "position",
            Found::Velocity => "velocity",
            Found::Acceleration => "acceleration",
        }
    }
}

/// The last good state and what the physics thread does when a step diverges. Sized by its
/// world's model when the world is built (off the physics thread).
pub struct Guard {
    /// MuJoCo's integration state of the last step found good.
    good: Vec<f64>,
    has_good: bool,
    policy: OnDivergence,
}

/// Sim stats fields of the last divergence.
pub struct Reported {
    pub found: Found,
    pub dof: i32,
    pub time: f64,
}

impl Guard {
    pub fn new(model: &MjModel, policy: OnDivergence) -> Self {
        Self {
            good: vec![0.0; model.state_size(super::STATE_SPEC)],
            has_good: false,
            policy,
        }
    }

    /// What a step found, from MuJoCo's warning counters (cleared here, so that the next
    /// one counts again).
    pub fn check(&self, data: &mut MjData<Arc<MjModel>>) -> Option<(Found, i32)> {
        // SAFETY: plain counters of the data this thread owns.
        let warnings = unsafe { &mut data.ffi_mut().warning };
        let mut found = None;
        for (kind, warning) in Found::CHECKS {
            let stat = &mut warnings[warning as usize];
            if stat.number > 0 {
                found = found.or(Some((kind, stat.lastinfo)));
                stat.number = 0;
            }
        }
        found
    }

    /// Keeps the state of step `step` as good, now and then (no allocation).
    pub fn keep(&mut self, data: &MjData<Arc<MjModel>>, step: u64) {
        if !step.is_multiple_of(KEEP_EVERY) {
            return;
        }
        if !(data.qpos().iter().chain(data.qvel()).all(|v| v.is_finite())) {
            return;
        }
        let model = data.model().ffi();
        // SAFETY: the buffer holds the state size of this model (made from it).
        unsafe {
            mj_getState(
                model,
                data.ffi(),
                self.good.as_mut_ptr(),
                super::STATE_SPEC as i32,
            );
        }
        self.has_good = true;
    }

    /// Puts back the last good state (the world's initial one when none was kept yet),
    /// keeping sim time: `/clock` never runs backwards but on an explicit reset.
    pub fn restore(&self, data: &mut MjData<Arc<MjModel>>) {
        let time = data.time();
        if self.has_good {
            let model: *const mujoco_rs::mujoco_c::mjModel = data.model().ffi();
            // SAFETY: the state was taken from this model's data; the model lives in `data`
            // for the call.
            unsafe {
                mj_setState(
                    model,
                    data.ffi_mut(),
                    self.good.as_ptr(),
                    super::STATE_SPEC as i32,
                );
            }
        } else {
            data.reset();
        }
        data.set_time(time);
        data.forward();
    }

    /// Forgets the good state: after a reset, a keyframe or a restore it is no longer the
    /// last one (the next is kept within 50 steps; until then the initial state stands in).
    pub fn forget(&mut self) {
        self.has_good = false;
    }

    pub fn policy(&self) -> OnDivergence {
        self.policy
    }
}

/// Records a divergence in the live stats.
pub fn report(stats: &LiveStats, found: Found, dof: i32, time: f64) {
    stats.divergence_found.store(found as u8, Ordering::Relaxed);
    stats.divergence_dof.store(dof as i64, Ordering::Relaxed);
    stats
        .divergence_time_bits
        .store(time.to_bits(), Ordering::Relaxed);
    stats.instabilities.fetch_add(1, Ordering::Release);
}

/// The last divergence the stats hold.
pub fn last(stats: &LiveStats) -> Option<Reported> {
    Some(Reported {
        found: Found::from_u8(stats.divergence_found.load(Ordering::Relaxed))?,
        dof: stats.divergence_dof.load(Ordering::Relaxed) as i32,
        time: f64::from_bits(stats.divergence_time_bits.load(Ordering::Relaxed)),
    })
}

/// The last divergence in words, with the joint and body of its degree of freedom in
/// `world` and what was done (made on the caller's thread).
pub fn describe(stats: &LiveStats, world: &super::WorldGeneration) -> Option<String> {
    let last = last(stats)?;
    let model = &world.model;
    // MuJoCo names a position by its qpos address, a velocity or acceleration by its dof.
    let index = usize::try_from(last.dof).ok();
    let joint = match last.found {
        Found::Position => index.and_then(|at| {
            let starts = model.jnt_qposadr();
            (0..starts.len())
                .filter(|&j| starts[j] as usize <= at)
                .max_by_key(|&j| starts[j])
        }),
        _ => index
            .filter(|d| *d < model.ffi().nv as usize)
            .map(|d| model.dof_jntid()[d] as usize),
    };
    let place = match (index, joint) {
        (Some(at), Some(joint)) => {
            let body = model.jnt_bodyid()[joint] as usize;
            let name = |kind, id| {
                model
                    .id_to_name(kind, id)
                    .unwrap_or("(unnamed)")
                    .to_string()
            };
            let what = match last.found {
                Found::Position => "qpos entry",
                _ => "degree of freedom",
            };
            format!(
                " of {what} {at} (joint '{}', body '{}')",
                name(MjtObjBase::mjOBJ_JOINT, joint),
                name(MjtObjBase::mjOBJ_BODY, body)
            )
        }
        _ => String::new(),
    };
    let done = match world.config.sim.on_divergence {
        OnDivergence::Restore => "the last good state was put back and the simulation paused",
        OnDivergence::Reset => "the world was reset and runs on",
        OnDivergence::Pause => "the simulation paused where it was",
    };
    Some(format!(
        "a step diverged at sim time {:.4} s: NaN, infinite or huge {}{place}; {done} \
         (sim.on_divergence: {}; sim time goes on)",
        last.time,
        last.found.name(),
        world.config.sim.on_divergence.name()
    ))
}
