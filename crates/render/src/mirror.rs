//! The state copy a render or ray-casting thread works on: its own `MjData`, set from the
//! newest state snapshot (joint positions, mocap poses and sim time); the caller then
//! computes what it reads (`forward` for drawing, `kinematics` for rays).
use crate::sim::{StateSnapshot, WorldGeneration};
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// A thread's own `MjData` on the world's shared model, counted while it lives.
pub struct Mirror {
    pub data: MjData<Arc<MjModel>>,
    _counted: crate::census::Counted,
}

/// MuJoCo could not allocate a mirror's data.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("MuJoCo could not allocate a copy of the simulation data (mjData)")]
pub struct NoMemory;

impl Mirror {
    pub fn new(model: Arc<MjModel>) -> Result<Self, NoMemory> {
        Ok(Self {
            data: MjData::try_new(model).map_err(|_| NoMemory)?,
            _counted: crate::census::Counted::new(crate::census::Kind::Mirrors),
        })
    }
}

/// Reads the state of `world`, the generation the mirror was made from: after a world change
/// it stays as that world last was.
pub fn update(world: &WorldGeneration, state: &mut StateSnapshot, data: &mut MjData<Arc<MjModel>>) {
    world.latest_state(state);
    set(state, data);
}

/// Puts `state` into the mirror.
pub fn set(state: &StateSnapshot, data: &mut MjData<Arc<MjModel>>) {
    if data.qpos().len() == state.qpos.len() {
        data.qpos_mut().copy_from_slice(&state.qpos);
    }
    if data.mocap_pos().len() * 3 == state.mocap_pos.len() {
        data.mocap_pos_mut()
            .as_flattened_mut()
            .copy_from_slice(&state.mocap_pos);
        data.mocap_quat_mut()
            .as_flattened_mut()
            .copy_from_slice(&state.mocap_quat);
    }
    data.set_time(state.time);
}

/// Puts the motion of `state` (velocities, activations, controls) into the mirror too, so
/// that its forward pass finds the contact forces physics found.
pub fn set_motion(state: &StateSnapshot, data: &mut MjData<Arc<MjModel>>) {
    if data.qvel().len() == state.qvel.len() {
        data.qvel_mut().copy_from_slice(&state.qvel);
    }
    if data.act().len() == state.act.len() {
        data.act_mut().copy_from_slice(&state.act);
    }
    if data.ctrl().len() == state.ctrl.len() {
        data.ctrl_mut().copy_from_slice(&state.ctrl);
    }
}
