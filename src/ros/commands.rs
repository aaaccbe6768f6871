//! Command topics of each robot, all sent through the handle (which validates them, counts
//! refusals and logs them at a limited rate):
//! - `cmd_vel` (geometry_msgs/Twist): to the base controller and the legacy twist row;
//! - `joint_commands` (sensor_msgs/JointState): by joint name; a position servo takes the
//!   position, a velocity servo the velocity, a motor the effort (or the position in PD mode);
//! - `forward_command_controller/commands` (std_msgs/Float64MultiArray): every actuator in
//!   the robot's order, as ros2_control's forward command controller;
//! - `joint_trajectory` (trajectory_msgs/JointTrajectory): followed at physics rate.
use super::Qos;
use crate::config::{ControlMode, ControlSource};
use crate::control::{ActuatorInfo, ActuatorKind};
use crate::sim::SimHandle;
use futures::StreamExt;
use futures::executor::LocalSpawner;

/// The value of `joint_commands` entry `k` for an actuator of `kind`: None when the message
/// has no value of that kind.
fn value_for(
    message: &crate::ros::interfaces::sensor_msgs::msg::JointState,
    k: usize,
    kind: ActuatorKind,
    pd: bool,
) -> Option<f64> {
    let pick = |values: &Vec<f64>| values.get(k).copied();
    match kind {
        ActuatorKind::PositionServo => pick(&message.position),
        ActuatorKind::VelocityServo => pick(&message.velocity),
        ActuatorKind::Force if pd => pick(&message.position),
        ActuatorKind::Force => pick(&message.effort),
    }
}

pub fn start(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    world: &crate::sim::WorldGeneration,
    robot: usize,
    topic: &dyn Fn(&str) -> String,
) -> Result<(), super::Error> {
    let qos = Qos::DEFAULT;
    // A base that a diff_drive_controller gives takes that controller's ~/cmd_vel instead.
    let base = world.config.robots[robot].control.base.as_ref();
    if base.is_none_or(|b| b.controller.is_none()) {
        let mut twists = node.subscribe::<crate::ros::interfaces::geometry_msgs::msg::Twist>(
            &topic("cmd_vel"),
            qos,
        )?;
        let commands = handle.clone();
        super::spawn(spawner, async move {
            while let Some(t) = twists.next().await {
                // Refusals (NaN) are counted and logged by the handle.
                let _ = commands.command_twist(
                    ControlSource::Ros,
                    robot,
                    t.linear.x,
                    t.linear.y,
                    t.angular.z,
                );
            }
        })?;
    }
    let mut joint_commands = node
        .subscribe::<crate::ros::interfaces::sensor_msgs::msg::JointState>(
            &topic("joint_commands"),
            qos,
        )?;
    let commands = handle.clone();
    // How each actuator reads a command; the mode is the configured one.
    let kinds: Vec<ActuatorKind> = world.robots[robot]
        .actuators
        .iter()
        .map(|a| ActuatorInfo::of(&world.model, a.id).kind)
        .collect();
    let pd = world.controls.get(robot).map(|c| c.mode) == Some(ControlMode::Pd);
    super::spawn(spawner, async move {
        while let Some(message) = joint_commands.next().await {
            let lengths_ok = [&message.position, &message.velocity, &message.effort]
                .iter()
                .all(|v| v.is_empty() || v.len() == message.name.len());
            if !lengths_ok {
                let _ = commands.bad_command(
                    "joint_commands",
                    format!("joint_commands: {} names, but position / velocity / effort of another length", message.name.len()),
                );
                continue;
            }
            let mut names = Vec::with_capacity(message.name.len());
            let mut values = Vec::with_capacity(message.name.len());
            for (k, name) in message.name.iter().enumerate() {
                let Ok(index) = commands.actuator_index(robot, name) else {
                    continue;
                };
                // The world may have changed since `kinds` was planned: its robot tasks are
                // re-planned on the node's next turn; until then, what does not fit waits.
                let Some(kind) = kinds.get(index) else {
                    continue;
                };
                if let Some(value) = value_for(&message, k, *kind, pd) {
                    names.push(name.as_str());
                    values.push(value);
                }
            }
            let _ = commands.command_actuators(ControlSource::Ros, robot, &names, &values);
        }
    })?;
    let mut forward = node.subscribe::<crate::ros::interfaces::std_msgs::msg::Float64MultiArray>(
        &topic("forward_command_controller/commands"),
        qos,
    )?;
    let commands = handle.clone();
    super::spawn(spawner, async move {
        while let Some(message) = forward.next().await {
            let _ = commands.command_all(ControlSource::Ros, robot, &message.data);
        }
    })?;
    let mut trajectories = node
        .subscribe::<crate::ros::interfaces::trajectory_msgs::msg::JointTrajectory>(
            &topic("joint_trajectory"),
            qos,
        )?;
    let commands = handle.clone();
    super::spawn(spawner, async move {
        while let Some(message) = trajectories.next().await {
            follow(&commands, robot, &message, "joint_trajectory", false);
        }
    })?;
    Ok(())
}

/// Hands trajectory `message` (from topic `topic`) to robot `robot`'s trajectory follower;
/// the handle checks the shapes, NaN and the times, and names the problem. `open_loop`:
/// it starts from the setpoints of the trajectory it replaces.
pub(super) fn follow(
    handle: &SimHandle,
    robot: usize,
    message: &crate::ros::interfaces::trajectory_msgs::msg::JointTrajectory,
    topic: &str,
    open_loop: bool,
) {
    let joints: Vec<&str> = message.joint_names.iter().map(String::as_str).collect();
    let trajectory = match super::convert::trajectory(message) {
        Ok(trajectory) => trajectory,
        Err(m) => {
            let _ = handle.bad_command("trajectory", format!("{topic}: {m}"));
            return;
        }
    };
    let _ = handle.follow_trajectory(
        robot,
        &joints,
        crate::control::Trajectory {
            open_loop,
            ..trajectory
        },
    );
}
