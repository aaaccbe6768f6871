//! A URDF reader as forgiving as ROS's own parser (urdfdom) and the tools built on it: unknown
//! elements and attributes are ignored, and what robot_state_publisher, RViz or Gazebo accept
//! from real-world files (wrong vector lengths, leftover xacro substitutions, zero axes,
//! shapes of zero size, bytes after `</robot>`) is repaired and reported. What no tool can
//! make sense of (a joint without a type, a link named twice) stays an error naming the
//! element and its line.
use super::repairs::{RepairKind, Repairs};
use crate::model::xml::Element;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pose {
    pub xyz: [f64; 3],
    pub rpy: [f64; 3],
}

#[derive(Debug, Clone, PartialEq)]
pub enum Geometry {
    /// Full side lengths, as URDF gives them.
    Box {
        size: [f64; 3],
    },
    Cylinder {
        radius: f64,
        length: f64,
    },
    Capsule {
        radius: f64,
        length: f64,
    },
    Sphere {
        radius: f64,
    },
    Mesh {
        filename: String,
        scale: [f64; 3],
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub origin: Pose,
    pub geometry: Geometry,
    /// Visuals only: the material's name and its inline colour.
    pub material: Option<String>,
    pub rgba: Option<[f64; 4]>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inertial {
    pub origin: Pose,
    pub mass: f64,
    /// ixx, iyy, izz, ixy, ixz, iyz in the inertial frame.
    pub inertia: [f64; 6],
}

#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub name: String,
    pub line: usize,
    pub inertial: Option<Inertial>,
    pub visual: Vec<Shape>,
    pub collision: Vec<Shape>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointType {
    Revolute,
    Continuous,
    Prismatic,
    Fixed,
    Floating,
    Planar,
    Spherical,
}

impl JointType {
    pub fn is_moving(self) -> bool {
        self != Self::Fixed
    }

    /// One MuJoCo hinge or slide: what a mimic equality can couple.
    pub fn is_single_dof(self) -> bool {
        matches!(self, Self::Revolute | Self::Continuous | Self::Prismatic)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    /// None when the joint is unlimited (continuous, or repaired).
    pub range: Option<[f64; 2]>,
    /// 0 when not given.
    pub effort: f64,
    pub velocity: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mimic {
    pub joint: String,
    pub multiplier: f64,
    pub offset: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    pub name: String,
    pub line: usize,
    pub joint_type: JointType,
    pub origin: Pose,
    pub parent: String,
    pub child: String,
    /// A unit vector (URDF's default x when absent).
    pub axis: [f64; 3],
    pub limit: Limit,
    pub damping: f64,
    pub friction: f64,
    pub mimic: Option<Mimic>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Robot {
    pub name: String,
    pub links: Vec<Link>,
    pub joints: Vec<Joint>,
    /// Top-level `<material name>` colours.
    pub materials: HashMap<String, [f64; 4]>,
}

/// Finds a package's folder for a leftover `$(find pkg)`.
pub type FindPackage<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A URDF element the reader cannot repair: where it is, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct ReadError {
    /// The element, as `link 'base' (line 3)/inertial`.
    pub location: String,
    pub problem: Problem,
}

impl ReadError {
    fn at(location: impl Into<String>, problem: Problem) -> Self {
        Self {
            location: location.into(),
            problem,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("'{0}' is not a number")]
    NotANumber(String),
    #[error("'{word}' in '{text}' is not a number")]
    WordNotANumber { word: String, text: String },
    #[error("mass and inertia must be finite")]
    InertialNotFinite,
    #[error("a <{0}> needs a name")]
    NoName(&'static str),
    #[error("a <joint> needs a type")]
    NoJointType,
    #[error(
        "unknown joint type '{0}' (revolute, continuous, prismatic, fixed, floating, planar, spherical)"
    )]
    UnknownJointType(String),
    #[error("<{0} link=\"...\"> is missing")]
    NoLink(&'static str),
    #[error("values must be finite")]
    DynamicsNotFinite,
    #[error("names no joint")]
    MimicNoJoint,
}

struct Reader<'a> {
    repairs: &'a mut Repairs,
    find: FindPackage<'a>,
    /// `$(env)` and `$(optenv)` are evaluated (not in text that came from a request).
    environment: bool,
}

/// Where an element is, for messages: `link 'base' (line 12)`, or `link (line 12)`.
pub fn location(kind: &str, name: Option<&str>, line: usize) -> String {
    match name {
        Some(name) => format!("{kind} '{name}' (line {line})"),
        None => format!("{kind} (line {line})"),
    }
}

fn named(kind: &str, element: &Element) -> String {
    location(kind, element.attr("name"), element.line)
}

/// Whether `geometry` (of element `kind`) has a zero or invalid size.
fn degenerate(geometry: &Geometry, kind: &str) -> bool {
    match geometry {
        Geometry::Box { size } => size.iter().any(|v| !(*v > 0.0 && v.is_finite())),
        Geometry::Cylinder { radius, length } | Geometry::Capsule { radius, length } => {
            !(*radius > 0.0 && radius.is_finite() && *length >= 0.0 && length.is_finite())
                || (kind == "cylinder" && *length <= 0.0)
        }
        Geometry::Sphere { radius } => !(*radius > 0.0 && radius.is_finite()),
        Geometry::Mesh { scale, .. } => scale.iter().any(|v| *v == 0.0 || !v.is_finite()),
    }
}

/// A joint's `type` as read (`ball` as urdfdom reads it too).
fn joint_type(text: &str, location: &str) -> Result<JointType, ReadError> {
    Ok(match text.trim() {
        "revolute" => JointType::Revolute,
        "continuous" => JointType::Continuous,
        "prismatic" => JointType::Prismatic,
        "fixed" => JointType::Fixed,
        "floating" => JointType::Floating,
        "planar" => JointType::Planar,
        "spherical" | "ball" => JointType::Spherical,
        other => {
            return Err(ReadError::at(
                location,
                Problem::UnknownJointType(other.to_string()),
            ));
        }
    })
}

impl Link {
    /// `link 'base' (line 12)`, as every message names it.
    pub fn location(&self) -> String {
        location("link", Some(&self.name), self.line)
    }
}

impl Joint {
    /// `joint 'elbow' (line 24)`, as every message names it.
    pub fn location(&self) -> String {
        location("joint", Some(&self.name), self.line)
    }
}

impl Reader<'_> {
    /// An attribute with leftover xacro substitutions evaluated.
    fn attr(&mut self, element: &Element, key: &str, location: &str) -> Option<String> {
        let raw = element.attr(key)?;
        if !raw.contains("$(") {
            return Some(raw.to_string());
        }
        let value = self.substitute(raw);
        if value != raw {
            self.repairs.add(
                RepairKind::Substitution,
                format!("{location}/{}@{key}", element.name),
                format!("leftover xacro text '{raw}' evaluated to '{value}'"),
            );
        }
        Some(value)
    }

    /// Evaluates `$(env VAR)`, `$(optenv VAR default...)` (not for a request's text: the
    /// server's environment is no peer's business) and `$(find pkg)`; anything else is left
    /// as written (and fails later where a number or a path is needed).
    fn substitute(&self, raw: &str) -> String {
        let mut out = String::new();
        let mut rest = raw;
        while let Some(start) = rest.find("$(") {
            let Some(len) = rest[start..].find(')') else {
                break;
            };
            out.push_str(&rest[..start]);
            let inner = &rest[start + 2..start + len];
            let mut words = inner.split_whitespace();
            let verb = words.next().unwrap_or("");
            let args: Vec<&str> = words.collect();
            let value = match (verb, args.as_slice()) {
                ("env", [var]) if self.environment => std::env::var(var).ok(),
                ("optenv", [var, default @ ..]) if self.environment => {
                    Some(std::env::var(var).unwrap_or_else(|_| default.join(" ")))
                }
                ("find", [package]) => (self.find)(package),
                _ => None,
            };
            match value {
                Some(value) => out.push_str(&value),
                None => out.push_str(&rest[start..start + len + 1]),
            }
            rest = &rest[start + len + 1..];
        }
        out.push_str(rest);
        out
    }

    fn number(
        &mut self,
        element: &Element,
        key: &str,
        location: &str,
    ) -> Result<Option<f64>, ReadError> {
        let Some(text) = self.attr(element, key, location) else {
            return Ok(None);
        };
        parse_number(&text).map(Some).ok_or_else(|| ReadError {
            location: format!("{location}/{}@{key}", element.name),
            problem: Problem::NotANumber(text),
        })
    }

    /// A vector of `N` numbers; 2 or 4 given for 3 (and so on) are padded with `pad` or cut,
    /// with a repair.
    fn vector<const N: usize>(
        &mut self,
        element: &Element,
        key: &str,
        location: &str,
        pad: f64,
    ) -> Result<Option<[f64; N]>, ReadError> {
        match self.attr(element, key, location) {
            Some(text) if text.trim().is_empty() => {
                self.repairs.add(
                    RepairKind::Vector,
                    format!("{location}/{}@{key}", element.name),
                    "empty vector read as the default",
                );
                Ok(None)
            }
            Some(text) => self
                .parse_vector(&text, key, &element.name, location, pad)
                .map(Some),
            None => Ok(None),
        }
    }

    /// `N` numbers from `text` (the value of `element@key`); 2 or 4 given for 3 (and so on)
    /// are padded with `pad` or cut, with a repair.
    fn parse_vector<const N: usize>(
        &mut self,
        text: &str,
        key: &str,
        element: &str,
        location: &str,
        pad: f64,
    ) -> Result<[f64; N], ReadError> {
        let mut values = Vec::new();
        for word in text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
        {
            values.push(parse_number(word).ok_or_else(|| ReadError {
                location: format!("{location}/{element}@{key}"),
                problem: Problem::WordNotANumber {
                    word: word.to_string(),
                    text: text.to_string(),
                },
            })?);
        }
        if values.len() != N {
            let given = values.len();
            values.resize(N, pad);
            self.repairs.add(
                RepairKind::Vector,
                format!("{location}/{element}@{key}"),
                format!("{given} numbers '{text}' where {N} are expected, read as {values:?}"),
            );
        }
        let mut out = [0.0; N];
        out.copy_from_slice(&values);
        Ok(out)
    }

    fn pose(&mut self, parent: &Element, location: &str) -> Result<Pose, ReadError> {
        let Some(origin) = parent.child("origin") else {
            return Ok(Pose::default());
        };
        Ok(Pose {
            xyz: self
                .vector(origin, "xyz", location, 0.0)?
                .unwrap_or_default(),
            rpy: self
                .vector(origin, "rpy", location, 0.0)?
                .unwrap_or_default(),
        })
    }

    fn geometry(&mut self, shape: &Element, location: &str) -> Result<Option<Geometry>, ReadError> {
        let Some(geometry) = shape.child("geometry") else {
            self.repairs.add(
                RepairKind::Shape,
                location,
                "no <geometry>: treated as absent",
            );
            return Ok(None);
        };
        let Some(kind) = geometry.children.iter().find(|c| {
            matches!(
                c.name.as_str(),
                "box" | "cylinder" | "capsule" | "sphere" | "mesh"
            )
        }) else {
            self.repairs.add(
                RepairKind::Shape,
                location,
                "<geometry> holds no box, cylinder, capsule, sphere or mesh: treated as absent",
            );
            return Ok(None);
        };
        let at = format!("{location}/geometry");
        let geometry = match kind.name.as_str() {
            "box" => Geometry::Box {
                size: self.vector(kind, "size", &at, 0.0)?.unwrap_or_default(),
            },
            "cylinder" => Geometry::Cylinder {
                radius: self.number(kind, "radius", &at)?.unwrap_or(0.0),
                length: self.number(kind, "length", &at)?.unwrap_or(0.0),
            },
            "capsule" => Geometry::Capsule {
                radius: self.number(kind, "radius", &at)?.unwrap_or(0.0),
                length: self.number(kind, "length", &at)?.unwrap_or(0.0),
            },
            "sphere" => Geometry::Sphere {
                radius: self.number(kind, "radius", &at)?.unwrap_or(0.0),
            },
            _ => match self.mesh(kind, location, &at)? {
                Some(mesh) => mesh,
                None => return Ok(None),
            },
        };
        if degenerate(&geometry, &kind.name) {
            self.repairs.add(
                RepairKind::Shape,
                location,
                format!("{geometry:?} has zero or invalid size: treated as absent"),
            );
            return Ok(None);
        }
        Ok(Some(geometry))
    }

    /// A `<mesh>`'s file and scale (one number scales all three axes, as some exporters
    /// write it); none without a filename (a repair).
    fn mesh(
        &mut self,
        mesh: &Element,
        location: &str,
        at: &str,
    ) -> Result<Option<Geometry>, ReadError> {
        let filename = self
            .attr(mesh, "filename", at)
            .or_else(|| self.attr(mesh, "url", at))
            .unwrap_or_default();
        if filename.trim().is_empty() {
            self.repairs.add(
                RepairKind::Shape,
                location,
                "<mesh> without a filename: treated as absent",
            );
            return Ok(None);
        }
        let scale = match self.attr(mesh, "scale", at) {
            Some(text) => match parse_number(&text) {
                Some(v) => [v; 3],
                None => self.parse_vector(&text, "scale", &mesh.name, at, 1.0)?,
            },
            None => [1.0; 3],
        };
        Ok(Some(Geometry::Mesh {
            filename: filename.trim().to_string(),
            scale,
        }))
    }

    fn rgba(&mut self, element: &Element, location: &str) -> Result<Option<[f64; 4]>, ReadError> {
        Ok(self.vector::<4>(element, "rgba", location, 1.0)?.map(|c| {
            c.map(|v| {
                if v.is_finite() {
                    v.clamp(0.0, 1.0)
                } else {
                    1.0
                }
            })
        }))
    }

    fn shape(
        &mut self,
        element: &Element,
        location: &str,
        visual: bool,
    ) -> Result<Option<Shape>, ReadError> {
        let Some(geometry) = self.geometry(element, location)? else {
            return Ok(None);
        };
        let origin = self.pose(element, location)?;
        let (mut material, mut rgba) = (None, None);
        if visual && let Some(m) = element.child("material") {
            material = m.attr("name").map(str::to_string);
            if let Some(color) = m.child("color") {
                rgba = self.rgba(color, &format!("{location}/material"))?;
            }
        }
        Ok(Some(Shape {
            origin,
            geometry,
            material,
            rgba,
        }))
    }

    fn inertial(&mut self, link: &Element, location: &str) -> Result<Option<Inertial>, ReadError> {
        let Some(inertial) = link.child("inertial") else {
            return Ok(None);
        };
        let at = format!("{location}/inertial");
        let origin = self.pose(inertial, &at)?;
        let mass = match inertial.child("mass") {
            Some(m) => self.number(m, "value", &at)?.unwrap_or(0.0),
            None => 0.0,
        };
        let mut inertia = [0.0; 6];
        if let Some(i) = inertial.child("inertia") {
            for (slot, key) in inertia
                .iter_mut()
                .zip(["ixx", "iyy", "izz", "ixy", "ixz", "iyz"])
            {
                *slot = self.number(i, key, &at)?.unwrap_or(0.0);
            }
        }
        if !(mass.is_finite() && inertia.iter().all(|v| v.is_finite())) {
            return Err(ReadError::at(at, Problem::InertialNotFinite));
        }
        Ok(Some(Inertial {
            origin,
            mass,
            inertia,
        }))
    }

    fn link(&mut self, element: &Element) -> Result<Link, ReadError> {
        let location = named("link", element);
        let name = element
            .attr("name")
            .ok_or_else(|| ReadError::at(&location, Problem::NoName("link")))?
            .to_string();
        let mut visual = Vec::new();
        for (i, v) in element.children_named("visual").enumerate() {
            if let Some(shape) = self.shape(v, &format!("{location}/visual[{i}]"), true)? {
                visual.push(shape);
            }
        }
        let mut collision = Vec::new();
        for (i, c) in element.children_named("collision").enumerate() {
            if let Some(shape) = self.shape(c, &format!("{location}/collision[{i}]"), false)? {
                collision.push(shape);
            }
        }
        Ok(Link {
            inertial: self.inertial(element, &location)?,
            name,
            line: element.line,
            visual,
            collision,
        })
    }

    fn joint(&mut self, element: &Element) -> Result<Joint, ReadError> {
        let location = named("joint", element);
        let name = element
            .attr("name")
            .ok_or_else(|| ReadError::at(&location, Problem::NoName("joint")))?
            .to_string();
        let type_text = self
            .attr(element, "type", &location)
            .ok_or_else(|| ReadError::at(&location, Problem::NoJointType))?;
        let joint_type = joint_type(&type_text, &location)?;
        let link_of = |role: &'static str| {
            element
                .child(role)
                .and_then(|e| e.attr("link"))
                .map(str::to_string)
                .ok_or_else(|| ReadError::at(&location, Problem::NoLink(role)))
        };
        let (parent, child) = (link_of("parent")?, link_of("child")?);
        let origin = self.pose(element, &location)?;
        let axis = self.joint_axis(element, joint_type, &type_text, &location)?;
        let limit = self.joint_limit(element, joint_type, &type_text, &location)?;
        let (damping, friction) = self.joint_dynamics(element, &location)?;
        let mimic = self.mimic(element, &location)?;
        Ok(Joint {
            name,
            line: element.line,
            joint_type,
            origin,
            parent,
            child,
            axis,
            limit,
            damping,
            friction,
            mimic,
        })
    }

    /// A joint's unit axis. Fixed and floating joints have none (urdfdom does not read it),
    /// so a zero axis there is no error; elsewhere it is repaired to URDF's default.
    fn joint_axis(
        &mut self,
        element: &Element,
        joint_type: JointType,
        type_text: &str,
        location: &str,
    ) -> Result<[f64; 3], ReadError> {
        let mut axis = [1.0, 0.0, 0.0];
        if matches!(
            joint_type,
            JointType::Revolute | JointType::Continuous | JointType::Prismatic | JointType::Planar
        ) && let Some(a) = element.child("axis")
            && let Some(given) = self.vector::<3>(a, "xyz", location, 0.0)?
        {
            let norm = given.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm.is_finite() && norm > 1e-12 {
                axis = given.map(|v| v / norm);
            } else {
                self.repairs.add(
                    RepairKind::Axis,
                    format!("{location}/axis"),
                    format!(
                        "axis {given:?} of a {type_text} joint replaced by URDF's default [1, 0, 0]"
                    ),
                );
            }
        }
        Ok(axis)
    }

    /// A joint's `<limit>`: effort and velocity (not finite: none), and for a revolute or
    /// prismatic joint its range (without a limit: unlimited, said as a repair).
    fn joint_limit(
        &mut self,
        element: &Element,
        joint_type: JointType,
        type_text: &str,
        location: &str,
    ) -> Result<Limit, ReadError> {
        let mut limit = Limit {
            range: None,
            effort: 0.0,
            velocity: 0.0,
        };
        let ranged = matches!(joint_type, JointType::Revolute | JointType::Prismatic);
        let Some(l) = element.child("limit") else {
            if ranged {
                self.repairs.add(
                    RepairKind::Limit,
                    location,
                    format!("a {type_text} joint without <limit>: left unlimited"),
                );
            }
            return Ok(limit);
        };
        let finite_or_zero = |v: f64| if v.is_finite() { v } else { 0.0 };
        limit.effort = finite_or_zero(self.number(l, "effort", location)?.unwrap_or(0.0).abs());
        limit.velocity = finite_or_zero(self.number(l, "velocity", location)?.unwrap_or(0.0).abs());
        let lower = self.number(l, "lower", location)?.unwrap_or(0.0);
        let upper = self.number(l, "upper", location)?.unwrap_or(0.0);
        if ranged {
            limit.range = self.range(lower, upper, joint_type, &format!("{location}/limit"));
        }
        Ok(limit)
    }

    /// A joint's `<dynamics>` damping and friction (0 without one); they must be finite.
    fn joint_dynamics(
        &mut self,
        element: &Element,
        location: &str,
    ) -> Result<(f64, f64), ReadError> {
        let Some(d) = element.child("dynamics") else {
            return Ok((0.0, 0.0));
        };
        let damping = self.number(d, "damping", location)?.unwrap_or(0.0);
        let friction = self.number(d, "friction", location)?.unwrap_or(0.0);
        if !(damping.is_finite() && friction.is_finite()) {
            return Err(ReadError::at(
                format!("{location}/dynamics"),
                Problem::DynamicsNotFinite,
            ));
        }
        Ok((damping, friction))
    }

    /// A joint's `<mimic>`: the joint it follows, its multiplier and offset.
    fn mimic(&mut self, element: &Element, location: &str) -> Result<Option<Mimic>, ReadError> {
        let Some(m) = element.child("mimic") else {
            return Ok(None);
        };
        Ok(Some(Mimic {
            joint: m
                .attr("joint")
                .ok_or_else(|| ReadError::at(format!("{location}/mimic"), Problem::MimicNoJoint))?
                .to_string(),
            multiplier: self.number(m, "multiplier", location)?.unwrap_or(1.0),
            offset: self.number(m, "offset", location)?.unwrap_or(0.0),
        }))
    }

    /// The range of a revolute or prismatic joint; what cannot be a range is repaired.
    fn range(&mut self, lower: f64, upper: f64, kind: JointType, at: &str) -> Option<[f64; 2]> {
        if lower.is_finite() && upper.is_finite() && lower < upper {
            return Some([lower, upper]);
        }
        // A revolute joint with both bounds 0 is what many exporters write for "no limit".
        if lower == 0.0 && upper == 0.0 && kind == JointType::Revolute {
            return None;
        }
        if lower.is_finite() && upper.is_finite() && lower > upper {
            self.repairs.add(
                RepairKind::Limit,
                at,
                format!("lower {lower} above upper {upper}: swapped"),
            );
            return Some([upper, lower]);
        }
        self.repairs.add(
            RepairKind::Limit,
            at,
            format!("lower {lower}, upper {upper} is no range: the joint is left unlimited"),
        );
        None
    }
}

/// Numbers as urdfdom reads them (C locale), plus the `inf` spellings some exporters write.
fn parse_number(text: &str) -> Option<f64> {
    let t = text.trim();
    t.parse::<f64>()
        .ok()
        .or_else(|| match t.to_ascii_lowercase().as_str() {
            "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        })
}

/// Reads the robot from its parsed XML tree. Errors name the element and its line.
pub fn read_robot(
    doc: &Element,
    repairs: &mut Repairs,
    find: FindPackage,
    environment: bool,
) -> Result<Robot, ReadError> {
    let mut reader = Reader {
        repairs,
        find,
        environment,
    };
    let mut materials = HashMap::new();
    for m in doc.children_named("material") {
        if let (Some(name), Some(color)) = (m.attr("name"), m.child("color")) {
            let at = named("material", m);
            if let Some(rgba) = reader.rgba(color, &at)? {
                materials.insert(name.to_string(), rgba);
            }
        }
    }
    let mut links = Vec::new();
    for element in doc.children_named("link") {
        links.push(reader.link(element)?);
    }
    let mut joints = Vec::new();
    for element in doc.children_named("joint") {
        joints.push(reader.joint(element)?);
    }
    Ok(Robot {
        name: doc.attr("name").unwrap_or("robot").to_string(),
        links,
        joints,
        materials,
    })
}

/// The text with its comments blanked out (same length), so that searches skip them.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("-->")
            .map(|e| start + e + 3)
            .unwrap_or(rest.len());
        out.extend(std::iter::repeat_n(' ', rest[start..end].len()));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Cuts what follows the closing `</robot>` (a trailing NUL, a second document, a stray end
/// tag), which ROS's parser never reads. Comments and whitespace there are no repair. Returns
/// the text to parse.
pub fn cut_trailing_text<'t>(text: &'t str, repairs: &mut Repairs, origin: &str) -> &'t str {
    // The first `</robot>` outside a comment closes the root: URDF nests no robot.
    let plain = without_comments(text);
    let Some(end) = plain.find("</robot>").map(|i| i + "</robot>".len()) else {
        return text;
    };
    let rest = &plain[end..];
    if rest.trim().is_empty() {
        return text;
    }
    let shown: String = text[end..]
        .chars()
        .take(20)
        .flat_map(char::escape_debug)
        .collect();
    repairs.add(
        RepairKind::Text,
        format!("{origin} after </robot>"),
        format!("{} trailing bytes ignored (\"{shown}\")", text.len() - end),
    );
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::xml;

    fn read(text: &str) -> (Result<Robot, ReadError>, Repairs) {
        let mut repairs = Repairs::default();
        let doc = xml::parse(text).unwrap();
        let find = |p: &str| (p == "pkg").then(|| "/opt/pkg".to_string());
        (read_robot(&doc, &mut repairs, &find, true), repairs)
    }

    #[test]
    fn forgiving_vectors_axes_and_substitutions() {
        let (robot, repairs) = read(
            r#"<robot name="r" xmlns:xacro="x">
  <link name="a" extra="1"><visual><origin xyz="1 2"/><geometry>
    <mesh filename="$(find pkg)/m.stl" scale="$(optenv MUJOCO_BRIDGE_UNSET_IN_TESTS 2)"/></geometry></visual>
    <visual><geometry><sphere radius="0"/></geometry></visual></link>
  <link name="b"/>
  <joint name="f" type="fixed"><parent link="a"/><child link="b"/><axis xyz="0 0 0"/></joint>
</robot>"#,
        );
        let robot = robot.unwrap();
        let link = &robot.links[0];
        assert_eq!(link.visual.len(), 1, "the zero sphere is absent");
        assert_eq!(link.visual[0].origin.xyz, [1.0, 2.0, 0.0]);
        assert_eq!(
            link.visual[0].geometry,
            Geometry::Mesh {
                filename: "/opt/pkg/m.stl".into(),
                scale: [2.0; 3]
            }
        );
        let kinds: Vec<RepairKind> = repairs.list.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                RepairKind::Substitution,
                RepairKind::Substitution,
                RepairKind::Vector,
                RepairKind::Shape
            ],
            "{:?}",
            repairs.list
        );
        // The fixed joint's zero axis is no repair: fixed joints have no axis.
        assert_eq!(robot.joints[0].joint_type, JointType::Fixed);
    }

    #[test]
    fn zero_axis_of_a_moving_joint_takes_the_default() {
        let (robot, repairs) = read(
            r#"<robot name="r"><link name="a"/><link name="b"/>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 0"/>
  <limit lower="1" upper="-1" effort="5" velocity="1"/></joint></robot>"#,
        );
        let joint = &robot.unwrap().joints[0];
        assert_eq!(joint.axis, [1.0, 0.0, 0.0]);
        assert_eq!(joint.limit.range, Some([-1.0, 1.0]));
        assert_eq!(repairs.list.len(), 2);
        assert!(repairs.list[0].location.contains("joint 'j' (line 2)/axis"));
    }

    #[test]
    fn what_cannot_be_read_names_the_element() {
        let (robot, _) =
            read(r#"<robot><link name="a"/><joint name="j"><parent link="a"/></joint></robot>"#);
        assert_eq!(
            robot.unwrap_err().to_string(),
            "joint 'j' (line 1): a <joint> needs a type"
        );
        let (robot, _) = read(
            r#"<robot><link name="a"><inertial><mass value="heavy"/></inertial></link></robot>"#,
        );
        assert_eq!(
            robot.unwrap_err(),
            ReadError {
                location: "link 'a' (line 1)/inertial/mass@value".into(),
                problem: Problem::NotANumber("heavy".into())
            }
        );
    }

    #[test]
    fn trailing_bytes_are_cut() {
        let mut repairs = Repairs::default();
        let text = "<robot name=\"r\"><link name=\"a\"/></robot>\n\0";
        assert_eq!(
            cut_trailing_text(text, &mut repairs, "x.urdf"),
            "<robot name=\"r\"><link name=\"a\"/></robot>"
        );
        assert_eq!(repairs.list[0].kind, RepairKind::Text);
        // A comment naming </robot> and a trailing comment are no trailing text.
        let mut repairs = Repairs::default();
        let text = "<robot><!-- </robot> --><link name=\"a\"/></robot>\n<!-- made by x -->\n";
        assert_eq!(cut_trailing_text(text, &mut repairs, "x.urdf"), text);
        assert!(repairs.is_empty());
    }
}
