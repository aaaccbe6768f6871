//! Whether a URDF robot stands on its own. Gazebo gives every URDF model that is not fixed to
//! a `world` link a free-floating base; a fixed-base arm then topples, so the rule here is
//! narrower: a robot not attached to `world` gets a free joint when it has wheels, legs or
//! propellers. `floating_base: true|false` in the config overrides it.
use super::reader::{Geometry, JointType, Robot};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use std::collections::HashMap;

/// How far below the root a limb's tip must hang (in the zero pose) to count as a leg, in m.
const LEG_DROP: f64 = 0.1;

/// The decision and the reason, for the log and `--summary`.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseRule {
    pub floating: bool,
    pub reason: String,
}

/// Words in link and joint names that mark a leg.
const LEG_WORDS: [&str; 9] = [
    "leg", "foot", "feet", "knee", "hip", "ankle", "thigh", "calf", "shin",
];

fn is_wheel(robot: &Robot, joint_index: usize) -> bool {
    let joint = &robot.joints[joint_index];
    let named = |n: &str| {
        let n = n.to_ascii_lowercase();
        n.contains("wheel") || n.contains("caster")
    };
    if joint.joint_type.is_moving() && (named(&joint.name) || named(&joint.child)) {
        return true;
    }
    if joint.joint_type != JointType::Continuous {
        return false;
    }
    // A round collision shape spinning freely is a wheel whatever its name.
    robot
        .links
        .iter()
        .find(|l| l.name == joint.child)
        .is_some_and(|l| {
            !l.collision.is_empty()
                && l.collision.iter().all(|c| {
                    matches!(
                        c.geometry,
                        Geometry::Cylinder { .. } | Geometry::Sphere { .. }
                    )
                })
        })
}

/// A propeller or rotor (drones often fix them with `fixed` joints: any joint counts), or a
/// wing.
fn is_propeller(robot: &Robot, joint_index: usize) -> bool {
    let joint = &robot.joints[joint_index];
    let n = format!("{} {}", joint.name, joint.child).to_ascii_lowercase();
    let prop = n.match_indices("prop").any(|(at, _)| {
        let after = n[at + 4..].chars().next();
        after.is_none_or(|c| c.is_ascii_digit() || c == '_' || c == 'e' || c == ' ')
    });
    // "wing" as a word of its own ("main_wing", not "shoulder_swing").
    let wing = n.match_indices("wing").any(|(at, _)| {
        n[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphabetic())
    });
    prop || n.contains("rotor") || wing
}

/// Tips of limbs reached through at least two moving joints that hang below the root in the
/// zero pose, or that are not above it and have a leg's name on the way (a quadruped's zero
/// pose may stretch its legs out): legs. A humanoid's hanging arms count too, which changes
/// nothing.
fn legs(robot: &Robot, root: &str) -> Vec<String> {
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, joint) in robot.joints.iter().enumerate() {
        children.entry(joint.parent.as_str()).or_default().push(j);
    }
    let mut tips = Vec::new();
    let leg_named = |n: &str| {
        let n = n.to_ascii_lowercase();
        LEG_WORDS.iter().any(|w| n.contains(w))
    };
    // (link, pose relative to the root, moving joints on the way, a leg's name on the way)
    let mut stack = vec![(root, Isometry3::identity(), 0usize, false)];
    while let Some((link, pose, moving, named)) = stack.pop() {
        let below = children.get(link).map(Vec::as_slice).unwrap_or_default();
        let z = pose.translation.z;
        if below.is_empty() && moving >= 2 && (z <= -LEG_DROP || (named && z <= 0.0)) {
            tips.push(link.to_string());
        }
        for &j in below {
            let joint = &robot.joints[j];
            let o = joint.origin;
            let step = Isometry3::from_parts(
                Translation3::from(Vector3::from(o.xyz)),
                UnitQuaternion::from_euler_angles(o.rpy[0], o.rpy[1], o.rpy[2]),
            );
            let moves = usize::from(joint.joint_type.is_moving());
            let named = named || leg_named(&joint.name) || leg_named(&joint.child);
            stack.push((joint.child.as_str(), pose * step, moving + moves, named));
        }
    }
    tips.sort();
    tips
}

/// Names of the joints for which `test` holds.
fn joints_where(robot: &Robot, test: fn(&Robot, usize) -> bool) -> Vec<&str> {
    (0..robot.joints.len())
        .filter(|j| test(robot, *j))
        .map(|j| robot.joints[j].name.as_str())
        .collect()
}

/// The automatic rule, for a robot whose root link is `root` (not `world`).
pub fn detect(robot: &Robot, root: &str) -> BaseRule {
    let wheels = joints_where(robot, is_wheel);
    if !wheels.is_empty() {
        return BaseRule {
            floating: true,
            reason: format!("wheels ({})", wheels.join(", ")),
        };
    }
    let propellers = joints_where(robot, is_propeller);
    if !propellers.is_empty() {
        return BaseRule {
            floating: true,
            reason: format!("propellers or wings ({})", propellers.join(", ")),
        };
    }
    let legs = legs(robot, root);
    if legs.len() >= 2 {
        return BaseRule {
            floating: true,
            reason: format!(
                "legs (limbs ending {LEG_DROP} m below the root, or a leg's name: {})",
                legs.join(", ")
            ),
        };
    }
    BaseRule {
        floating: false,
        reason: "no wheels, legs or propellers: the root stays fixed where it is placed".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::urdf::reader::read_robot;
    use crate::model::urdf::repairs::Repairs;
    use crate::model::xml;

    fn robot(text: &str) -> Robot {
        read_robot(
            &xml::parse(text).unwrap(),
            &mut Repairs::default(),
            &|_| None,
            true,
        )
        .unwrap()
    }

    fn leg(name: &str, y: f64) -> String {
        format!(
            r#"<link name="{name}_thigh"/><link name="{name}_foot"/>
<joint name="{name}_hip" type="revolute"><parent link="base"/><child link="{name}_thigh"/>
  <origin xyz="0 {y} 0"/><limit lower="-1" upper="1"/></joint>
<joint name="{name}_knee" type="revolute"><parent link="{name}_thigh"/><child link="{name}_foot"/>
  <origin xyz="0 0 -0.3"/><limit lower="-1" upper="1"/></joint>"#
        )
    }

    #[test]
    fn legs_and_wheels_float_arms_stay() {
        let biped = robot(&format!(
            "<robot name='b'><link name='base'/>{}{}</robot>",
            leg("l", 0.1),
            leg("r", -0.1)
        ));
        let rule = detect(&biped, "base");
        assert!(rule.floating, "{rule:?}");
        assert!(rule.reason.contains("l_foot, r_foot"), "{rule:?}");

        let cart = robot(
            "<robot name='c'><link name='base'/><link name='wheel_l'/>
             <joint name='j' type='continuous'><parent link='base'/><child link='wheel_l'/></joint></robot>",
        );
        assert!(detect(&cart, "base").floating);

        // An arm reaching up has two moving joints but no tip below its base.
        let arm = robot(&format!(
            "<robot name='a'><link name='base'/>{}</robot>",
            leg("x", 0.0).replace("-0.3", "0.3")
        ));
        assert!(!detect(&arm, "base").floating);
    }
}
