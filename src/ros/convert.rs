//! Conversions between simulation state and ROS 2 messages, kept in one place.
use crate::model::RobotMap;
use crate::ros::interfaces::builtin_interfaces::msg::Time;
use crate::ros::interfaces::geometry_msgs::msg::{
    Quaternion as RosQuaternion, Transform, TransformStamped, Vector3,
};
use crate::ros::interfaces::sensor_msgs::msg::JointState;
use crate::ros::interfaces::std_msgs::msg::Header;
use crate::ros::interfaces::tf2_msgs::msg::TFMessage;
use crate::sim::StateSnapshot;
use mujoco_rs::prelude::*;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion};

/// Sim time in seconds as a ROS time stamp.
pub fn time(seconds: f64) -> Time {
    let total = (seconds.max(0.0) * 1e9).round() as u64;
    Time {
        sec: (total / 1_000_000_000) as i32,
        nanosec: (total % 1_000_000_000) as u32,
    }
}

/// A ROS duration in seconds.
pub fn seconds(d: &crate::ros::interfaces::builtin_interfaces::msg::Duration) -> f64 {
    d.sec as f64 + d.nanosec as f64 * 1e-9
}

/// A joint trajectory as flat arrays.
pub struct TrajectoryArrays {
    /// Seconds from the start, per point.
    pub times: Vec<f64>,
    /// Point by point, joint by joint.
    pub positions: Vec<f64>,
    /// Same layout as positions when every point has velocities, else empty.
    pub velocities: Vec<f64>,
}

/// A trajectory_msgs/JointTrajectory as flat arrays. An error names the first point whose
/// positions do not match the joints.
pub fn trajectory_arrays(
    trajectory: &crate::ros::interfaces::trajectory_msgs::msg::JointTrajectory,
) -> Result<TrajectoryArrays, String> {
    let n = trajectory.joint_names.len();
    let points = &trajectory.points;
    let with_velocities = points.iter().all(|p| p.velocities.len() == n);
    let mut times = Vec::with_capacity(points.len());
    let mut positions = Vec::with_capacity(n * points.len());
    let mut velocities = Vec::new();
    for (k, point) in points.iter().enumerate() {
        if point.positions.len() != n {
            return Err(format!(
                "point {k} has {} positions for {n} joints",
                point.positions.len()
            ));
        }
        times.push(seconds(&point.time_from_start));
        positions.extend_from_slice(&point.positions);
        if with_velocities {
            velocities.extend_from_slice(&point.velocities);
        }
    }
    Ok(TrajectoryArrays {
        times,
        positions,
        velocities,
    })
}

/// A JointState message of one robot, reused between publications.
pub struct JointStateMsg {
    /// (qpos address, dof address) per hinge or slide joint.
    joints: Vec<(usize, usize)>,
    message: JointState,
}

