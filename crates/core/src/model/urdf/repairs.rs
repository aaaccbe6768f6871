//! What the URDF loader changed in a real-world file to make it load, as ROS tools would
//! tolerate it. Each repair names the element and what was done; the robot's load prints one
//! summary line ("5 repairs: 3 inertias, 2 axes"), and `strict` turns the first into an error.
use std::collections::BTreeMap;

/// The kinds of repair, in the order the summary line lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RepairKind {
    /// An inertial MuJoCo or physics cannot take (not positive definite, triangle
    /// inequality, zero or tiny mass on a moving link).
    Inertia,
    /// A zero axis of a moving joint, replaced by the URDF default.
    Axis,
    /// A joint limit with lower >= upper or a non-finite bound.
    Limit,
    /// A vector of the wrong length (2 or 4 numbers where 3 are expected).
    Vector,
    /// A visual or collision shape of zero size or without geometry, treated as absent.
    Shape,
    /// A `<mimic>` naming a joint that does not exist, dropped.
    Mimic,
    /// A `<transmission>` or `<ros2_control>` joint that does not exist: no actuator.
    Actuator,
    /// `package:///`, or a package found beside the URDF instead of on a package path.
    Package,
    /// Leftover xacro text (`$(optenv ...)`, `$(env ...)`, `$(find ...)`) evaluated.
    Substitution,
    /// Bytes after the closing `</robot>` (a trailing NUL, text) ignored.
    Text,
    /// A flat collision mesh (no convex hull for MuJoCo), replaced by a thin box.
    Mesh,
    /// A visual mesh that cannot be found, left out (RViz shows the robot without it).
    Visual,
}

impl RepairKind {
    fn plural(self) -> &'static str {
        match self {
            Self::Inertia => "inertias",
            Self::Axis => "axes",
            Self::Limit => "limits",
            Self::Vector => "vectors",
            Self::Shape => "shapes",
            Self::Mimic => "mimics",
            Self::Actuator => "actuators",
            Self::Package => "package paths",
            Self::Substitution => "substitutions",
            Self::Text => "trailing texts",
            Self::Mesh => "meshes",
            Self::Visual => "visuals",
        }
    }

    fn singular(self) -> &'static str {
        match self {
            Self::Inertia => "inertia",
            Self::Axis => "axis",
            Self::Limit => "limit",
            Self::Vector => "vector",
            Self::Shape => "shape",
            Self::Mimic => "mimic",
            Self::Actuator => "actuator",
            Self::Package => "package path",
            Self::Substitution => "substitution",
            Self::Text => "trailing text",
            Self::Mesh => "mesh",
            Self::Visual => "visual",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Repair {
    pub kind: RepairKind,
    /// The element, e.g. `link 'base' (line 12)/inertial`.
    pub location: String,
    /// What was found and what was done, with old and new values.
    pub action: String,
}

impl std::fmt::Display for Repair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: repaired: {}", self.location, self.action)
    }
}

/// The repairs of one robot, in the order they were made.
#[derive(Debug, Clone, Default)]
pub struct Repairs {
    pub list: Vec<Repair>,
}

impl Repairs {
    pub fn add(
        &mut self,
        kind: RepairKind,
        location: impl Into<String>,
        action: impl Into<String>,
    ) {
        self.list.push(Repair {
            kind,
            location: location.into(),
            action: action.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// "12 repairs: 7 inertias, 3 axes, 2 vectors", or None when nothing was repaired.
    pub fn summary(&self) -> Option<String> {
        if self.list.is_empty() {
            return None;
        }
        let mut counts: BTreeMap<RepairKind, usize> = BTreeMap::new();
        for repair in &self.list {
            *counts.entry(repair.kind).or_default() += 1;
        }
        let parts: Vec<String> = counts
            .iter()
            .map(|(kind, n)| {
                let word = if *n == 1 {
                    kind.singular()
                } else {
                    kind.plural()
                };
                format!("{n} {word}")
            })
            .collect();
        let n = self.list.len();
        Some(format!(
            "{n} repair{}: {}",
            if n == 1 { "" } else { "s" },
            parts.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_by_kind_in_a_fixed_order() {
        let mut repairs = Repairs::default();
        assert_eq!(repairs.summary(), None);
        repairs.add(RepairKind::Axis, "joint 'a'", "x");
        repairs.add(RepairKind::Inertia, "link 'b'", "y");
        repairs.add(RepairKind::Inertia, "link 'c'", "z");
        assert_eq!(repairs.summary().unwrap(), "3 repairs: 2 inertias, 1 axis");
        assert_eq!(repairs.list[0].to_string(), "joint 'a': repaired: x");
    }
}
