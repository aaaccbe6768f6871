//! What each command message does, whichever transport brought it: the ROS node's
//! subscriptions and Foxglove clients send theirs through these, to the simulation handle,
//! which validates them, counts refusals and logs them at a limited rate.
use crate::config::{ControlMode, ControlSource};
use crate::control::{ActuatorInfo, ActuatorKind};
use crate::messages::geometry_msgs::msg::Twist;
use crate::messages::sensor_msgs::msg::JointState;
use crate::messages::trajectory_msgs::msg::JointTrajectory;
use crate::sim::{OperationError, SimHandle, WorldGeneration};

/// A twist for robot `robot`'s base (and the legacy twist row).
pub fn twist(handle: &SimHandle, robot: usize, twist: &Twist) -> Result<(), OperationError> {
    handle.command_twist(
        ControlSource::Ros,
        robot,
        twist.linear.x,
        twist.linear.y,
        twist.angular.z,
    )
}

/// How robot `robot`'s actuators read `joint_commands`, planned with its world: a position
/// servo takes the position, a velocity servo the velocity, a motor the effort (or the
/// position in PD mode).
pub struct JointCommandPlan {
    kinds: Vec<ActuatorKind>,
    pd: bool,
}

impl JointCommandPlan {
    pub fn of(world: &WorldGeneration, robot: usize) -> Self {
        Self {
            kinds: world.robots[robot]
                .actuators
                .iter()
                .map(|a| ActuatorInfo::of(&world.model, a.id).kind)
                .collect(),
            pd: world.controls.get(robot).map(|c| c.mode) == Some(ControlMode::Pd),
        }
    }

    /// The value of entry `k` for an actuator of `kind`: None when the message has no value
    /// of that kind.
    fn value(&self, message: &JointState, k: usize, kind: ActuatorKind) -> Option<f64> {
        let pick = |values: &Vec<f64>| values.get(k).copied();
        match kind {
            ActuatorKind::PositionServo => pick(&message.position),
            ActuatorKind::VelocityServo => pick(&message.velocity),
            ActuatorKind::Force if self.pd => pick(&message.position),
            ActuatorKind::Force => pick(&message.effort),
        }
    }
}

/// A `joint_commands` message for robot `robot`, by joint name.
pub fn joint_commands(
    handle: &SimHandle,
    robot: usize,
    plan: &JointCommandPlan,
    message: &JointState,
) -> Result<(), OperationError> {
    let lengths_ok = [&message.position, &message.velocity, &message.effort]
        .iter()
        .all(|v| v.is_empty() || v.len() == message.name.len());
    if !lengths_ok {
        return Err(handle.bad_command(
            "joint_commands",
            format!(
                "joint_commands: {} names, but position / velocity / effort of another length",
                message.name.len()
            ),
        ));
    }
    let mut names = Vec::with_capacity(message.name.len());
    let mut values = Vec::with_capacity(message.name.len());
    for (k, name) in message.name.iter().enumerate() {
        let Ok(index) = handle.actuator_index(robot, name) else {
            continue;
        };
        // The world may have changed since the plan was made: its users re-plan on their next
        // turn; until then, what does not fit waits.
        let Some(kind) = plan.kinds.get(index) else {
            continue;
        };
        if let Some(value) = plan.value(message, k, *kind) {
            names.push(name.as_str());
            values.push(value);
        }
    }
    handle.command_actuators(ControlSource::Ros, robot, &names, &values)
}

/// Hands trajectory `message` (from topic `topic`) to robot `robot`'s trajectory follower;
/// the handle checks the shapes, NaN and the times, and names the problem. `open_loop`:
/// it starts from the setpoints of the trajectory it replaces.
pub fn follow(
    handle: &SimHandle,
    robot: usize,
    message: &JointTrajectory,
    topic: &str,
    open_loop: bool,
) -> Result<(), OperationError> {
    let joints: Vec<&str> = message.joint_names.iter().map(String::as_str).collect();
    let trajectory = super::convert::trajectory(message)
        .map_err(|m| handle.bad_command("trajectory", format!("{topic}: {m}")))?;
    handle
        .follow_trajectory(
            robot,
            &joints,
            crate::control::Trajectory {
                open_loop,
                ..trajectory
            },
        )
        .map(drop)
}
