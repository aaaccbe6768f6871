//! Bodies: wrenches applied for a while, and free bodies placed (pose and velocity).
use crate::sim::SimHandle;
use crate::sim::api::{norm, within};
use crate::sim::commands::{Bounded, Operation, OperationError, OperationResult};
use crate::sim::physics::{ActiveWrench, Physics};
use mujoco_rs::prelude::*;

impl SimHandle {
    /// A body of the robot by its own name, or of the world by its full name.
    pub fn body_index(&self, robot: Option<usize>, name: &str) -> Result<usize, OperationError> {
        let world = self.world();
        if let Some(r) = robot
            && let Some(body) = self.robot(&world, r)?.body(name)
        {
            return Ok(body.id);
        }
        world
            .model
            .name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_BODY, name)
            .ok_or_else(|| self.refuse(format!("unknown body '{name}'")))
    }

    pub fn apply_wrench(
        &self,
        robot: Option<usize>,
        body: &str,
        force: [f64; 3],
        torque: [f64; 3],
        duration: f64,
    ) -> OperationResult {
        let body = self.body_index(robot, body)?;
        self.apply_body_wrench(body, force, torque, duration)
    }

    /// A wrench in the world frame on body `body` (a model index), at its centre of mass,
    /// for `duration` seconds of sim time.
    pub fn apply_body_wrench(
        &self,
        body: usize,
        force: [f64; 3],
        torque: [f64; 3],
        duration: f64,
    ) -> OperationResult {
        self.apply_body_wrench_in(self.generation(), body, force, torque, duration)
    }

    /// `apply_body_wrench` with a body index of world generation `generation`: refused
    /// (`OtherWorld`) once the world has changed.
    pub fn apply_body_wrench_in(
        &self,
        generation: u64,
        body: usize,
        force: [f64; 3],
        torque: [f64; 3],
        duration: f64,
    ) -> OperationResult {
        let wrench = [
            force[0], force[1], force[2], torque[0], torque[1], torque[2],
        ];
        let limits = &self.world().config.limits;
        within(Bounded::Force, norm(&force).max(norm(&torque)), limits)?;
        self.request_in(
            generation,
            Operation::ApplyWrench {
                body,
                wrench,
                duration,
            },
        )
    }

    pub fn set_body_pose(
        &self,
        robot: Option<usize>,
        body: &str,
        position: [f64; 3],
        quaternion_wxyz: [f64; 4],
    ) -> OperationResult {
        let body = self.body_index(robot, body)?;
        self.set_body_state(body, position, quaternion_wxyz, [0.0; 6])
    }

    /// Places the free body `body` (a model index) and sets its velocity: linear then
    /// angular, both in the world frame.
    pub fn set_body_state(
        &self,
        body: usize,
        position: [f64; 3],
        quaternion_wxyz: [f64; 4],
        velocity_world: [f64; 6],
    ) -> OperationResult {
        let limits = &self.world().config.limits;
        within(Bounded::Position, norm(&position), limits)?;
        let [vx, vy, vz, wx, wy, wz] = velocity_world;
        within(
            Bounded::Speed,
            norm(&[vx, vy, vz]).max(norm(&[wx, wy, wz])),
            limits,
        )?;
        self.request(Operation::SetBodyPose {
            body,
            position,
            quaternion_wxyz,
            velocity_world,
        })
    }
}

impl Physics {
    /// A force and torque on `body` for `duration` seconds of sim time.
    pub(in crate::sim) fn apply_wrench(
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
    pub(in crate::sim) fn place_body(
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
}
