//! Odometry of a floating base: nav_msgs/Odometry on `odom` and the transform
//! `odom -> <root link>` (sent with /tf in place of `world -> <root link>`). The odom frame
//! lies where the robot starts, level: its x, y and yaw; `world -> odom` goes to /tf_static
//! unless a localizer owns the odom frame's parent. The twist is in the root link's frame,
//! as nav_msgs/Odometry asks. The source is the ground truth, or for a diff-drive base
//! optionally dead reckoning from its wheel angles.
use super::convert::frame_name;
use crate::config::{BaseConfig, BaseKind, OdometryConfig, OdometrySource};
use crate::model::RobotMap;
use crate::ros::interfaces::builtin_interfaces::msg::Time;
use crate::ros::interfaces::geometry_msgs::msg::{
    Point, Pose, Quaternion as RosQuaternion, Transform, TransformStamped, Vector3 as RosVector3,
};
use crate::ros::interfaces::nav_msgs::msg::Odometry as OdometryMsg;
use crate::ros::interfaces::std_msgs::msg::Header;
use crate::sim::StateSnapshot;
use mujoco_rs::prelude::*;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};

pub struct Odometry {
    root: usize,
    /// The free joint's dof address.
    dof: usize,
    /// The odom frame in the world.
    origin: Isometry3<f64>,
    message: OdometryMsg,
    world_to_odom: bool,
    wheels: Option<Wheels>,
}

/// Dead reckoning of a diff-drive base from its wheel angles: exact for arcs, whatever the
/// rate it is updated at.
struct Wheels {
    /// (qpos, dof) of the left and right wheel joints.
    left: (usize, usize),
    right: (usize, usize),
    radius: f64,
    separation: f64,
    /// The base's height at the start (wheels know nothing of it).
    z: f64,
    /// The wheel bodies, whose midpoint (the axle's) is what the wheels carry along.
    bodies: (usize, usize),
    /// The root body, and the axle midpoint in its frame (x, y), found at the first update.
    root: usize,
    axle: Option<[f64; 2]>,
    /// The axle midpoint's x, y and the heading, in the odom frame.
    pose: [f64; 3],
    /// Wheel angles and sim time of the last update.
    last: Option<(f64, f64, f64)>,
}

impl Wheels {
    fn new(
        model: &MjModel,
        robot: &RobotMap,
        base: Option<&BaseConfig>,
        root: usize,
        z: f64,
    ) -> Result<Self, String> {
        let base = base
            .filter(|b| b.kind == BaseKind::DiffDrive)
            .ok_or("source 'wheels' needs a diff_drive base (control.base)")?;
        let joint = |name: &Option<String>| {
            let name = name.as_deref().unwrap_or_default();
            let j = robot
                .joints
                .iter()
                .find(|j| j.name == name)
                .ok_or_else(|| format!("no wheel joint '{name}'"))?;
            Ok::<_, String>((
                model.jnt_qposadr()[j.id] as usize,
                model.jnt_dofadr()[j.id] as usize,
                model.jnt_bodyid()[j.id] as usize,
            ))
        };
        let (left, right) = (joint(&base.left_wheel)?, joint(&base.right_wheel)?);
        Ok(Self {
            left: (left.0, left.1),
            right: (right.0, right.1),
            bodies: (left.2, right.2),
            root,
            axle: None,
            radius: base.wheel_radius.unwrap_or(0.0),
            separation: base.wheel_separation.unwrap_or(1.0),
            z,
            pose: [0.0; 3],
            last: None,
        })
    }

