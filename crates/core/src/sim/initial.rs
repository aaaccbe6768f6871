//! Where robots start: a robot whose model has the keyframe `{robot}_ros2_control_initial`
//! (its URDF's `<ros2_control>` initial positions, see `model::INITIAL_KEYFRAME`) is put
//! there and held there, at start, after a reset and when a world change adds it; the other
//! robots start at the model's qpos0. Only the robot's own joints and actuators are set.
use crate::control::{Controllers, Trajectory};
use crate::model::{INITIAL_KEYFRAME, RobotMap};
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_model::traits::ModelType;
use std::sync::Arc;

/// Puts each robot `r` of `robots` (of `model`, which `data` runs) for which `which(r)`
/// holds at its initial keyframe, and makes its controller hold it; a trajectory a
/// controller drops goes to `dropped`. The caller runs `forward` afterwards (a reset does in
/// `republish`). Allocates nothing (it runs on the physics thread).
pub(super) fn apply(
    model: &MjModel,
    robots: &[RobotMap],
    data: &mut MjData<Arc<MjModel>>,
    controllers: &mut Controllers,
    which: impl Fn(usize) -> bool,
    mut dropped: impl FnMut(Box<Trajectory>),
) {
    let (nq, nu) = (model.ffi().nq as usize, model.ffi().nu as usize);
    for (r, map) in robots.iter().enumerate() {
        if !which(r) {
            continue;
        }
        let Some(key) = initial_key(map) else {
            continue;
        };
        put_at_key(model, map, key, data);
        let qpos = &model.key_qpos()[key * nq..(key + 1) * nq];
        let ctrl = &model.key_ctrl()[key * nu..(key + 1) * nu];
        if let Some(robot) = controllers.robots.get_mut(r)
            && let Some(old) = robot.hold_pose(qpos, Some(ctrl))
        {
            dropped(old);
        }
    }
}

/// The id of `map`'s robot's initial keyframe, if its model has one.
fn initial_key(map: &RobotMap) -> Option<usize> {
    Some(
        map.keyframes
            .iter()
            .find(|k| k.name == INITIAL_KEYFRAME)?
            .id,
    )
}

/// Sets `map`'s robot's own hinge and slide joints and actuators in `data` to keyframe
/// `key`.
fn put_at_key(model: &MjModel, map: &RobotMap, key: usize, data: &mut MjData<impl ModelType>) {
    let (nq, nu) = (model.ffi().nq as usize, model.ffi().nu as usize);
    let qpos = &model.key_qpos()[key * nq..(key + 1) * nq];
    let ctrl = &model.key_ctrl()[key * nu..(key + 1) * nu];
    for joint in &map.joints {
        if matches!(
            model.jnt_type()[joint.id],
            MjtJoint::mjJNT_HINGE | MjtJoint::mjJNT_SLIDE
        ) {
            let adr = model.jnt_qposadr()[joint.id] as usize;
            data.qpos_mut()[adr] = qpos[adr];
        }
    }
    for actuator in &map.actuators {
        data.ctrl_mut()[actuator.id] = ctrl[actuator.id];
    }
}

/// The world as it starts, every robot where `apply` puts it, its positions computed: what
/// a sensor reads before the first step (an altimeter's reference).
pub fn start_data<'m>(model: &'m MjModel, robots: &[RobotMap]) -> MjData<&'m MjModel> {
    let mut data = MjData::new(model);
    for map in robots {
        if let Some(key) = initial_key(map) {
            put_at_key(model, map, key, &mut data);
        }
    }
    data.forward();
    data
}
