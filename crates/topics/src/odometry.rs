//! Odometry of a floating base: nav_msgs/Odometry on `odom` and the transform
//! `odom -> <root link>` (sent with /tf in place of `world -> <root link>`). The odom frame
//! lies where the robot starts, level: its x, y and yaw; `world -> odom` goes to /tf_static
//! unless a localizer owns the odom frame's parent. The twist is in the root link's frame,
//! as nav_msgs/Odometry asks. The source is the ground truth, or for a diff-drive base
//! optionally dead reckoning from its wheel angles.
use super::{Output, Plan, PlanError, Shared, Tick, Topic};
use crate::config::{BaseConfig, BaseKind, OdometryConfig, OdometrySource};
use crate::model::{RobotMap, pose};
use crate::Qos;
use crate::convert::{frame_name, transform_stamped};
use crate::messages::geometry_msgs::msg::TransformStamped;
use crate::messages::nav_msgs::msg::Odometry as OdometryMsg;
use crate::sim::StateSnapshot;
use mujoco_rs::prelude::*;
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

/// `odom` of a robot with a floating base.
pub struct Odometry {
    topic: Topic,
    estimate: Shared<Estimate>,
    message: OdometryMsg,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let config = &plan.config.robots[robot];
        let field = format!("robots[{robot}].ros.odometry");
        let Some(estimate) = Estimate::new(
            plan.model,
            &plan.robots[robot],
            &config.ros.odometry,
            config.control.base.as_ref(),
            plan.prefixed(robot),
        )
        .map_err(|e| e.at(field))?
        else {
            continue;
        };
        if let Some(frame) = estimate.world_to_odom() {
            plan.add_static_frame(frame);
        }
        let message = OdometryMsg {
            header: crate::messages::std_msgs::msg::Header {
                frame_id: estimate.odom_frame.clone(),
                ..Default::default()
            },
            child_frame_id: estimate.root_frame.clone(),
            ..Default::default()
        };
        let estimate = Shared::new(estimate);
        plan.odometry[robot] = Some(estimate.clone());
        let topic = Topic {
            name: plan.robot_topic(robot, &config.ros.odometry.topic),
            schedule: plan.rate("odom", None),
            qos: Qos::STATE,
        };
        plan.add(Odometry {
            topic,
            estimate,
            message,
        });
    }
    Ok(())
}

impl Output for Odometry {
    type Message = OdometryMsg;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn observe(&mut self, tick: &Tick) {
        self.estimate.lock().update(tick.state);
    }

    fn fill(&mut self, tick: &Tick) -> Option<&OdometryMsg> {
        let estimate = self.estimate.lock();
        let pose = estimate.pose(tick.state);
        let (linear, angular) = estimate.twist(tick.state);
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        m.pose.pose = (&pose).into();
        m.twist.twist.linear = (&linear).into();
        m.twist.twist.angular = (&angular).into();
        Some(m)
    }
}

/// Why odometry cannot be estimated as configured.
enum EstimateError {
    NoDiffDrive,
    NoWheelJoint(String),
}

impl EstimateError {
    fn at(self, field: String) -> PlanError {
        match self {
            Self::NoDiffDrive => PlanError::NoDiffDrive { field },
            Self::NoWheelJoint(joint) => PlanError::NoWheelJoint { field, joint },
        }
    }
}

