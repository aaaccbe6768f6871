//! The model summary printed by `--summary`: what a user checks first after loading a robot.
use super::{RobotMap, World};
use mujoco_rs::prelude::*;
use std::fmt::Write;
use std::sync::Arc;

fn joint_kind(kind: MjtJoint) -> &'static str {
    match kind {
        MjtJoint::mjJNT_FREE => "free",
        MjtJoint::mjJNT_BALL => "ball",
        MjtJoint::mjJNT_SLIDE => "slide",
        _ => "hinge",
    }
}

pub fn summary(world: &World) -> String {
    let m = &world.model;
    let f = m.ffi();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "world: timestep {} s, nq {}, nv {}, nu {}, nbody {}, njnt {}, ngeom {}, nsensor {}, nkey {}",
        m.opt().timestep,
        f.nq,
        f.nv,
        f.nu,
        f.nbody,
        f.njnt,
        f.ngeom,
        f.nsensor,
        f.nkey
    );
    for (index, robot) in world.robots.iter().enumerate() {
        robot_source(&mut out, robot);
        robot_actuation(&mut out, m, robot);
        robot_parts(&mut out, robot, world.declared_controllers.get(index));
    }
    out
}

/// Where a robot comes from: its file, base and repairs.
fn robot_source(out: &mut String, robot: &RobotMap) {
    let _ = writeln!(
        out,
        "robot {} (prefix '{}') from {}",
        robot.name, robot.prefix, robot.origin
    );
    let _ = writeln!(
        out,
        "  source: {}, floating base: {}",
        if robot.urdf.is_some() { "URDF" } else { "MJCF" },
        robot
            .floating_joint
            .map(|j| robot
                .joints
                .iter()
                .find(|n| n.id == j)
                .map(|n| n.name.clone())
                .unwrap_or_default())
            .unwrap_or_else(|| "no".into())
    );
    if let Some(rule) = &robot.base_rule {
        let _ = writeln!(out, "  base: {rule}");
    }
    if let Some(repairs) = &robot.repairs {
        let _ = writeln!(out, "  {repairs} (each logged as a warning at load)");
    }
    if !robot.gazebo.is_empty() {
        let _ = writeln!(out, "  <gazebo> blocks ({}):", robot.gazebo.len());
        for line in &robot.gazebo {
            let _ = writeln!(out, "    {line}");
        }
    }
}

/// A robot's joints (with their ranges), actuators, and the rules that made them.
fn robot_actuation(out: &mut String, m: &MjModel, robot: &RobotMap) {
    let joints: Vec<String> = robot
        .joints
        .iter()
        .map(|j| {
            let id = j.id;
            let kind = m.jnt_type()[id];
            if m.jnt_limited()[id] {
                let r = m.jnt_range()[id];
                format!(
                    "{} ({} [{:.3}, {:.3}])",
                    j.name,
                    joint_kind(kind),
                    r[0],
                    r[1]
                )
            } else {
                format!("{} ({})", j.name, joint_kind(kind))
            }
        })
        .collect();
    let _ = writeln!(out, "  joints ({}): {}", joints.len(), joints.join(", "));
    let actuators: Vec<String> = robot
        .actuators
        .iter()
        .map(|a| {
            let r = m.actuator_ctrlrange()[a.id];
            if m.actuator_ctrllimited()[a.id] {
                format!("{} [{:.3}, {:.3}]", a.name, r[0], r[1])
            } else {
                a.name.clone()
            }
        })
        .collect();
    let _ = writeln!(
        out,
        "  actuators ({}): {}",
        actuators.len(),
        actuators.join(", ")
    );
    if let Some(rule) = &robot.actuator_rule {
        let _ = writeln!(out, "  actuators by rule: {rule}");
    }
    if let Some(gains) = &robot.servo_gains {
        let _ = writeln!(
            out,
            "  servo gains by rule ({} Hz): {gains}",
            super::gains::BANDWIDTH_HZ
        );
    }
}

/// A robot's sensors, bodies, cameras, keyframes and declared ros2_control controllers.
fn robot_parts(
    out: &mut String,
    robot: &RobotMap,
    declared: Option<&Option<Arc<crate::config::controllers::ControllersFile>>>,
) {
    let names = |v: &[super::NamedId]| {
        v.iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (label, list) in [
        ("sensors", &robot.sensors),
        ("bodies", &robot.bodies),
        ("cameras", &robot.cameras),
        ("keyframes", &robot.keyframes),
    ] {
        let _ = writeln!(out, "  {label} ({}): {}", list.len(), names(list));
    }
    if let Some(Some(file)) = declared {
        let declared: Vec<String> = file
            .controllers
            .iter()
            .map(|(name, c)| format!("{name} ({})", c.type_name))
            .collect();
        let rate = file.update_rate.map(|hz| format!(", update_rate {hz} Hz"));
        let _ = writeln!(
            out,
            "  ros2_control controllers ({}) from {}{}: {}",
            declared.len(),
            file.origin,
            rate.unwrap_or_default(),
            declared.join(", ")
        );
    }
}
