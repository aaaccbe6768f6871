//! `~/contacts` (visualization_msgs/MarkerArray): the contacts the physics thread exports
//! (`sim.export_contacts`), drawn in the world frame.
use super::{Output, Plan, PlanError, Tick, Topic};
use crate::Qos;
use crate::messages::geometry_msgs::msg::{
    Point, Pose, Quaternion as RosQuaternion, Vector3 as RosVector3,
};
use crate::messages::std_msgs::msg::{ColorRGBA, Header};
use crate::messages::visualization_msgs::msg::{Marker, MarkerArray};

pub struct Contacts {
    topic: Topic,
    /// Meters of arrow per newton of normal force.
    force_scale: f64,
    message: MarkerArray,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    if plan.exported_contacts == 0 {
        return Ok(());
    }
    plan.add(Contacts {
        topic: Topic {
            name: "~/contacts".into(),
            schedule: plan.rate("contacts", None),
            qos: Qos::STATE,
        },
        force_scale: plan.config.ros.contact_force_scale,
        message: MarkerArray::default(),
    });
    Ok(())
}

impl Output for Contacts {
    type Message = MarkerArray;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&MarkerArray> {
        self.message.markers = contacts(tick.state, tick.stamp, self.force_scale);
        Some(&self.message)
    }
}

/// The contacts of `state` as markers in the world frame: a sphere at each contact point
/// and an arrow along its normal, `scale` meters long per newton of normal force. The first
/// marker clears those of the previous message.
fn contacts(
    state: &crate::sim::StateSnapshot,
    stamp: &crate::messages::builtin_interfaces::msg::Time,
    scale: f64,
) -> Vec<Marker> {
    let header = Header {
        stamp: stamp.clone(),
        frame_id: "world".into(),
    };
    let mut markers = vec![Marker {
        header: header.clone(),
        ns: "contacts".into(),
        action: Marker::DELETEALL,
        ..Default::default()
    }];
    let color = ColorRGBA {
        r: 1.0,
        g: 0.3,
        b: 0.1,
        a: 1.0,
    };
    for (k, contact) in state.contacts().enumerate() {
        let (p, n, force) = (contact.position, contact.normal(), contact.force[0]);
        let point = |s: f64| Point {
            x: p[0] + s * n[0],
            y: p[1] + s * n[1],
            z: p[2] + s * n[2],
        };
        let base = Marker {
            header: header.clone(),
            ns: "contacts".into(),
            action: Marker::ADD,
            color: color.clone(),
            pose: Pose {
                orientation: RosQuaternion {
                    w: 1.0,
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Default::default()
        };
        markers.push(Marker {
            id: (2 * k) as i32,
            type_: Marker::SPHERE,
            pose: Pose {
                position: point(0.0),
                ..base.pose.clone()
            },
            scale: RosVector3 {
                x: 0.02,
                y: 0.02,
                z: 0.02,
            },
            ..base.clone()
        });
        markers.push(Marker {
            id: (2 * k + 1) as i32,
            type_: Marker::ARROW,
            points: vec![point(0.0), point(force * scale)],
            scale: RosVector3 {
                x: 0.01,
                y: 0.02,
                z: 0.02,
            },
            ..base
        });
    }
    markers
}

#[cfg(test)]
mod tests {
    use super::super::fixture::Fixture;
    use super::*;
    use crate::convert::time;

    #[test]
    fn a_point_and_an_arrow_per_contact_after_clearing_the_last() {
        let mut f = Fixture::new("");
        let mut state = f.state(0);
        // One contact as the physics thread exports it: point, frame (the normal first),
        // force (the normal force first), geoms and distance.
        let frame = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        state.contacts = [1.0, 1.0, 2.0, 0.0].into_iter().chain(frame).collect();
        state.contacts.extend([50.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, -0.001]);
        let markers = contacts(&state, &time(state.time), 0.01);
        assert_eq!(markers.len(), 3);
        assert_eq!(markers[0].action, Marker::DELETEALL);
        assert_eq!(markers[1].type_, Marker::SPHERE);
        let arrow = &markers[2].points;
        assert_eq!((arrow[0].x, arrow[0].y), (1.0, 2.0));
        assert!((arrow[1].z - 0.5).abs() < 1e-12, "0.01 m per newton");
    }
}
