//! `/tf_static`, latched, sent once with the first state: the bodies no joint moves
//! (relative to their parent), and the fixed frames other outputs planned (sensor sites,
//! `world -> odom`).
use super::tf::body_frames;
use super::{Output, Plan, PlanError, Schedule, Tick, Topic};
use crate::model::pose::body_pose;
use crate::ros::Qos;
use crate::ros::interfaces::tf2_msgs::msg::TFMessage;

pub struct TfStatic {
    topic: Topic,
    /// (parent body, body) of the first transforms of the message, set from the state.
    bodies: Vec<(usize, usize)>,
    message: TFMessage,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    let mut bodies = Vec::new();
    let mut message = TFMessage::default();
    for robot in 0..plan.robots.len() {
        for (pair, frame) in body_frames(plan, robot, false) {
            bodies.push(pair);
            message.transforms.push(frame);
        }
    }
    message
        .transforms
        .extend(plan.static_frames.iter().cloned());
    plan.add(TfStatic {
        topic: Topic {
            name: "/tf_static".into(),
            schedule: Schedule::Once,
            qos: Qos::LATCHED,
        },
        bodies,
        message,
    });
    Ok(())
}

impl Output for TfStatic {
    type Message = TFMessage;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&TFMessage> {
        if self.message.transforms.is_empty() {
            return None;
        }
        let state = tick.state;
        for ((parent, body), frame) in self.bodies.iter().zip(self.message.transforms.iter_mut()) {
            let relative = body_pose(&state.xpos, &state.xquat_wxyz, *parent).inverse()
                * body_pose(&state.xpos, &state.xquat_wxyz, *body);
            frame.transform = (&relative).into();
        }
        for frame in self.message.transforms.iter_mut() {
            frame.header.stamp = tick.stamp.clone();
        }
        Some(&self.message)
    }
}
