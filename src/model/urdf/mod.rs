//! URDF -> MJCF conversion. MuJoCo's own URDF import drops visuals, ignores `package://`,
//! welds the root to the world and creates no actuators; this converter keeps what ROS users
//! rely on and writes MJCF text that MuJoCo then compiles.
mod interfaces;
mod packages;

pub use interfaces::{ActuatorRequest, CommandKind};
pub use packages::PackageResolver;

use crate::config::UrdfGains;
use crate::error::{InputError, InputResult};
use crate::model::xml::{self, Element, escape};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Name of the free joint given to the root link of a floating-base robot.
pub const FLOATING_BASE_JOINT: &str = "floating_base";

/// Mesh formats MuJoCo 3.17 reads. Others (e.g. COLLADA) are skipped with a warning.
const MESH_FORMATS: [&str; 3] = ["stl", "obj", "msh"];

pub struct UrdfOptions<'a> {
    /// Names the source in messages: a file path or `<robot_description>`.
    pub origin: &'a str,
    /// Folder for relative mesh paths (the URDF's folder).
    pub base_dir: &'a Path,
    pub resolver: &'a PackageResolver,
    pub floating_base: bool,
    pub generate_actuators: bool,
    pub gains: &'a UrdfGains,
    /// Joints whose actuators the robot config defines instead.
    pub config_actuated: &'a dyn Fn(&str) -> bool,
}

#[derive(Debug, Clone)]
pub struct ConvertedUrdf {
    pub mjcf: String,
    pub robot_name: String,
    pub root_link: String,
    pub warnings: Vec<String>,
}

fn fmt3(v: &[f64; 3]) -> String {
    format!("{} {} {}", v[0], v[1], v[2])
}

fn quat_from_rpy(rpy: &[f64; 3]) -> Option<String> {
    if rpy.iter().all(|a| *a == 0.0) {
        return None;
    }
    let q = UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]);
    // MuJoCo order: w x y z.
    Some(format!("{} {} {} {}", q.w, q.i, q.j, q.k))
}

fn pose_attrs(pose: &urdf_rs::Pose) -> String {
    let mut out = String::new();
    if pose.xyz.iter().any(|v| *v != 0.0) {
        let _ = write!(out, " pos=\"{}\"", fmt3(&pose.xyz));
    }
    if let Some(q) = quat_from_rpy(&pose.rpy) {
        let _ = write!(out, " quat=\"{q}\"");
    }
    out
}

struct Converter<'a> {
    opts: &'a UrdfOptions<'a>,
    robot: urdf_rs::Robot,
    doc: Element,
    warnings: Vec<String>,
    /// (resolved path, scale) -> mesh asset name.
    meshes: BTreeMap<(PathBuf, String), String>,
    mesh_names: HashSet<String>,
    geom_names: HashSet<String>,
    materials: HashMap<String, [f64; 4]>,
    children_of: HashMap<String, Vec<usize>>,
    link_index: HashMap<String, usize>,
    /// `<body name="LINK">` content from the `<mujoco>` extension, by link.
    extension_bodies: HashMap<String, String>,
    discard_visual: bool,
    mesh_dir: PathBuf,
}

impl<'a> Converter<'a> {
    fn error(&self, location: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError::new(self.opts.origin, message).at(location)
    }