/// Where a floating base is in its odom frame and how fast it moves, from the state; shared
/// by its `odom` topic and `/tf`.
pub struct Estimate {
    root: usize,
    /// The free joint's dof address.
    dof: usize,
    /// The odom frame in the world.
    origin: Isometry3<f64>,
    pub odom_frame: String,
    /// The frame odometry describes: the root link's, or `base_frame`'s.
    pub root_frame: String,
    /// The link `base_frame` names when it is not the root: its body, whose pose and twist
    /// odometry gives (the root's moved by where that link sits on it).
    base: Option<usize>,
    world_to_odom: bool,
    /// `odom -> root` goes on /tf.
    pub sends_tf: bool,
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
    ) -> Result<Self, EstimateError> {
        let base = base
            .filter(|b| b.kind == BaseKind::DiffDrive)
            .ok_or(EstimateError::NoDiffDrive)?;
        // A skid steer's wheels of a side turn alike: the first of each stands for its side.
        let joint = |names: &[String]| {
            let name = names.first().map(String::as_str).unwrap_or_default();
            let j = robot
                .joints
                .iter()
                .find(|j| j.name == name)
                .ok_or_else(|| EstimateError::NoWheelJoint(name.to_string()))?;
            Ok::<_, EstimateError>((
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
        let rotation = pose::quaternion(&state.xquat_wxyz[4 * self.root..4 * self.root + 4]);
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

impl Estimate {
    /// None when the robot has no floating base or the config turns odometry off; an error
    /// when wheel odometry is asked of a robot without a diff-drive base.
    fn new(
        model: &MjModel,
        robot: &RobotMap,
        config: &OdometryConfig,
        base: Option<&BaseConfig>,
        prefixed: bool,
    ) -> Result<Option<Self>, EstimateError> {
        let Some(joint) = robot.floating_joint.filter(|_| config.enabled) else {
            return Ok(None);
        };
        let root = model.jnt_bodyid()[joint] as usize;
        let qadr = model.jnt_qposadr()[joint] as usize;
        let q0 = &model.qpos0()[qadr..qadr + 7];
        let start = pose::quaternion(&q0[3..7]);
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
        let wheels = match config.source {
            OdometrySource::GroundTruth => None,
            OdometrySource::Wheels => Some(Wheels::new(model, robot, base, root, q0[2])?),
        };
        let named = config
            .base_frame
            .as_ref()
            .map(|frame| (frame, robot.bodies.iter().find(|b| &b.name == frame)));
        let (root_frame, base) = match named {
            None => (frame_name("world", robot, root, prefixed), None),
            Some((_, Some(link))) => (
                frame_name("world", robot, link.id, prefixed),
                Some(link.id).filter(|&id| id != root),
            ),
            // A frame no link has (another node's): the root's pose under that name.
            Some((frame, None)) => (frame.clone(), None),
        };
        if base.is_some() && config.tf {
            log::warn!(
                "{}: odometry's base frame '{root_frame}' is not the root link '{}': \
                 odom -> {root_frame} on /tf gives it a second parent beside the robot's own",
                robot.name,
                frame_name("world", robot, root, prefixed)
            );
        }
        Ok(Some(Self {
            root,
            dof: model.jnt_dofadr()[joint] as usize,
            origin,
            odom_frame: odom,
            root_frame,
            base,
            world_to_odom: config.world_to_odom,
            sends_tf: config.tf,
            wheels,
        }))
    }

    /// Brings wheel odometry up to `state` (once per cycle, before publishing).
    fn update(&mut self, state: &StateSnapshot) {
        if let Some(wheels) = self.wheels.as_mut() {
            wheels.update(state);
        }
    }

    /// The root body in the odom frame, from `state`.
    fn root_pose(&self, state: &StateSnapshot) -> Isometry3<f64> {
        if let Some(wheels) = &self.wheels {
            return wheels.pose();
        }
        self.origin.inverse() * pose::body_pose(&state.xpos, &state.xquat_wxyz, self.root)
    }

    /// Where the base frame's link sits on the root body (identity for the root).
    fn offset(&self, state: &StateSnapshot) -> Isometry3<f64> {
        match self.base {
            Some(link) => {
                let at = |body| pose::body_pose(&state.xpos, &state.xquat_wxyz, body);
                at(self.root).inverse() * at(link)
            }
            None => Isometry3::identity(),
        }
    }

    /// The base frame in the odom frame, from `state`.
    fn pose(&self, state: &StateSnapshot) -> Isometry3<f64> {
        self.root_pose(state) * self.offset(state)
    }

    /// The base frame's linear and angular velocity in its own frame.
    fn twist(&self, state: &StateSnapshot) -> (Vector3<f64>, Vector3<f64>) {
        let (linear, angular) = self.root_twist(state);
        if self.base.is_none() {
            return (linear, angular);
        }
        // A point fixed on the root body at r moves at v + w x r.
        let offset = self.offset(state);
        let moved = linear + angular.cross(&offset.translation.vector);
        let into_link = |v: Vector3<f64>| offset.rotation.inverse_transform_vector(&v);
        (into_link(moved), into_link(angular))
    }

    /// The root body's linear and angular velocity in its own frame.
    fn root_twist(&self, state: &StateSnapshot) -> (Vector3<f64>, Vector3<f64>) {
        if let Some(wheels) = &self.wheels {
            return wheels.twist(state);
        }
        let world_rotation = self.origin.rotation * self.root_pose(state).rotation;
        let v = &state.qvel[self.dof..self.dof + 6];
        // A free joint's linear velocity is in the world frame, its angular one in the body's.
        let linear = world_rotation.inverse_transform_vector(&Vector3::new(v[0], v[1], v[2]));
        (linear, Vector3::new(v[3], v[4], v[5]))
    }

    /// Sets `odom -> root` (from `odom_frame` to `root_frame`) in `frame` from `state`.
    pub fn update_transform(&self, state: &StateSnapshot, frame: &mut TransformStamped) {
        frame.transform = (&self.pose(state)).into();
    }

    /// `world -> odom`, for /tf_static, unless turned off.
    fn world_to_odom(&self) -> Option<TransformStamped> {
        self.world_to_odom
            .then(|| transform_stamped("world".into(), self.odom_frame.clone(), &self.origin))
    }

    /// The root body, whose `world -> root` transform odometry replaces.
    pub fn root(&self) -> usize {
        self.root
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, number};

    #[test]
    fn the_falling_base_in_its_odom_frame() {
        let mut f = Fixture::new("");
        let (m, state) = f.message(100, "odom");
        assert_eq!(m["header"]["frame_id"], "odom");
        assert_eq!(m["child_frame_id"], "base");
        // From the body's pose in the state (which an `mj_step` leaves one step behind qpos).
        let base = f.world.robots[0].root_body.unwrap();
        let z = number(&m["pose"]["pose"]["position"]["z"]);
        assert!((z - state.xpos[3 * base + 2]).abs() < 1e-12, "{z}");
        assert!(z < 0.85, "it falls: {z}");
        let vz = number(&m["twist"]["twist"]["linear"]["z"]);
        assert!(vz < -1.0, "about -9.81 m/s^2 * 0.2 s: {vz}");
    }

    #[test]
    fn a_base_frame_on_a_link_gives_that_links_pose_and_another_name_the_roots() {
        let mut f = Fixture::new("    ros:\n      odometry: {base_frame: lidar}\n");
        let (m, state) = f.message(100, "odom");
        assert_eq!(m["child_frame_id"], "lidar");
        let lidar = f.world.robots[0]
            .bodies
            .iter()
            .find(|b| b.name == "lidar")
            .unwrap()
            .id;
        // The odom frame starts under the base (x, y 0, level): z is the link's own height.
        let z = number(&m["pose"]["pose"]["position"]["z"]);
        assert!((z - state.xpos[3 * lidar + 2]).abs() < 1e-9, "{z}");
        let vz = number(&m["twist"]["twist"]["linear"]["z"]);
        assert!(vz < -1.0, "it falls with the base: {vz}");
        let mut f = Fixture::new("    ros:\n      odometry: {base_frame: base_footprint}\n");
        let (m, state) = f.message(100, "odom");
        assert_eq!(m["child_frame_id"], "base_footprint");
        let base = f.world.robots[0].root_body.unwrap();
        let z = number(&m["pose"]["pose"]["position"]["z"]);
        assert!((z - state.xpos[3 * base + 2]).abs() < 1e-12, "{z}");
    }

    #[test]
    fn wheel_odometry_needs_a_diff_drive_base() {
        let f = Fixture::new("    ros:\n      odometry: {source: wheels}\n");
        let error = f.plan().err().unwrap().to_string();
        assert_eq!(
            error,
            "robots[0].ros.odometry: source 'wheels' needs a diff_drive base (control.base)"
        );
    }
}
