//! std_msgs/String `robot_description` of each URDF robot, latched: a late
//! robot_state_publisher or RViz still gets it.
use super::{Output, Plan, PlanError, Schedule, Tick, Topic};
use crate::Qos;
use crate::messages::std_msgs::msg::String as StringMsg;

pub struct Description {
    topic: Topic,
    message: StringMsg,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let Some(urdf) = &plan.robots[robot].urdf else {
            continue;
        };
        let message = StringMsg { data: urdf.clone() };
        plan.add(Description {
            topic: Topic {
                name: plan.robot_topic(robot, "robot_description"),
                schedule: Schedule::Once,
                qos: Qos::LATCHED,
            },
            message,
        });
    }
    Ok(())
}

impl Output for Description {
    type Message = StringMsg;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, _tick: &Tick) -> Option<&StringMsg> {
        Some(&self.message)
    }
}
