//! rosgraph_msgs/Clock on `/clock`: the sim time whenever it moved, and again every
//! `WHILE_PAUSED` while it stands still, so that nodes started during a pause get a time.
use super::{Output, Plan, PlanError, Schedule, Tick, Topic};
use crate::ros::Qos;
use crate::ros::interfaces::rosgraph_msgs::msg::Clock as ClockMsg;
use std::time::{Duration, Instant};

const WHILE_PAUSED: Duration = Duration::from_millis(100);

pub struct Clock {
    topic: Topic,
    /// The step and the moment of the last message sent.
    last: Option<(u64, Instant)>,
    message: ClockMsg,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    plan.add(Clock {
        topic: Topic {
            name: "/clock".into(),
            schedule: Schedule::Rate(plan.config.ros.rates.clock),
            qos: Qos::STATE,
        },
        last: None,
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
        let step = tick.state.step;
        if let Some((last_step, sent)) = self.last
            && last_step == step
            && tick.now - sent < WHILE_PAUSED
        {
            return None;
        }
        self.last = Some((step, tick.now));
        self.message.clock = tick.stamp.clone();
        Some(&self.message)
    }
}
