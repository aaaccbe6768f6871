//! Rings the physics thread feeds a row per step (a CSV recording, the legacy state stream),
//! and what their rows hold.
use crate::record::RecordRing;
use std::sync::Arc;

/// What a tap row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TapLayout {
    /// time, qpos, qvel (CSV recording).
    Recording,
    /// step, time, qpos, qvel, qacc, sensordata (legacy state rows).
    Legacy,
    /// step, time, qpos, qvel, act, ctrl, sensordata (MCAP step records).
    Steps,
}

impl TapLayout {
    /// The length of a row of `model`'s state.
    pub fn row_len(&self, model: &mujoco_rs::mujoco_c::mjModel) -> usize {
        let size = |n: i64| n.max(0) as usize;
        let (nq, nv, sensors) = (size(model.nq), size(model.nv), size(model.nsensordata));
        match self {
            TapLayout::Recording => 1 + nq + nv,
            TapLayout::Legacy => 2 + nq + 2 * nv + sensors,
            TapLayout::Steps => 2 + nq + nv + size(model.na) + size(model.nu) + sensors,
        }
    }
}

/// A ring fed a row per step. A recording begun in an earlier world writes its own
/// columns, through the map a world change made for it.
pub(crate) struct Tap {
    pub ring: Arc<RecordRing>,
    pub layout: TapLayout,
    pub columns: Option<Box<crate::record::ColumnMap>>,
}
