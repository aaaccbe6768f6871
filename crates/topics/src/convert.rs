//! Conversions between simulation values and ROS 2 messages, one per kind of value: time,
//! vectors, quaternions (ROS orders them x, y, z, w; MuJoCo w, x, y, z), poses, frame
//! names, a rendered frame's image header. Everything else converts through these (and through the `From` conversions of
//! nalgebra's poses, which `crate::messages` holds).
use crate::control::Trajectory;
use crate::messages::builtin_interfaces::msg::Time;
use crate::messages::geometry_msgs::msg::{Quaternion as RosQuaternion, Vector3 as RosVector3};
use crate::messages::sensor_msgs::msg::Image;
use crate::model::RobotMap;
use crate::render::Frame;
use nalgebra::Isometry3;

/// A MuJoCo quaternion (w, x, y, z) as ROS's, as it is (a sensor's raw reading).
pub fn quaternion_wxyz(wxyz: &[f64]) -> RosQuaternion {
    RosQuaternion {
        x: wxyz[1],
        y: wxyz[2],
        z: wxyz[3],
        w: wxyz[0],
    }
}

/// Three values (x, y, z) of a MuJoCo array.
pub fn vector(xyz: &[f64]) -> RosVector3 {
    RosVector3 {
        x: xyz[0],
        y: xyz[1],
        z: xyz[2],
    }
}

/// Sim time in seconds as a ROS time stamp.
pub fn time(seconds: f64) -> Time {
    let total = (seconds.max(0.0) * 1e9).round() as u64;
    Time {
        sec: (total / 1_000_000_000) as i32,
        nanosec: (total % 1_000_000_000) as u32,
    }
}

/// A ROS duration in seconds.
pub fn seconds(d: &crate::messages::builtin_interfaces::msg::Duration) -> f64 {
    d.sec as f64 + d.nanosec as f64 * 1e-9
}

/// The first point of a trajectory whose positions do not match its joints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("point {point} has {positions} positions for {joints} joints")]
pub struct PointSizeError {
    pub point: usize,
    pub positions: usize,
    pub joints: usize,
}

/// A trajectory_msgs/JointTrajectory as the controllers follow it (for actuators still to
/// be found by joint name). Velocities count where every point gives them, accelerations
/// where every point gives them too. An error names the first point whose positions do not
/// match the joints.
pub fn trajectory(
    trajectory: &crate::messages::trajectory_msgs::msg::JointTrajectory,
) -> Result<Trajectory, PointSizeError> {
    let n = trajectory.joint_names.len();
    let points = &trajectory.points;
    // Every size is checked before anything is allocated: the buffers below then hold no
    // more than the message itself did.
    if let Some((k, point)) = points
        .iter()
        .enumerate()
        .find(|(_, p)| p.positions.len() != n)
    {
        return Err(PointSizeError {
            point: k,
            positions: point.positions.len(),
            joints: n,
        });
    }
    let with_velocities = points.iter().all(|p| p.velocities.len() == n);
    let with_accelerations = with_velocities && points.iter().all(|p| p.accelerations.len() == n);
    let mut out = Trajectory {
        times: Vec::with_capacity(points.len()),
        positions: Vec::with_capacity(n * points.len()),
        ..Default::default()
    };
    for point in points {
        out.times.push(seconds(&point.time_from_start));
        out.positions.extend_from_slice(&point.positions);
        if with_velocities {
            out.velocities.extend_from_slice(&point.velocities);
        }
        if with_accelerations {
            out.accelerations.extend_from_slice(&point.accelerations);
        }
    }
    Ok(out)
}

/// The tf frame of `body` of `robot`: `world_frame` for the world body, else the body's
/// name, under the robot's name when `prefixed` (several robots share the world).
pub fn frame_name(world_frame: &str, robot: &RobotMap, body: usize, prefixed: bool) -> String {
    if body == 0 {
        return world_frame.to_string();
    }
    let name = robot
        .bodies
        .iter()
        .find(|b| b.id == body)
        .map(|b| b.name.clone())
        .unwrap_or_else(|| format!("body_{body}"));
    if prefixed {
        format!("{}/{name}", robot.name)
    } else {
        name
    }
}

/// A frame a sensor's config names: a link of the robot's as tf names it (prefixed where
/// robots share the world), else as given (a frame someone else publishes).
pub fn given_frame(given: &str, robot: &RobotMap, prefixed: bool) -> String {
    match robot.bodies.iter().find(|b| b.name == given) {
        Some(link) => frame_name("world", robot, link.id, prefixed),
        None => given.to_string(),
    }
}

/// The transform `parent -> child` (stamped later, when it is sent).
pub fn transform_stamped(
    parent: String,
    child: String,
    at: &Isometry3<f64>,
) -> crate::messages::geometry_msgs::msg::TransformStamped {
    crate::messages::geometry_msgs::msg::TransformStamped {
        header: crate::messages::std_msgs::msg::Header {
            stamp: Time::default(),
            frame_id: parent,
        },
        child_frame_id: child,
        transform: at.into(),
    }
}

/// An Image of `width` x `height` with `encoding`, rows of `step` bytes.
pub fn image_header(image: &mut Image, frame: &Frame, frame_id: &str, encoding: &str, step: usize) {
    image.header.stamp = time(frame.time);
    if image.header.frame_id != frame_id {
        image.header.frame_id = frame_id.to_string();
    }
    image.width = frame.width as u32;
    image.height = frame.height as u32;
    if image.encoding != encoding {
        image.encoding = encoding.to_string();
    }
    image.is_bigendian = 0;
    image.step = step as u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::trajectory_msgs::msg::{JointTrajectory, JointTrajectoryPoint};

    #[test]
    fn a_huge_trajectory_of_empty_points_is_refused_before_anything_is_allocated() {
        // 200 000 names and as many points without positions: what a ~6 MB message holds;
        // sizing the buffers from it first would ask for 320 GB.
        let trajectory = JointTrajectory {
            joint_names: vec![String::new(); 200_000],
            points: vec![JointTrajectoryPoint::default(); 200_000],
            ..Default::default()
        };
        assert_eq!(
            super::trajectory(&trajectory).err(),
            Some(PointSizeError {
                point: 0,
                positions: 0,
                joints: 200_000
            })
        );
    }
}
