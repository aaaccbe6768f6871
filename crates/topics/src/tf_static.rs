//! `/tf_static`, latched, sent once with the first state: the bodies no joint moves
//! (relative to their parent), and the fixed frames other outputs planned (sensor sites,
//! `world -> odom`).
use super::tf::{body_frames, set_body_frames, stamp_all};
use super::{Output, Plan, PlanError, Schedule, Tick, Topic};
use crate::Qos;
use crate::messages::tf2_msgs::msg::TFMessage;

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
        set_body_frames(&self.bodies, &mut self.message.transforms, tick);
        stamp_all(&mut self.message.transforms, tick);
        Some(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, number};

    #[test]
    fn sends_fixed_bodies_and_the_frames_other_outputs_planned() {
        let mut f = Fixture::new("");
        let (m, _) = f.message(0, "/tf_static");
        let find = |parent: &str, child: &str| {
            m["transforms"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["header"]["frame_id"] == parent && t["child_frame_id"] == child)
                .unwrap_or_else(|| panic!("no {parent} -> {child} in {m}"))
                .clone()
        };
        let lidar = find("base", "lidar");
        assert!((number(&lidar["transform"]["translation"]["z"]) - 0.2).abs() < 1e-12);
        let wall = find("world", "wall");
        assert!((number(&wall["transform"]["translation"]["x"]) - 2.0).abs() < 1e-12);
        find("world", "odom");
        find("base", "imu_site");
        find("arm", "ft_site");
        find("base", "down");
        find("lidar", "lidar_scan");
        assert_eq!(
            m["transforms"][0]["header"]["stamp"],
            serde_json::json!({"sec": 0, "nanosec": 0})
        );
    }
}
