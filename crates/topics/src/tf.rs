//! `/tf`: the frames that move. MJCF robots send every body relative to its parent body (the
//! world for the root), URDF robots only their root (robot_state_publisher does the rest
//! from joint_states and robot_description); a robot with odometry sends `odom -> root` in
//! place of `world -> root`. Bodies that no joint moves go to /tf_static instead.
use super::odometry::Estimate;
use super::{Output, Plan, PlanError, Shared, Tick, Topic};
use crate::Qos;
use crate::convert::{frame_name, transform_stamped};
use crate::messages::geometry_msgs::msg::TransformStamped;
use crate::messages::tf2_msgs::msg::TFMessage;
use crate::model::pose::body_pose;
use nalgebra::Isometry3;

pub struct Tf {
    topic: Topic,
    /// (parent body, body) of the first transforms of the message.
    bodies: Vec<(usize, usize)>,
    /// The odometry estimates whose transforms follow.
    odometry: Vec<Shared<Estimate>>,
    message: TFMessage,
}

/// The body transforms of robot `robot`, those a joint moves or the others, as
/// (parent body, body) with the message entry to send them in.
pub(super) fn body_frames(
    plan: &Plan,
    robot: usize,
    moving: bool,
) -> Vec<((usize, usize), TransformStamped)> {
    let (model, map, prefixed) = (plan.model, &plan.robots[robot], plan.prefixed(robot));
    let odometry_root = plan.odometry[robot].as_ref().map(|e| e.lock().root());
    let bodies: Vec<usize> = match map.urdf {
        Some(_) => map.root_body.into_iter().collect(),
        None => map.bodies.iter().map(|b| b.id).collect(),
    };
    bodies
        .into_iter()
        .filter(|&b| Some(b) != odometry_root && (model.body_jntnum()[b] > 0) == moving)
        .map(|body| {
            let parent = model.body_parentid()[body] as usize;
            let frame = transform_stamped(
                frame_name("world", map, parent, prefixed),
                frame_name("world", map, body, prefixed),
                &Isometry3::identity(),
            );
            ((parent, body), frame)
        })
        .collect()
}

/// Sets each (parent body, body) transform of `frames` from the state of `tick`.
pub(super) fn set_body_frames(
    bodies: &[(usize, usize)],
    frames: &mut [TransformStamped],
    tick: &Tick,
) {
    let state = tick.state;
    for ((parent, body), frame) in bodies.iter().zip(frames.iter_mut()) {
        let relative = body_pose(&state.xpos, &state.xquat_wxyz, *parent).inverse()
            * body_pose(&state.xpos, &state.xquat_wxyz, *body);
        frame.transform = (&relative).into();
    }
}

/// Stamps every transform with the time of `tick`.
pub(super) fn stamp_all(frames: &mut [TransformStamped], tick: &Tick) {
    for frame in frames {
        frame.header.stamp = tick.stamp.clone();
    }
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    let mut bodies = Vec::new();
    let mut message = TFMessage::default();
    for robot in 0..plan.robots.len() {
        for (pair, frame) in body_frames(plan, robot, true) {
            bodies.push(pair);
            message.transforms.push(frame);
        }
    }
    let mut odometry = Vec::new();
    for estimate in plan.odometry.iter().flatten() {
        let e = estimate.lock();
        if !e.sends_tf {
            continue;
        }
        message.transforms.push(transform_stamped(
            e.odom_frame.clone(),
            e.root_frame.clone(),
            &Isometry3::identity(),
        ));
        odometry.push(estimate.clone());
    }
    plan.add(Tf {
        topic: Topic {
            name: "/tf".into(),
            schedule: plan.rate("tf", None),
            qos: Qos::STATE,
        },
        bodies,
        odometry,
        message,
    });
    Ok(())
}

impl Output for Tf {
    type Message = TFMessage;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&TFMessage> {
        if self.message.transforms.is_empty() {
            return None;
        }
        let (body_frames, odometry_frames) =
            self.message.transforms.split_at_mut(self.bodies.len());
        for (estimate, frame) in self.odometry.iter().zip(odometry_frames.iter_mut()) {
            estimate.lock().update_transform(tick.state, frame);
        }
        set_body_frames(&self.bodies, body_frames, tick);
        stamp_all(&mut self.message.transforms, tick);
        Some(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, number};

    #[test]
    fn sends_moving_bodies_relative_to_their_parent_and_odom_to_the_root() {
        let mut f = Fixture::new("");
        let (m, _) = f.message(0, "/tf");
        let pairs: Vec<(String, String)> = m["transforms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let name = |v: &serde_json::Value| v.as_str().unwrap().to_string();
                (name(&t["header"]["frame_id"]), name(&t["child_frame_id"]))
            })
            .collect();
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(pairs, [pair("base", "arm"), pair("odom", "base")]);
        let arm = &m["transforms"][0]["transform"]["translation"];
        assert!((number(&arm["z"]) - 0.1).abs() < 1e-12, "{arm}");
        let base = &m["transforms"][1]["transform"]["translation"];
        assert!(
            (number(&base["z"]) - 1.0).abs() < 1e-12,
            "odom lies level at the start"
        );
    }
}