impl JointStateMsg {
    pub fn new(model: &MjModel, robot: &RobotMap) -> Self {
        let mut joints = Vec::new();
        let mut names = Vec::new();
        for joint in &robot.joints {
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
        Self { joints, message }
    }

    /// Positions, velocities and actuator efforts from `state`.
    pub fn fill(&mut self, state: &StateSnapshot, stamp: &Time) -> &JointState {
        self.message.header.stamp = stamp.clone();
        for (k, (qpos, dof)) in self.joints.iter().enumerate() {
            self.message.position[k] = state.qpos[*qpos];
            self.message.velocity[k] = state.qvel[*dof];
            self.message.effort[k] = state.qfrc_actuator[*dof];
        }
        &self.message
    }
}

/// The transforms a robot publishes: MJCF robots every body relative to its parent body
/// (the world for the root), URDF robots only the root (robot_state_publisher does the
/// rest from joint_states and robot_description). Bodies that a joint moves relative to
/// their parent go to /tf every cycle; the others to /tf_static once.
pub struct Transforms {
    /// (parent body, body, parent frame, child frame)
    moving: Vec<(usize, usize, String, String)>,
    fixed: Vec<(usize, usize, String, String)>,
}

pub(super) fn frame_name(
    world_frame: &str,
    robot: &RobotMap,
    body: usize,
    prefixed: bool,
) -> String {
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

impl Transforms {
    /// `prefixed`: several robots share the world, so frames carry the robot's name.
    /// `odometry_root`: the body whose transform odometry sends (`odom -> root`).
    pub fn new(
        model: &MjModel,
        robot: &RobotMap,
        prefixed: bool,
        odometry_root: Option<usize>,
    ) -> Self {
        let mut moving = Vec::new();
        let mut fixed = Vec::new();
        let bodies: Vec<usize> = match robot.urdf {
            Some(_) => robot.root_body.into_iter().collect(),
            None => robot.bodies.iter().map(|b| b.id).collect(),
        };
        for body in bodies.into_iter().filter(|b| Some(*b) != odometry_root) {
            let parent = model.body_parentid()[body] as usize;
            let entry = (
                parent,
                body,
                frame_name("world", robot, parent, prefixed),
                frame_name("world", robot, body, prefixed),
            );
            if model.body_jntnum()[body] > 0 {
                moving.push(entry);
            } else {
                fixed.push(entry);
            }
        }
        Self { moving, fixed }
    }

    fn message(
        entries: &[(usize, usize, String, String)],
        state: &StateSnapshot,
        stamp: &Time,
    ) -> TFMessage {
        let pose = |b: usize| {
            let p = &state.xpos[3 * b..3 * b + 3];
            let q = &state.xquat_wxyz[4 * b..4 * b + 4];
            Isometry3::from_parts(
                Translation3::new(p[0], p[1], p[2]),
                UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3])),
            )
        };
        let transforms = entries
            .iter()
            .map(|(parent, body, parent_frame, child_frame)| {
                let relative = pose(*parent).inverse() * pose(*body);
                let (t, q) = (relative.translation.vector, relative.rotation);
                TransformStamped {
                    header: Header {
                        stamp: stamp.clone(),
                        frame_id: parent_frame.clone(),
                    },
                    child_frame_id: child_frame.clone(),
                    transform: Transform {
                        translation: Vector3 {
                            x: t.x,
                            y: t.y,
                            z: t.z,
                        },
                        // ROS order x, y, z, w.
                        rotation: RosQuaternion {
                            x: q.i,
                            y: q.j,
                            z: q.k,
                            w: q.w,
                        },
                    },
                }
            })
            .collect();
        TFMessage { transforms }
    }

    pub fn moving(&self, state: &StateSnapshot, stamp: &Time) -> Option<TFMessage> {
        (!self.moving.is_empty()).then(|| Self::message(&self.moving, state, stamp))
    }

    pub fn fixed(&self, state: &StateSnapshot, stamp: &Time) -> Option<TFMessage> {
        (!self.fixed.is_empty()).then(|| Self::message(&self.fixed, state, stamp))
    }
}

/// The live figures as one diagnostic status: real-time factor, step time, overruns,
/// refused / ignored / dropped commands, MuJoCo's instability resets.
pub fn diagnostics(
    stats: &crate::sim::SimStats,
    stamp: &Time,
) -> crate::ros::interfaces::diagnostic_msgs::msg::DiagnosticArray {
    use crate::ros::interfaces::diagnostic_msgs::msg::{
        DiagnosticArray, DiagnosticStatus, KeyValue,
    };
    let value = |key: &str, value: String| KeyValue {
        key: key.into(),
        value,
    };
    let values = vec![
        value("real_time_factor", format!("{:.4}", stats.real_time_factor)),
        value("sim_time", format!("{:.6}", stats.sim_time)),
        value("steps", stats.steps.to_string()),
        value("mean_step_us", format!("{:.1}", stats.mean_step_time * 1e6)),
        value("max_step_us", format!("{:.1}", stats.max_step_time * 1e6)),
        value("overruns", stats.overruns.to_string()),
        value("rejected_commands", stats.rejected_commands.to_string()),
        value("ignored_commands", stats.ignored_commands.to_string()),
        value("dropped_commands", stats.dropped_commands.to_string()),
        value("refused_operations", stats.refused_operations.to_string()),
        value("instabilities", stats.instabilities.to_string()),
    ];
    let warn = stats.instabilities > 0;
    let level = if warn {
        DiagnosticStatus::WARN
    } else {
        DiagnosticStatus::OK
    };
    DiagnosticArray {
        header: Header {
            stamp: stamp.clone(),
            frame_id: String::new(),
        },
        status: vec![DiagnosticStatus {
            level,
            name: "mujoco_bridge: physics".into(),
            message: if warn {
                "MuJoCo reset an unstable state".into()
            } else {
                "running".into()
            },
            hardware_id: "mujoco".into(),
            values,
        }],
    }
}
