//! rosgraph_msgs/Clock on `/clock`: the sim time whenever it moved, and again every
//! `WHILE_PAUSED` while it stands still, so that nodes started during a pause get a time.
use super::{Output, Plan, PlanError, Tick, Topic};
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
            schedule: plan.rate("clock", None),
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

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, fill};
    use crate::ros::convert::time;
    use std::time::{Duration, Instant};

    #[test]
    fn sends_when_time_moves_and_repeats_while_paused() {
        let mut f = Fixture::new("");
        let first = f.state(0);
        let later = f.state(1);
        let mut plan = f.plan().unwrap();
        let now = Instant::now();
        let stamp = time(first.time);
        assert!(fill(&mut plan, "/clock", &f.tick(&first, &stamp, now)).is_some());
        let soon = now + Duration::from_millis(10);
        assert!(fill(&mut plan, "/clock", &f.tick(&first, &stamp, soon)).is_none());
        let stamp = time(later.time);
        let m = fill(&mut plan, "/clock", &f.tick(&later, &stamp, soon)).unwrap();
        assert_eq!(m["clock"]["nanosec"], 2_000_000);
        let paused = soon + super::WHILE_PAUSED;
        assert!(fill(&mut plan, "/clock", &f.tick(&later, &stamp, paused)).is_some());
    }
}