    fn mesh_asset(
        &mut self,
        location: &str,
        filename: &str,
        scale: Option<&urdf_rs::Vec3>,
    ) -> InputResult<Option<String>> {
        let path = self
            .opts
            .resolver
            .resolve_uri(filename, &self.mesh_dir)
            .map_err(|m| self.error(location, m))?;
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if !MESH_FORMATS.contains(&extension.as_str()) {
            self.warnings.push(format!(
                "{location}: mesh '{filename}' is skipped: MuJoCo reads {MESH_FORMATS:?} files, not '.{extension}'"
            ));
            return Ok(None);
        }
        if !path.is_file() {
            return Err(self.error(
                location,
                format!(
                    "mesh '{filename}' resolves to '{}', which does not exist",
                    path.display()
                ),
            ));
        }
        let scale = scale.map(|s| fmt3(&s.0)).unwrap_or_else(|| "1 1 1".into());
        let key = (path.clone(), scale);
        if let Some(name) = self.meshes.get(&key) {
            return Ok(Some(name.clone()));
        }
        let stem: String = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "mesh".into());
        let mut name = stem.clone();
        let mut n = 1;
        while !self.mesh_names.insert(name.clone()) {
            name = format!("{stem}_{n}");
            n += 1;
        }
        self.meshes.insert(key, name.clone());
        Ok(Some(name))
    }

    /// `{link}_visual`, or `{link}_visual_{i}` when the link has several; unique in the model.
    fn geom_name(&mut self, link: &str, kind: &str, index: usize, count: usize) -> String {
        let base = if count == 1 {
            format!("{link}_{kind}")
        } else {
            format!("{link}_{kind}_{index}")
        };
        self.unique_geom_name(base)
    }

    fn unique_geom_name(&mut self, base: String) -> String {
        let mut name = base.clone();
        let mut n = 1;
        while !self.geom_names.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    fn geometry_attrs(
        &mut self,
        location: &str,
        geometry: &urdf_rs::Geometry,
    ) -> InputResult<Option<String>> {
        let positive = |v: f64, what: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(self.error(
                    location,
                    format!("{what} must be a positive number, got {v}"),
                ))
            }
        };
        Ok(Some(match geometry {
            urdf_rs::Geometry::Box { size } => {
                for v in size.iter() {
                    positive(*v, "box size")?;
                }
                format!(
                    "type=\"box\" size=\"{} {} {}\"",
                    size[0] / 2.0,
                    size[1] / 2.0,
                    size[2] / 2.0
                )
            }
            urdf_rs::Geometry::Cylinder { radius, length } => format!(
                "type=\"cylinder\" size=\"{} {}\"",
                positive(*radius, "cylinder radius")?,
                positive(*length, "cylinder length")? / 2.0
            ),
            urdf_rs::Geometry::Capsule { radius, length } => format!(
                "type=\"capsule\" size=\"{} {}\"",
                positive(*radius, "capsule radius")?,
                positive(*length, "capsule length")? / 2.0
            ),
            urdf_rs::Geometry::Sphere { radius } => {
                format!(
                    "type=\"sphere\" size=\"{}\"",
                    positive(*radius, "sphere radius")?
                )
            }
            urdf_rs::Geometry::Mesh { filename, scale } => {
                match self.mesh_asset(location, filename, scale.as_ref())? {
                    Some(mesh) => format!("type=\"mesh\" mesh=\"{}\"", escape(&mesh)),
                    None => return Ok(None),
                }
            }
        }))
    }

    fn visual_rgba(&self, visual: &urdf_rs::Visual) -> [f64; 4] {
        let Some(material) = &visual.material else {
            return [0.7, 0.7, 0.7, 1.0];
        };
        if let Some(color) = &material.color {
            return color.rgba.0;
        }
        self.materials
            .get(&material.name)
            .copied()
            .unwrap_or([0.7, 0.7, 0.7, 1.0])
    }

    fn write_inertial(&self, out: &mut String, link: &urdf_rs::Link) -> InputResult<()> {
        let inertial = &link.inertial;
        let i = &inertial.inertia;
        let values = [
            inertial.mass.value,
            i.ixx,
            i.iyy,
            i.izz,
            i.ixy,
            i.ixz,
            i.iyz,
        ];
        if values.iter().any(|v| !v.is_finite()) {
            return Err(self.error(
                format!("link '{}'/inertial", link.name),
                "values must be finite",
            ));
        }
        if inertial.mass.value < 0.0 {
            return Err(self.error(
                format!("link '{}'/inertial/mass", link.name),
                "mass must not be negative",
            ));
        }
        if values.iter().all(|v| *v == 0.0) {
            return Ok(()); // no <inertial>: massless, bounded by the compiler
        }
        // URDF gives the inertia in the inertial frame (origin rpy); MJCF's fullinertia is in
        // the body frame when no orientation is given, so rotate it here.
        let r = UnitQuaternion::from_euler_angles(
            inertial.origin.rpy[0],
            inertial.origin.rpy[1],
            inertial.origin.rpy[2],
        )
        .to_rotation_matrix()
        .into_inner();
        let local = Matrix3::new(
            i.ixx, i.ixy, i.ixz, i.ixy, i.iyy, i.iyz, i.ixz, i.iyz, i.izz,
        );
        let body = r * local * r.transpose();
        let _ = writeln!(
            out,
            "<inertial pos=\"{}\" mass=\"{}\" fullinertia=\"{} {} {} {} {} {}\"/>",
            fmt3(&inertial.origin.xyz),
            inertial.mass.value.max(1e-9),
            body[(0, 0)],
            body[(1, 1)],
            body[(2, 2)],
            body[(0, 1)],
            body[(0, 2)],
            body[(1, 2)]
        );
        Ok(())
    }

    fn write_joint(&self, out: &mut String, joint: &urdf_rs::Joint) -> InputResult<()> {
        let name = escape(&joint.name);
        let location = format!("joint '{}'", joint.name);
        let axis = Vector3::from(joint.axis.xyz.0);
        if !axis.iter().all(|v| v.is_finite()) || axis.norm() < 1e-12 {
            return Err(self.error(location, "axis must be a non-zero finite vector"));
        }
        let mut dynamics = String::new();
        if let Some(d) = &joint.dynamics {
            if !(d.damping.is_finite() && d.friction.is_finite()) {
                return Err(self.error(format!("{location}/dynamics"), "values must be finite"));
            }
            if d.damping > 0.0 {
                let _ = write!(dynamics, " damping=\"{}\"", d.damping);
            }
            if d.friction > 0.0 {
                let _ = write!(dynamics, " frictionloss=\"{}\"", d.friction);
            }
        }
        let limit = &joint.limit;
        if limit.effort.is_finite() && limit.effort > 0.0 {
            let _ = write!(
                dynamics,
                " actuatorfrcrange=\"{} {}\"",
                -limit.effort, limit.effort
            );
        }
        let range = |kind: &str| -> InputResult<String> {
            if !(limit.lower.is_finite() && limit.upper.is_finite()) {
                return Err(self.error(
                    format!("{location}/limit"),
                    "lower and upper must be finite",
                ));
            }
            if limit.lower < limit.upper {
                Ok(format!(" range=\"{} {}\"", limit.lower, limit.upper))
            } else if limit.lower == limit.upper && limit.lower == 0.0 && kind == "hinge" {
                Ok(" limited=\"false\"".into())
            } else {
                Err(self.error(
                    format!("{location}/limit"),
                    format!(
                        "lower ({}) must be below upper ({})",
                        limit.lower, limit.upper
                    ),
                ))
            }
        };
        let axis_attr = fmt3(&joint.axis.xyz.0);
        use urdf_rs::JointType::*;
        match joint.joint_type {
            Revolute => {
                let r = range("hinge")?;
                let _ = writeln!(
                    out,
                    "<joint name=\"{name}\" type=\"hinge\" axis=\"{axis_attr}\"{r}{dynamics}/>"
                );
            }
            Continuous => {
                let _ = writeln!(
                    out,
                    "<joint name=\"{name}\" type=\"hinge\" axis=\"{axis_attr}\" limited=\"false\"{dynamics}/>"
                );
            }
            Prismatic => {
                let r = range("slide")?;
                let _ = writeln!(
                    out,
                    "<joint name=\"{name}\" type=\"slide\" axis=\"{axis_attr}\"{r}{dynamics}/>"
                );
            }
            Floating => {
                let _ = writeln!(out, "<freejoint name=\"{name}\"/>");
            }
            Spherical => {
                let _ = writeln!(out, "<joint name=\"{name}\" type=\"ball\"{dynamics}/>");
            }
            Planar => {
                // Two slides spanning the plane normal to the axis, and a hinge about it.
                let normal = axis.normalize();
                let helper = if normal.x.abs() < 0.9 {
                    Vector3::x()
                } else {
                    Vector3::y()
                };
                let u = normal.cross(&helper).normalize();
                let v = normal.cross(&u);
                for (suffix, a) in [("x", u), ("y", v)] {
                    let _ = writeln!(
                        out,
                        "<joint name=\"{name}_{suffix}\" type=\"slide\" axis=\"{} {} {}\" limited=\"false\"{dynamics}/>",
                        a.x, a.y, a.z
                    );
                }
                let _ = writeln!(
                    out,
                    "<joint name=\"{name}_yaw\" type=\"hinge\" axis=\"{axis_attr}\" limited=\"false\"{dynamics}/>"
                );
            }
            Fixed => {}
        }
        Ok(())
    }

    fn write_link(
        &mut self,
        out: &mut String,
        link_idx: usize,
        joint_idx: Option<usize>,
        depth: usize,
    ) -> InputResult<()> {
        if depth > 1000 {
            return Err(self.error("robot", "the kinematic tree is too deep (a cycle?)"));
        }
        let link = self.robot.links[link_idx].clone();
        let location = format!("link '{}'", link.name);
        let joint = joint_idx.map(|j| self.robot.joints[j].clone());
        let pose = joint
            .as_ref()
            .map(|j| pose_attrs(&j.origin))
            .unwrap_or_default();
        let _ = writeln!(out, "<body name=\"{}\"{pose}>", escape(&link.name));
        if joint.is_none() && self.opts.floating_base {
            let _ = writeln!(out, "<freejoint name=\"{FLOATING_BASE_JOINT}\"/>");
        }
        if let Some(joint) = &joint {
            self.write_joint(out, joint)?;
        }
        self.write_inertial(out, &link)?;
        if !self.discard_visual {
            let count = link.visual.len();
            for (i, visual) in link.visual.iter().enumerate() {
                let at = format!("{location}/visual[{i}]");
                let Some(geometry) = self.geometry_attrs(&at, &visual.geometry)? else {
                    continue;
                };
                let name = self.geom_name(&link.name, "visual", i, count);
                let rgba = self.visual_rgba(visual);
                let _ = writeln!(
                    out,
                    "<geom name=\"{}\" {geometry}{} group=\"2\" contype=\"0\" conaffinity=\"0\" density=\"0\" rgba=\"{} {} {} {}\"/>",
                    escape(&name),
                    pose_attrs(&visual.origin),
                    rgba[0],
                    rgba[1],
                    rgba[2],
                    rgba[3]
                );
            }
        }
        let count = link.collision.len();
        for (i, collision) in link.collision.iter().enumerate() {
            let at = format!("{location}/collision[{i}]");
            let Some(geometry) = self.geometry_attrs(&at, &collision.geometry)? else {
                continue;
            };
            let name = self.geom_name(&link.name, "collision", i, count);
            let _ = writeln!(
                out,
                "<geom name=\"{}\" {geometry}{} group=\"3\" rgba=\"0.5 0.5 0.5 1\"/>",
                escape(&name),
                pose_attrs(&collision.origin)
            );
        }
        // A site per link, so sensors and tools can refer to the link frame by name.
        let _ = writeln!(
            out,
            "<site name=\"{}\" size=\"0.005\" group=\"5\"/>",
            escape(&link.name)
        );
        if let Some(extra) = self.extension_bodies.remove(&link.name) {
            out.push_str(&extra);
            out.push('\n');
        }
        for child_joint in self
            .children_of
            .get(&link.name)
            .cloned()
            .unwrap_or_default()
        {
            let child = self.robot.joints[child_joint].child.link.clone();
            let child_idx = self.link_index[&child];
            self.write_link(out, child_idx, Some(child_joint), depth + 1)?;
        }
        out.push_str("</body>\n");
        Ok(())
    }

    fn actuator_xml(&self, request: &ActuatorRequest) -> InputResult<String> {
        let joint = self
            .robot
            .joints
            .iter()
            .find(|j| j.name == request.joint)
            .ok_or_else(|| {
                self.error(
                    &request.source,
                    format!(
                        "names joint '{}', which the URDF does not have",
                        request.joint
                    ),
                )
            })?;
        let name = escape(&request.name);
        let target = escape(&request.joint);
        let limit = &joint.limit;
        let effort = (limit.effort.is_finite() && limit.effort > 0.0).then_some(limit.effort);
        let force = effort
            .map(|e| format!(" forcerange=\"{} {}\"", -e, e))
            .unwrap_or_default();
        let gear = if request.gear != 1.0 {
            format!(" gear=\"{}\"", request.gear)
        } else {
            String::new()
        };
        let range = |r: Option<[f64; 2]>| {
            r.map(|[lo, hi]| format!(" ctrlrange=\"{lo} {hi}\""))
                .unwrap_or_default()
        };
        let gains = self.opts.gains;
        Ok(match request.kind {
            CommandKind::Position => {
                let joint_range = (limit.lower < limit.upper
                    && matches!(
                        joint.joint_type,
                        urdf_rs::JointType::Revolute | urdf_rs::JointType::Prismatic
                    ))
                .then_some([limit.lower, limit.upper]);
                format!(
                    "<position name=\"{name}\" joint=\"{target}\" kp=\"{}\" kv=\"{}\"{}{force}{gear}/>",
                    gains.position_kp,
                    gains.position_kv,
                    range(request.ctrlrange.or(joint_range))
                )
            }
            CommandKind::Velocity => {
                let vel = (limit.velocity.is_finite() && limit.velocity > 0.0)
                    .then_some([-limit.velocity, limit.velocity]);
                format!(
                    "<velocity name=\"{name}\" joint=\"{target}\" kv=\"{}\"{}{force}{gear}/>",
                    gains.velocity_kv,
                    range(request.ctrlrange.or(vel))
                )
            }
            CommandKind::Effort => format!(
                "<motor name=\"{name}\" joint=\"{target}\"{}{gear}/>",
                range(request.ctrlrange.or(effort.map(|e| [-e, e])))
            ),
        })
    }
}

