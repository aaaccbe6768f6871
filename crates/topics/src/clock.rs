//! rosgraph_msgs/Clock on `/clock` at `ros.rates.clock`, for the sinks that take the sim
//! time from the sampled state: the streams (with it, the Foxglove server learns the sim
//! time). The ROS node sends its /clock from a thread and a DDS participant of its own, and
//! takes no publisher for this one.
use super::{Output, Plan, PlanError, Tick, Topic};
use crate::Qos;
use crate::messages::rosgraph_msgs::msg::Clock as ClockMsg;

/// The topic every sink knows the sim time by.
pub const CLOCK_TOPIC: &str = "/clock";

pub struct Clock {
    topic: Topic,
    message: ClockMsg,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    plan.add(Clock {
        topic: Topic {
            name: CLOCK_TOPIC.into(),
            schedule: plan.rate("clock", None),
            qos: Qos::STATE,
        },
        message: ClockMsg::default(),
    });
    Ok(())
}

impl Output for Clock {
    type Message = ClockMsg;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&ClockMsg> {
        self.message.clock = tick.stamp.clone();
        Some(&self.message)
    }
}
