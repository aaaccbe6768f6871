//! sensor_msgs/JointState of each robot: position, velocity and actuator effort of every
//! hinge and slide joint.
use super::{Output, Plan, PlanError, Tick, Topic};
use crate::Qos;
use crate::messages::sensor_msgs::msg::JointState;
use mujoco_rs::prelude::*;

pub struct JointStates {
    topic: Topic,
    /// (qpos address, dof address) per joint of the message.
    joints: Vec<(usize, usize)>,
    message: JointState,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let model = plan.model;
        let mut joints = Vec::new();
        let mut names = Vec::new();
        for joint in &plan.robots[robot].joints {
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
        let topic = Topic {
            name: plan.robot_topic(robot, "joint_states"),
            schedule: plan.rate("joint_states", None),
            qos: Qos::STATE,
        };
        plan.add(JointStates {
            topic,
            joints,
            message,
        });
    }
    Ok(())
}

impl Output for JointStates {
    type Message = JointState;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&JointState> {
        let (m, state) = (&mut self.message, tick.state);
        m.header.stamp = tick.stamp.clone();
        for (k, (qpos, dof)) in self.joints.iter().enumerate() {
            m.position[k] = state.qpos[*qpos];
            m.velocity[k] = state.qvel[*dof];
            m.effort[k] = state.qfrc_actuator[*dof];
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, number};

    #[test]
    fn fills_hinge_and_slide_joints_only() {
        let mut f = Fixture::new("");
        let (m, state) = f.message(20, "joint_states");
        assert_eq!(
            m["name"],
            serde_json::json!(["hinge"]),
            "not the free joint"
        );
        // The free joint takes qpos 0..7 and dofs 0..6; the hinge comes next.
        assert_eq!(number(&m["position"][0]), state.qpos[7]);
        assert_eq!(number(&m["velocity"][0]), state.qvel[6]);
        assert!(state.qvel[6] != 0.0, "the arm swings down");
    }
}