/// Converts URDF text to MJCF text.
pub fn urdf_to_mjcf(text: &str, opts: &UrdfOptions) -> InputResult<ConvertedUrdf> {
    let doc = xml::parse(text).map_err(|m| InputError::new(opts.origin, m))?;
    if doc.name != "robot" {
        return Err(InputError::new(
            opts.origin,
            format!(
                "line {}: the root element is <{}>, a URDF needs <robot>",
                doc.line, doc.name
            ),
        ));
    }
    let robot = urdf_rs::read_from_string(text)
        .map_err(|e| InputError::new(opts.origin, format!("invalid URDF: {e}")))?;
    if robot.links.is_empty() {
        return Err(InputError::new(opts.origin, "the URDF has no <link>"));
    }

    let mut link_index = HashMap::new();
    for (i, link) in robot.links.iter().enumerate() {
        if link_index.insert(link.name.clone(), i).is_some() {
            return Err(InputError::new(opts.origin, "duplicate link name")
                .at(format!("link '{}'", link.name)));
        }
    }
    let mut children_of: HashMap<String, Vec<usize>> = HashMap::new();
    let mut parent_of: HashMap<String, String> = HashMap::new();
    let mut joint_names = HashSet::new();
    for (j, joint) in robot.joints.iter().enumerate() {
        let at = format!("joint '{}'", joint.name);
        if !joint_names.insert(joint.name.clone()) {
            return Err(InputError::new(opts.origin, "duplicate joint name").at(at));
        }
        for (role, link) in [("parent", &joint.parent.link), ("child", &joint.child.link)] {
            if !link_index.contains_key(link) {
                return Err(InputError::new(
                    opts.origin,
                    format!("{role} link '{link}' is not defined"),
                )
                .at(at));
            }
        }
        if parent_of
            .insert(joint.child.link.clone(), joint.parent.link.clone())
            .is_some()
        {
            return Err(InputError::new(
                opts.origin,
                format!("link '{}' is the child of two joints", joint.child.link),
            )
            .at(at));
        }
        children_of
            .entry(joint.parent.link.clone())
            .or_default()
            .push(j);
    }
    let roots: Vec<&str> = robot
        .links
        .iter()
        .filter(|l| !parent_of.contains_key(&l.name))
        .map(|l| l.name.as_str())
        .collect();
    if roots.len() != 1 {
        return Err(InputError::new(
            opts.origin,
            format!("the links must form one tree, but these links have no parent: {roots:?}"),
        ));
    }
    let root_link = roots[0].to_string();

    let materials = robot
        .materials
        .iter()
        .filter_map(|m| m.color.as_ref().map(|c| (m.name.clone(), c.rgba.0)))
        .collect();

    // The <mujoco> extension: compiler attributes merge into ours, <worldbody><body name=LINK>
    // content goes into that link's body, every other element is copied as written.
    let mut compiler: Vec<(String, String)> = [
        ("angle", "radian"),
        ("autolimits", "true"),
        ("balanceinertia", "true"),
        ("inertiafromgeom", "false"),
        ("boundmass", "1e-6"),
        ("boundinertia", "1e-10"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut extension_bodies = HashMap::new();
    let mut extension_sections = String::new();
    let mut extension_world = String::new();
    let mut discard_visual = false;
    let has_option = doc
        .children_named("mujoco")
        .any(|ext| ext.children_named("option").next().is_some());
    let mut mesh_dir = opts.base_dir.to_path_buf();
    for ext in doc.children_named("mujoco") {
        for section in &ext.children {
            match section.name.as_str() {
                "compiler" => {
                    for (key, value) in &section.attributes {
                        match key.as_str() {
                            "discardvisual" => discard_visual = value == "true",
                            "meshdir" | "assetdir" => mesh_dir = opts.base_dir.join(value),
                            "strippath" => {}
                            _ => {
                                compiler.retain(|(k, _)| k != key);
                                compiler.push((key.clone(), value.clone()));
                            }
                        }
                    }
                }
                "worldbody" => {
                    for item in &section.children {
                        let link = item
                            .attr("name")
                            .filter(|n| item.name == "body" && link_index.contains_key(*n));
                        match link {
                            Some(link) => {
                                extension_bodies
                                    .insert(link.to_string(), text[item.inner.clone()].to_string());
                            }
                            None => {
                                extension_world.push_str(&text[item.span.clone()]);
                                extension_world.push('\n');
                            }
                        }
                    }
                }
                _ => {
                    extension_sections.push_str(&text[section.span.clone()]);
                    extension_sections.push('\n');
                }
            }
        }
    }

    let mut converter = Converter {
        opts,
        robot,
        doc,
        warnings: Vec::new(),
        meshes: BTreeMap::new(),
        mesh_names: HashSet::new(),
        geom_names: HashSet::new(),
        materials,
        children_of,
        link_index,
        extension_bodies,
        discard_visual,
        mesh_dir,
    };

    let mut body = String::new();
    if root_link == "world" {
        // A `world` link is MuJoCo's world body: its children hang directly in <worldbody>.
        for joint_idx in converter
            .children_of
            .get("world")
            .cloned()
            .unwrap_or_default()
        {
            let child = converter.robot.joints[joint_idx].child.link.clone();
            let child_idx = converter.link_index[&child];
            converter.write_link(&mut body, child_idx, Some(joint_idx), 1)?;
        }
    } else {
        let root_idx = converter.link_index[&root_link];
        converter.write_link(&mut body, root_idx, None, 0)?;
    }

    // Mimic joints become equality constraints: joint = offset + multiplier * leader.
    let mut equality = String::new();
    let mut mimic_joints = HashSet::new();
    for joint in &converter.robot.joints {
        if let Some(mimic) = &joint.mimic {
            if !joint_names.contains(&mimic.joint) {
                return Err(converter.error(
                    format!("joint '{}'/mimic", joint.name),
                    format!("mimics joint '{}', which is not defined", mimic.joint),
                ));
            }
            mimic_joints.insert(joint.name.clone());
            let _ = writeln!(
                equality,
                "<joint name=\"mimic_{}\" joint1=\"{}\" joint2=\"{}\" polycoef=\"{} {} 0 0 0\"/>",
                escape(&joint.name),
                escape(&joint.name),
                escape(&mimic.joint),
                mimic.offset.unwrap_or(0.0),
                mimic.multiplier.unwrap_or(1.0)
            );
        }
    }

    let mut actuators = String::new();
    if opts.generate_actuators {
        let mut requests = interfaces::from_ros2_control(&converter.doc, &mut converter.warnings);
        let covered: HashSet<String> = requests.iter().map(|r| r.joint.clone()).collect();
        requests.extend(
            interfaces::from_transmissions(&converter.doc, &mut converter.warnings)
                .into_iter()
                .filter(|r| !covered.contains(&r.joint)),
        );
        let mut seen = HashSet::new();
        for request in requests {
            if (opts.config_actuated)(&request.joint) || mimic_joints.contains(&request.joint) {
                continue;
            }
            if !seen.insert(request.name.clone()) {
                converter.warnings.push(format!(
                    "{}: a second actuator named '{}' is ignored",
                    request.source, request.name
                ));
                continue;
            }
            actuators.push_str(&converter.actuator_xml(&request)?);
            actuators.push('\n');
        }
    }

    let mut mjcf = String::new();
    let _ = writeln!(mjcf, "<mujoco model=\"{}\">", escape(&converter.robot.name));
    let compiler_attrs: String = compiler
        .iter()
        .map(|(k, v)| format!(" {k}=\"{}\"", escape(v)))
        .collect();
    let _ = writeln!(mjcf, "<compiler{compiler_attrs}/>");
    // Servo gains (kv) on light links are unstable with the explicit Euler integrator;
    // implicitfast integrates actuator damping implicitly. The extension may choose otherwise.
    if !has_option {
        mjcf.push_str("<option integrator=\"implicitfast\"/>\n");
    }
    if !converter.meshes.is_empty() {
        mjcf.push_str("<asset>\n");
        for ((path, scale), name) in &converter.meshes {
            let _ = writeln!(
                mjcf,
                "<mesh name=\"{}\" file=\"{}\" scale=\"{scale}\"/>",
                escape(name),
                escape(&path.display().to_string())
            );
        }
        mjcf.push_str("</asset>\n");
    }
    let _ = write!(mjcf, "<worldbody>\n{body}{extension_world}</worldbody>\n");
    if !equality.is_empty() {
        let _ = write!(mjcf, "<equality>\n{equality}</equality>\n");
    }
    if !actuators.is_empty() {
        let _ = write!(mjcf, "<actuator>\n{actuators}</actuator>\n");
    }
    mjcf.push_str(&extension_sections);
    mjcf.push_str("</mujoco>\n");

    Ok(ConvertedUrdf {
        mjcf,
        robot_name: converter.robot.name.clone(),
        root_link,
        warnings: converter.warnings,
    })
}