    /// Where the axle midpoint sits in the root body's frame, from `state`.
    fn find_axle(&self, state: &StateSnapshot) -> [f64; 2] {
        let at = |b: usize| {
            Vector3::new(
                state.xpos[3 * b],
                state.xpos[3 * b + 1],
                state.xpos[3 * b + 2],
            )
        };
        let q = &state.xquat_wxyz[4 * self.root..4 * self.root + 4];
        let rotation = UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]));
        let middle = (at(self.bodies.0) + at(self.bodies.1)) / 2.0;
        let local = rotation.inverse_transform_vector(&(middle - at(self.root)));
        [local.x, local.y]
    }

    fn update(&mut self, state: &StateSnapshot) {
        if self.axle.is_none() {
            let axle = self.find_axle(state);
            self.axle = Some(axle);
            self.pose = [axle[0], axle[1], 0.0];
        }
        let (left, right) = (state.qpos[self.left.0], state.qpos[self.right.0]);
        match self.last {
            // The sim went back in time (reset, snapshot): start over.
            Some((_, _, time)) if state.time < time => {
                let axle = self.axle.unwrap_or_default();
                self.pose = [axle[0], axle[1], 0.0];
            }
            Some((l0, r0, _)) => {
                let (dl, dr) = (self.radius * (left - l0), self.radius * (right - r0));
                let distance = (dl + dr) / 2.0;
                let turn = (dr - dl) / self.separation;
                let heading = self.pose[2] + turn / 2.0;
                self.pose[0] += distance * heading.cos();
                self.pose[1] += distance * heading.sin();
                self.pose[2] += turn;
            }
            None => {}
        }
        self.last = Some((left, right, state.time));
    }

    /// The root body's pose: the axle's, moved back by the axle's offset in the body.
    fn pose(&self) -> Isometry3<f64> {
        let [ax, ay] = self.axle.unwrap_or_default();
        let (sin, cos) = self.pose[2].sin_cos();
        Isometry3::from_parts(
            Translation3::new(
                self.pose[0] - (cos * ax - sin * ay),
                self.pose[1] - (sin * ax + cos * ay),
                self.z,
            ),
            UnitQuaternion::from_euler_angles(0.0, 0.0, self.pose[2]),
        )
    }

    /// The root body's velocity in its frame from the wheel speeds: the axle moves straight
    /// ahead; a root behind (or beside) the axle also slides as the base turns.
    fn twist(&self, state: &StateSnapshot) -> (Vector3<f64>, Vector3<f64>) {
        let (wl, wr) = (state.qvel[self.left.1], state.qvel[self.right.1]);
        let v = self.radius * (wl + wr) / 2.0;
        let w = self.radius * (wr - wl) / self.separation;
        let [ax, ay] = self.axle.unwrap_or_default();
        (
            Vector3::new(v + w * ay, -w * ax, 0.0),
            Vector3::new(0.0, 0.0, w),
        )
    }
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
    /// None when the robot has no floating base or the config turns odometry off; an error
    /// when wheel odometry is asked of a robot without a diff-drive base.
    pub fn new(
        model: &MjModel,
        robot: &RobotMap,
        config: &OdometryConfig,
        base: Option<&BaseConfig>,
        prefixed: bool,
    ) -> Result<Option<Self>, String> {
        let Some(joint) = robot.floating_joint.filter(|_| config.enabled) else {
            return Ok(None);
        };
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
        let wheels = match config.source {
            OdometrySource::GroundTruth => None,
            OdometrySource::Wheels => Some(Wheels::new(model, robot, base, root, q0[2])?),
        };
        Ok(Some(Self {
            root,
            dof: model.jnt_dofadr()[joint] as usize,
            origin,
            message,
            world_to_odom: config.world_to_odom,
            wheels,
        }))
    }

    /// Brings wheel odometry up to `state` (once per cycle, before publishing).
    pub fn update(&mut self, state: &StateSnapshot) {
        if let Some(wheels) = self.wheels.as_mut() {
            wheels.update(state);
        }
    }

    /// The root body in the odom frame, from `state`.
    fn pose(&self, state: &StateSnapshot) -> Isometry3<f64> {
        if let Some(wheels) = &self.wheels {
            return wheels.pose();
        }
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
        let (linear, angular) = match &self.wheels {
            Some(wheels) => wheels.twist(state),
            None => {
                let world_rotation = self.origin.rotation * pose.rotation;
                let v = &state.qvel[self.dof..self.dof + 6];
                // A free joint's linear velocity is in the world frame, its angular one in
                // the body's.
                let linear =
                    world_rotation.inverse_transform_vector(&Vector3::new(v[0], v[1], v[2]));
                (linear, Vector3::new(v[3], v[4], v[5]))
            }
        };
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
