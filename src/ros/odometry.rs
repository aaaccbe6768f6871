//! Ground-truth odometry of a floating base: nav_msgs/Odometry on `odom` and the transform
//! `odom -> <root link>` (sent with /tf in place of `world -> <root link>`). The odom frame
//! lies where the robot starts, level: its x, y and yaw; `world -> odom` goes to /tf_static
//! unless a localizer owns the odom frame's parent. The twist is in the root link's frame,
//! as nav_msgs/Odometry asks.
use super::convert::frame_name;
use crate::config::OdometryConfig;
use crate::model::RobotMap;
use crate::sim::StateSnapshot;
use mujoco_rs::prelude::*;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{
    Point, Pose, Quaternion as RosQuaternion, Transform, TransformStamped, Vector3 as RosVector3,
};
use r2r::nav_msgs::msg::Odometry as OdometryMsg;
use r2r::std_msgs::msg::Header;

pub struct Odometry {
    root: usize,
    /// The free joint's dof address.
    dof: usize,
    /// The odom frame in the world.
    origin: Isometry3<f64>,
    message: OdometryMsg,
    world_to_odom: bool,
}

fn ros_quaternion(q: &UnitQuaternion<f64>) -> RosQuaternion {
    RosQuaternion {
        x: q.i,
        y: q.j,
        z: q.k,
        w: q.w,
    }
}

fn ros_vector(v: &Vector3<f64>) -> RosVector3 {
    RosVector3 {
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

impl Odometry {
    /// None when the robot has no floating base or the config turns odometry off.
    pub fn new(
        model: &MjModel,
        robot: &RobotMap,
        config: &OdometryConfig,
        prefixed: bool,
    ) -> Option<Self> {
        let joint = robot.floating_joint.filter(|_| config.enabled)?;
        let root = model.jnt_bodyid()[joint] as usize;
        let qadr = model.jnt_qposadr()[joint] as usize;
        let q0 = &model.qpos0()[qadr..qadr + 7];
        let start = UnitQuaternion::from_quaternion(Quaternion::new(q0[3], q0[4], q0[5], q0[6]));
        let (_, _, yaw) = start.euler_angles();
        let origin = Isometry3::from_parts(
            Translation3::new(q0[0], q0[1], 0.0),
            UnitQuaternion::from_euler_angles(0.0, 0.0, yaw),
        );
        let odom = if prefixed {
            format!("{}/{}", robot.name, config.frame_id)
        } else {
            config.frame_id.clone()
        };
        let message = OdometryMsg {
            header: Header {
                stamp: Time::default(),
                frame_id: odom,
            },
            child_frame_id: frame_name("world", robot, root, prefixed),
            ..Default::default()
        };
        Some(Self {
            root,
            dof: model.jnt_dofadr()[joint] as usize,
            origin,
            message,
            world_to_odom: config.world_to_odom,
        })
    }

    /// The root body in the odom frame, from `state`.
    fn pose(&self, state: &StateSnapshot) -> Isometry3<f64> {
        let b = self.root;
        let p = &state.xpos[3 * b..3 * b + 3];
        let q = &state.xquat_wxyz[4 * b..4 * b + 4];
        let world = Isometry3::from_parts(
            Translation3::new(p[0], p[1], p[2]),
            UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3])),
        );
        self.origin.inverse() * world
    }

    pub fn fill(&mut self, state: &StateSnapshot, stamp: &Time) -> &OdometryMsg {
        let pose = self.pose(state);
        let world_rotation = self.origin.rotation * pose.rotation;
        let v = &state.qvel[self.dof..self.dof + 6];
        // A free joint's linear velocity is in the world frame, its angular one in the body's.
        let linear = world_rotation.inverse_transform_vector(&Vector3::new(v[0], v[1], v[2]));
        let angular = Vector3::new(v[3], v[4], v[5]);
        let m = &mut self.message;
        m.header.stamp = stamp.clone();
        let t = pose.translation.vector;
        m.pose.pose = Pose {
            position: Point {
                x: t.x,
                y: t.y,
                z: t.z,
            },
            orientation: ros_quaternion(&pose.rotation),
        };
        m.twist.twist.linear = ros_vector(&linear);
        m.twist.twist.angular = ros_vector(&angular);
        m
    }

    /// `odom -> root`, for /tf.
    pub fn transform(&self, state: &StateSnapshot, stamp: &Time) -> TransformStamped {
        let pose = self.pose(state);
        TransformStamped {
            header: Header {
                stamp: stamp.clone(),
                frame_id: self.message.header.frame_id.clone(),
            },
            child_frame_id: self.message.child_frame_id.clone(),
            transform: Transform {
                translation: ros_vector(&pose.translation.vector),
                rotation: ros_quaternion(&pose.rotation),
            },
        }
    }

    /// `world -> odom`, for /tf_static, unless turned off.
    pub fn world_to_odom(&self, stamp: &Time) -> Option<TransformStamped> {
        self.world_to_odom.then(|| TransformStamped {
            header: Header {
                stamp: stamp.clone(),
                frame_id: "world".into(),
            },
            child_frame_id: self.message.header.frame_id.clone(),
            transform: Transform {
                translation: ros_vector(&self.origin.translation.vector),
                rotation: ros_quaternion(&self.origin.rotation),
            },
        })
    }

    /// The root body, whose `world -> root` transform odometry replaces.
    pub fn root(&self) -> usize {
        self.root
    }
}
