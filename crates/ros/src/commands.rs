//! Command topics of each robot, all sent through the handle (which validates them, counts
//! refusals and logs them at a limited rate):
//! - `cmd_vel` (geometry_msgs/Twist): to the base controller and the legacy twist row;
//! - `joint_commands` (sensor_msgs/JointState): by joint name; a position servo takes the
//!   position, a velocity servo the velocity, a motor the effort (or the position in PD mode);
//! - `forward_command_controller/commands` (std_msgs/Float64MultiArray): every actuator in
//!   the robot's order, as ros2_control's forward command controller;
//! - `joint_trajectory` (trajectory_msgs/JointTrajectory): followed at physics rate.
use crate::config::ControlSource;
use crate::sim::SimHandle;
use crate::topics::Qos;
use crate::topics::inputs;
use futures::StreamExt;
use futures::executor::LocalSpawner;

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
        let mut twists =
            node.subscribe::<crate::messages::geometry_msgs::msg::Twist>(&topic("cmd_vel"), qos)?;
        let commands = handle.clone();
        super::spawn(spawner, async move {
            while let Some(t) = twists.next().await {
                // Refusals (NaN) are counted and logged by the handle.
                let _ = inputs::twist(&commands, robot, &t);
            }
        })?;
    }
    let mut joint_commands = node.subscribe::<crate::messages::sensor_msgs::msg::JointState>(
        &topic("joint_commands"),
        qos,
    )?;
    let commands = handle.clone();
    let plan = inputs::JointCommandPlan::of(world, robot);
    super::spawn(spawner, async move {
        while let Some(message) = joint_commands.next().await {
            let _ = inputs::joint_commands(&commands, robot, &plan, &message);
        }
    })?;
    let mut forward = node.subscribe::<crate::messages::std_msgs::msg::Float64MultiArray>(
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
        .subscribe::<crate::messages::trajectory_msgs::msg::JointTrajectory>(
            &topic("joint_trajectory"),
            qos,
        )?;
    let commands = handle.clone();
    super::spawn(spawner, async move {
        while let Some(message) = trajectories.next().await {
            let _ = inputs::follow(&commands, robot, &message, "joint_trajectory", false);
        }
    })?;
    Ok(())
}
