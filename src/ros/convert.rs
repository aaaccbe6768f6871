//! Conversions between simulation state and ROS 2 messages, kept in one place.
use crate::model::RobotMap;
use crate::sim::StateSnapshot;
use mujoco_rs::prelude::*;
use r2r::builtin_interfaces::msg::Time;
use r2r::sensor_msgs::msg::JointState;

/// Sim time in seconds as a ROS time stamp.
pub fn time(seconds: f64) -> Time {
    let total = (seconds.max(0.0) * 1e9).round() as u64;
    Time {
        sec: (total / 1_000_000_000) as i32,
        nanosec: (total % 1_000_000_000) as u32,
    }
}

/// A JointState message of one robot, reused between publications.
pub struct JointStateMsg {
    /// (qpos address, dof address) per hinge or slide joint.
    joints: Vec<(usize, usize)>,
    message: JointState,
}

impl JointStateMsg {
    pub fn new(model: &MjModel, robot: &RobotMap) -> Self {
        let mut joints = Vec::new();
        let mut names = Vec::new();
        for joint in &robot.joints {
            if matches!(
                model.jnt_type()[joint.id],
                MjtJoint::mjJNT_HINGE | MjtJoint::mjJNT_SLIDE
            ) {
                joints.push((
                    model.jnt_qposadr()[joint.id] as usize,
                    model.jnt_dofadr()[joint.id] as usize,
                ));
                names.push(joint.name.clone());
            }
        }
        let n = joints.len();
        let message = JointState {
            name: names,
            position: vec![0.0; n],
            velocity: vec![0.0; n],
            effort: vec![0.0; n],
            ..Default::default()
        };
        Self { joints, message }
    }

    /// Positions, velocities and actuator efforts from `state`.
    pub fn fill(&mut self, state: &StateSnapshot, stamp: &Time) -> &JointState {
        self.message.header.stamp = stamp.clone();
        for (k, (qpos, dof)) in self.joints.iter().enumerate() {
            self.message.position[k] = state.qpos[*qpos];
            self.message.velocity[k] = state.qvel[*dof];
            self.message.effort[k] = state.qfrc_actuator[*dof];
        }
        &self.message
    }
}
