//! URDF -> MJCF conversion. MuJoCo's own URDF import drops visuals, ignores `package://`,
//! welds the root to the world and creates no actuators; this converter keeps what ROS users
//! rely on and writes MJCF text that MuJoCo then compiles. Real-world files are read as
//! forgivingly as ROS's tools read them (`reader`), with every repair reported (`repairs`).
mod base;
mod gazebo;
mod inertia;
mod interfaces;
mod mesh;
mod packages;
mod reader;
mod repairs;

pub use base::BaseRule;
pub use gazebo::{
    GazeboCamera, GazeboDrive, GazeboForceTorque, GazeboImu, GazeboLidar, GazeboMagnetometer,
    GazeboSensors, PointKind,
};
pub use interfaces::{ActuatorRequest, CommandKind, Ros2Control};
pub use packages::PackageResolver;
pub use repairs::{Repair, RepairKind, Repairs};

use crate::config::UrdfGains;
use crate::error::{InputError, InputResult};
use crate::model::gains::{RuledKind, RuledServo};
use crate::model::xml::{self, Element, escape};
use mesh::MeshData;
use nalgebra::{UnitQuaternion, Vector3};
use reader::{Geometry, JointType, Pose, Robot, Shape};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Name of the free joint given to the root link of a floating-base robot.
pub const FLOATING_BASE_JOINT: &str = "floating_base";

pub struct UrdfOptions<'a> {
    /// Names the source in messages: a file path or `<robot_description>`.
    pub origin: &'a str,
    /// Folder for relative mesh paths (the URDF's folder).
    pub base_dir: &'a Path,
    pub resolver: &'a PackageResolver,
    /// None: decided by the rule of `base::detect` (wheels, legs or propellers float).
    pub floating_base: Option<bool>,
    /// Repairs become errors.
    pub strict: bool,
    pub generate_actuators: bool,
    /// Where the URDF declares no actuator: a position servo on each moving joint (the
    /// config neither actuates any joint nor says `actuators: none`).
    pub servo_every_joint: bool,
    pub gains: &'a UrdfGains,
    /// Joints whose actuators the robot config defines instead.
    pub config_actuated: &'a dyn Fn(&str) -> bool,
    /// The URDF came from a request: no environment substitution, and every mesh it names
    /// must pass this before it is read.
    pub access: Option<&'a crate::config::FileAccess>,
}

#[derive(Debug, Clone)]
pub struct ConvertedUrdf {
    pub mjcf: String,
    pub robot_name: String,
    pub root_link: String,
    /// Whether the root got a free joint, and why.
    pub base: BaseRule,
    /// What was changed to make the file load (each also a warning).
    pub repairs: Repairs,
    /// Other findings (skipped meshes, ignored actuators).
    pub warnings: Vec<String>,
    /// The URDF text as read (without bytes after `</robot>`), for `robot_description`.
    pub urdf: String,
    /// What its `<ros2_control>` and simulator plugin give the controller manager.
    pub ros2_control: interfaces::Ros2Control,
    /// The sensors its `<gazebo>` blocks declare.
    pub gazebo: GazeboSensors,
    /// Generated servos whose gains come from the rule once the model is compiled.
    pub ruled_servos: Vec<RuledServo>,
    /// Why each moving joint got a servo, when the URDF declares no actuator.
    pub actuator_rule: Option<String>,
    /// Links whose mass MuJoCo computes from their collision geometry (a repair).
    pub geometry_mass_links: Vec<String>,
    /// The converted meshes' triangles, by mesh asset name, for `ConvertedMesh::fill`.
    pub meshes: Vec<ConvertedMesh>,
}

/// A mesh read by the converter (COLLADA, ASCII STL, ...): the MJCF names the asset, and
/// its vertices and faces are set on the parsed spec.
#[derive(Debug, Clone)]
pub struct ConvertedMesh {
    pub name: String,
    /// x y z per vertex.
    pub vertices: Vec<f32>,
    /// Three vertex indices per triangle.
    pub faces: Vec<i32>,
}

impl ConvertedMesh {
    /// Puts the triangles into the spec parsed from the converted MJCF.
    pub fn fill(&self, spec: &mut mujoco_rs::prelude::MjSpec) {
        if let Some(mesh) = spec.mesh_mut(&self.name) {
            mesh.set_uservert(&self.vertices);
            mesh.set_userface(&self.faces);
        }
    }
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

fn pose_attrs(pose: &Pose) -> String {
    let mut out = String::new();
    if pose.xyz.iter().any(|v| *v != 0.0) {
        let _ = write!(out, " pos=\"{}\"", fmt3(&pose.xyz));
    }
    if let Some(q) = quat_from_rpy(&pose.rpy) {
        let _ = write!(out, " quat=\"{q}\"");
    }
    out
}

/// A mesh asset: the file MuJoCo reads, or the converted triangles.
struct MeshAsset {
    name: String,
    path: PathBuf,
    scale: [f64; 3],
    data: MeshData,
    /// Whether the mesh is flat, computed when a collision geom first uses it.
    flat: Option<Option<mesh::FlatBox>>,
    /// A collision geom whose body takes its mass from geometry uses it.
    gives_mass: bool,
}

/// Where a body's mass comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum MassSource {
    /// The URDF's `<inertial>` (repaired where needed).
    Inertial,
    /// A moving link with a massless subtree: its collision geometry at water density.
    CollisionGeometry,
    /// None: a massless link whose collision geoms must not add mass.
    Massless,
}

struct Converter<'a> {
    opts: &'a UrdfOptions<'a>,
    robot: Robot,
    doc: Element,
    repairs: Repairs,
    warnings: Vec<String>,
    /// (resolved path, scale as text) -> index in `mesh_assets`.
    meshes: BTreeMap<(PathBuf, String), usize>,
    mesh_assets: Vec<MeshAsset>,
    mesh_names: HashSet<String>,
    geom_names: HashSet<String>,
    children_of: HashMap<String, Vec<usize>>,
    link_index: HashMap<String, usize>,
    /// Links that move (a moving joint above them, or the floating root) and have no mass
    /// anywhere in their subtree.
    needs_mass: HashSet<String>,
    /// Links whose mass MuJoCo computes from their collision geometry.
    geometry_mass_links: Vec<String>,
    /// Generated servos whose gains the rule gives (model::gains).
    ruled_servos: Vec<RuledServo>,
    /// Why each moving joint got a servo, when the URDF declares no actuator.
    actuator_rule: Option<String>,
    /// Mesh files found beside the URDF because their package is on no package path.
    found_beside: usize,
    floating: bool,
    /// `<body name="LINK">` content from the `<mujoco>` extension, by link.
    extension_bodies: HashMap<String, String>,
    discard_visual: bool,
    mesh_dir: PathBuf,
    /// The wheel joints a `<gazebo>` drive plugin turns (velocity servos, not position ones),
    /// with the inertia each moves through the ground (`RuledServo::rolled`).
    drive_wheels: HashMap<String, f64>,
    /// Friction and softness of each link's collision geoms that its `<gazebo>` block gives.
    surfaces: HashMap<String, gazebo::Surface>,
    /// Links whose `<gazebo>` block turns gravity off: their bodies are fully compensated.
    weightless: HashSet<String>,
    /// Each link's segmentation class (a `<gazebo>` Label plugin), as its geoms' MJCF label.
    labels: HashMap<String, u8>,
    /// Visual colours that `<gazebo>` blocks give links.
    colours: HashMap<String, [f64; 4]>,
    /// A planar move drives the robot: its continuous joints (its wheels) turn freely, as
    /// Gazebo leaves them, with no servo.
    passive_wheels: bool,
}

impl<'a> Converter<'a> {
    fn error(&self, location: impl Into<String>, message: impl std::fmt::Display) -> InputError {
        InputError::new(self.opts.origin, message).at(location)
    }

    fn link_location(&self, link: &str) -> String {
        match self.link_index.get(link) {
            Some(i) => self.robot.links[*i].location(),
            None => format!("link '{link}'"),
        }
    }

    /// The mesh asset of `filename` (loaded once per file and scale), or None for a mesh that
    /// is skipped. A `visual` mesh that cannot be found is left out as a repair, as RViz
    /// shows the robot without it; a missing collision mesh is an error.
    fn mesh_asset(
        &mut self,
        location: &str,
        filename: &str,
        scale: &[f64; 3],
        visual: bool,
    ) -> InputResult<Option<String>> {
        let missing = |this: &mut Self, problem: String| {
            if visual {
                this.repairs.add(
                    RepairKind::Visual,
                    location,
                    format!("visual mesh {problem}: the visual is left out (RViz shows the robot without it)"),
                );
                Ok(None)
            } else {
                Err(this.error(location, problem))
            }
        };
        let path = match self.mesh_path(location, filename) {
            Ok(path) => path,
            Err(problem) => return missing(self, problem),
        };
        if let Some(access) = self.opts.access {
            access
                .file(&path)
                .map_err(|e| self.error(location, format!("mesh '{filename}': {e}")))?;
        }
        let key = (path.clone(), fmt3(scale));
        if let Some(index) = self.meshes.get(&key) {
            return Ok(Some(self.mesh_assets[*index].name.clone()));
        }
        let Some(data) = self.load_mesh(location, filename, &path) else {
            return Ok(None);
        };
        let name = self.unique_mesh_name(&path);
        self.meshes.insert(key, self.mesh_assets.len());
        self.mesh_assets.push(MeshAsset {
            name: name.clone(),
            path,
            scale: *scale,
            data,
            flat: None,
            gives_mass: false,
        });
        Ok(Some(name))
    }

    /// The file a mesh's `filename` names (package://, file://, relative to the mesh folder
    /// or to the URDF), its repairs said; why it is missing otherwise.
    fn mesh_path(&mut self, location: &str, filename: &str) -> Result<PathBuf, String> {
        let resolved = self
            .opts
            .resolver
            .resolve_uri(filename, &self.mesh_dir)
            .map_err(|m| format!("'{filename}': {m}"))?;
        if let Some(note) = resolved.repair {
            self.repairs.add(RepairKind::Package, location, note);
        }
        if let Some(note) = resolved.beside {
            self.found_beside += 1;
            log::debug!("{}: {location}: {note}", self.opts.origin);
        }
        // A relative path that a `<compiler meshdir>` already prefixes is relative to the URDF.
        let beside = self.opts.base_dir.join(filename);
        let path = resolved.path;
        let path = if !path.is_file() && !filename.contains("://") && beside.is_file() {
            beside
        } else {
            path
        };
        if !path.is_file() {
            return Err(format!(
                "'{filename}' resolves to '{}', which does not exist",
                path.display()
            ));
        }
        Ok(path)
    }

    /// The mesh at `path`; one of a format MuJoCo cannot read is skipped with a warning, one
    /// that does not load is treated as absent (a repair).
    fn load_mesh(&mut self, location: &str, filename: &str, path: &Path) -> Option<MeshData> {
        match mesh::load(path) {
            Ok(data) => Some(data),
            Err(mesh::MeshError::Unsupported(ext)) => {
                self.warnings.push(format!(
                    "{location}: mesh '{filename}' is skipped: {}",
                    mesh::MeshError::Unsupported(ext)
                ));
                None
            }
            Err(e) => {
                self.repairs.add(
                    RepairKind::Shape,
                    location,
                    format!("mesh '{}' {e}: treated as absent", path.display()),
                );
                None
            }
        }
    }

    /// The mesh asset's name: the file's stem, numbered when another mesh has it.
    fn unique_mesh_name(&mut self, path: &Path) -> String {
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
        name
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

    /// MJCF geometry attributes, and the mesh asset's name for a mesh; None for a mesh that
    /// is skipped. The reader has already dropped shapes of zero size.
    fn geometry_attrs(
        &mut self,
        location: &str,
        geometry: &Geometry,
        visual: bool,
    ) -> InputResult<Option<(String, Option<String>)>> {
        let attrs = match geometry {
            Geometry::Box { size } => format!(
                "type=\"box\" size=\"{} {} {}\"",
                size[0] / 2.0,
                size[1] / 2.0,
                size[2] / 2.0
            ),
            Geometry::Cylinder { radius, length } => {
                format!("type=\"cylinder\" size=\"{radius} {}\"", length / 2.0)
            }
            Geometry::Capsule { radius, length } => {
                format!("type=\"capsule\" size=\"{radius} {}\"", length / 2.0)
            }
            Geometry::Sphere { radius } => format!("type=\"sphere\" size=\"{radius}\""),
            Geometry::Mesh { filename, scale } => {
                let mesh = self.mesh_asset(location, filename, scale, visual)?;
                return Ok(mesh.map(|mesh| {
                    let attrs = format!("type=\"mesh\" mesh=\"{}\"", escape(&mesh));
                    (attrs, Some(mesh))
                }));
            }
        };
        Ok(Some((attrs, None)))
    }

    /// A visual's colour: its `<gazebo>` block's (as Gazebo shows it), else the URDF's.
    fn visual_rgba(&self, link: &str, visual: &Shape) -> [f64; 4] {
        if let Some(rgba) = self.colours.get(link) {
            return *rgba;
        }
        if let Some(rgba) = visual.rgba {
            return rgba;
        }
        visual
            .material
            .as_ref()
            .and_then(|m| self.robot.materials.get(m))
            .copied()
            .unwrap_or([0.7, 0.7, 0.7, 1.0])
    }

    fn write_inertial(&mut self, out: &mut String, link_idx: usize) -> InputResult<MassSource> {
        let link = &self.robot.links[link_idx];
        let location = format!("{}/inertial", self.link_location(&link.name));
        let needs_mass = self.needs_mass.contains(&link.name);
        let given = link.inertial.map(|i| i.mass).unwrap_or(0.0);
        if needs_mass && given == 0.0 && !link.collision.is_empty() {
            // As MuJoCo's inertiafromgeom does for bodies without an inertial (kinematics-only
            // URDFs): a plausible mass, where a stand-in speck would make the chain unstable.
            self.repairs.add(
                RepairKind::Inertia,
                location,
                "a moving link with no mass in its subtree (mass 0): mass and inertia from its \
                 collision geometry at 1000 kg/m^3 (the values are logged after compiling)",
            );
            self.geometry_mass_links.push(link.name.clone());
            return Ok(MassSource::CollisionGeometry);
        }
        let (inertial, repair) = inertia::body_inertial(link.inertial.as_ref(), needs_mass)
            .map_err(|m| self.error(&location, m))?;
        if let Some(note) = repair {
            self.repairs.add(RepairKind::Inertia, location, note);
        }
        let Some(i) = inertial else {
            return Ok(MassSource::Massless);
        };
        {
            let _ = writeln!(
                out,
                "<inertial pos=\"{}\" quat=\"{} {} {} {}\" mass=\"{}\" diaginertia=\"{}\"/>",
                fmt3(&i.pos),
                i.quat[0],
                i.quat[1],
                i.quat[2],
                i.quat[3],
                i.mass,
                fmt3(&i.diag)
            );
        }
        Ok(MassSource::Inertial)
    }

    fn write_joint(&self, out: &mut String, joint: &reader::Joint) {
        let name = escape(&joint.name);
        let mut dynamics = String::new();
        if joint.damping > 0.0 {
            let _ = write!(dynamics, " damping=\"{}\"", joint.damping);
        }
        if joint.friction > 0.0 {
            let _ = write!(dynamics, " frictionloss=\"{}\"", joint.friction);
        }
        let effort = joint.limit.effort;
        if effort > 0.0 {
            let _ = write!(dynamics, " actuatorfrcrange=\"{} {effort}\"", -effort);
        }
        let range = match joint.limit.range {
            Some([lo, hi]) => format!(" range=\"{lo} {hi}\""),
            None => " limited=\"false\"".into(),
        };
        let axis_attr = fmt3(&joint.axis);
        match joint.joint_type {
            JointType::Revolute => {
                let _ = writeln!(
                    out,
                    "<joint name=\"{name}\" type=\"hinge\" axis=\"{axis_attr}\"{range}{dynamics}/>"
                );
            }
            JointType::Continuous => {
                let _ = writeln!(
                    out,
                    "<joint name=\"{name}\" type=\"hinge\" axis=\"{axis_attr}\" limited=\"false\"{dynamics}/>"
                );
            }
            JointType::Prismatic => {
                let _ = writeln!(
                    out,
                    "<joint name=\"{name}\" type=\"slide\" axis=\"{axis_attr}\"{range}{dynamics}/>"
                );
            }
            JointType::Floating => {
                let _ = writeln!(out, "<freejoint name=\"{name}\"/>");
            }
            JointType::Spherical => {
                let _ = writeln!(out, "<joint name=\"{name}\" type=\"ball\"{dynamics}/>");
            }
            JointType::Planar => {
                // Two slides spanning the plane normal to the axis, and a hinge about it.
                let normal = Vector3::from(joint.axis);
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
            JointType::Fixed => {}
        }
    }

    /// The box standing in for a flat collision mesh, if the mesh is flat.
    fn flat_collision(&mut self, mesh_name: &str) -> Option<mesh::FlatBox> {
        let asset = self.mesh_assets.iter_mut().find(|a| a.name == mesh_name)?;
        if asset.flat.is_none() {
            asset.flat = Some(mesh::flat_box(&asset.path, &asset.data, &asset.scale));
        }
        asset.flat.flatten()
    }

    fn write_shapes(
        &mut self,
        out: &mut String,
        link_idx: usize,
        visual: bool,
        mass: MassSource,
    ) -> InputResult<()> {
        let link = self.robot.links[link_idx].clone();
        let location = self.link_location(&link.name);
        let (shapes, kind) = if visual {
            (&link.visual, "visual")
        } else {
            (&link.collision, "collision")
        };
        let count = shapes.len();
        for (i, shape) in shapes.iter().enumerate() {
            let at = format!("{location}/{kind}[{i}]");
            let Some((mut geometry, mut mesh_name)) =
                self.geometry_attrs(&at, &shape.geometry, visual)?
            else {
                continue;
            };
            let name = self.geom_name(&link.name, kind, i, count);
            let mut pose = pose_attrs(&shape.origin);
            if !visual
                && let Some(flat_mesh) = mesh_name.clone()
                && let Some((box_geometry, box_pose)) = self.flat_box(&at, &flat_mesh, shape)
            {
                mesh_name = None;
                (geometry, pose) = (box_geometry, box_pose);
            }
            if !visual
                && mass == MassSource::CollisionGeometry
                && let Some(mesh_name) = &mesh_name
                && let Some(asset) = self.mesh_assets.iter_mut().find(|a| &a.name == mesh_name)
            {
                asset.gives_mass = true;
            }
            let label = self
                .labels
                .get(&link.name)
                .map(|class| format!(" user=\"{class}\""))
                .unwrap_or_default();
            let attrs = format!("name=\"{}\" {geometry}{pose}{label}", escape(&name));
            if visual {
                let [r, g, b, a] = self.visual_rgba(&link.name, shape);
                let _ = writeln!(
                    out,
                    "<geom {attrs} group=\"2\" contype=\"0\" conaffinity=\"0\" density=\"0\" rgba=\"{r} {g} {b} {a}\"/>"
                );
            } else {
                let density = if mass == MassSource::Massless {
                    " density=\"0\""
                } else {
                    ""
                };
                let surface = self
                    .surfaces
                    .get(&link.name)
                    .map(contact_attributes)
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "<geom {attrs} group=\"3\"{density}{surface} rgba=\"0.5 0.5 0.5 1\"/>"
                );
            }
        }
        Ok(())
    }

    /// A box in place of collision mesh `flat_mesh` of `shape` when the mesh is flat (MuJoCo
    /// builds no convex hull from it): its geometry and pose attributes, said as a repair.
    fn flat_box(
        &mut self,
        at: &str,
        flat_mesh: &str,
        shape: &reader::Shape,
    ) -> Option<(String, String)> {
        let flat = self.flat_collision(flat_mesh)?;
        self.repairs.add(
            RepairKind::Mesh,
            at,
            format!(
                "collision mesh '{flat_mesh}' is flat (MuJoCo builds no convex hull from \
                 it): a box of half sizes {:?} m instead",
                flat.half
            ),
        );
        let o = &shape.origin;
        let origin = nalgebra::Isometry3::from_parts(
            nalgebra::Translation3::from(Vector3::from(o.xyz)),
            UnitQuaternion::from_euler_angles(o.rpy[0], o.rpy[1], o.rpy[2]),
        );
        let [w, x, y, z] = flat.quat;
        let local = nalgebra::Isometry3::from_parts(
            nalgebra::Translation3::from(Vector3::from(flat.center)),
            UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(w, x, y, z)),
        );
        let p = origin * local;
        let (t, q) = (p.translation.vector, p.rotation);
        let pose = format!(
            " pos=\"{} {} {}\" quat=\"{} {} {} {}\"",
            t.x, t.y, t.z, q.w, q.i, q.j, q.k
        );
        Some((format!("type=\"box\" size=\"{}\"", fmt3(&flat.half)), pose))
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
        let link_name = self.robot.links[link_idx].name.clone();
        let joint = joint_idx.map(|j| self.robot.joints[j].clone());
        let pose = joint
            .as_ref()
            .map(|j| pose_attrs(&j.origin))
            .unwrap_or_default();
        // gravcomp 1: gravity's pull on the body is cancelled, as Gazebo's turnGravityOff.
        let weightless = if self.weightless.contains(&link_name) {
            " gravcomp=\"1\""
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<body name=\"{}\"{pose}{weightless}>",
            escape(&link_name)
        );
        if joint.is_none() && self.floating {
            let _ = writeln!(out, "<freejoint name=\"{FLOATING_BASE_JOINT}\"/>");
        }
        if let Some(joint) = &joint {
            self.write_joint(out, joint);
        }
        let mass = self.write_inertial(out, link_idx)?;
        if !self.discard_visual {
            self.write_shapes(out, link_idx, true, mass)?;
        }
        self.write_shapes(out, link_idx, false, mass)?;
        // A site per link, so sensors and tools can refer to the link frame by name.
        let _ = writeln!(
            out,
            "<site name=\"{}\" size=\"0.005\" group=\"5\"/>",
            escape(&link_name)
        );
        if let Some(extra) = self.extension_bodies.remove(&link_name) {
            out.push_str(&extra);
            out.push('\n');
        }
        for child_joint in self
            .children_of
            .get(&link_name)
            .cloned()
            .unwrap_or_default()
        {
            let child = self.robot.joints[child_joint].child.clone();
            let child_idx = self.link_index[&child];
            self.write_link(out, child_idx, Some(child_joint), depth + 1)?;
        }
        out.push_str("</body>\n");
        Ok(())
    }

    /// Marks the moving links whose whole subtree is massless (their joint's mass matrix
    /// entry would be zero). Returns the subtree's mass.
    fn mark_massless(&mut self, link: &str, moving: bool, depth: usize) -> f64 {
        if depth > 1000 {
            return 0.0;
        }
        let own = self.robot.links[self.link_index[link]]
            .inertial
            .map(|i| i.mass)
            .unwrap_or(0.0);
        let mut total = own.max(0.0);
        for j in self.children_of.get(link).cloned().unwrap_or_default() {
            let joint = &self.robot.joints[j];
            let (child, child_moving) = (joint.child.clone(), joint.joint_type.is_moving());
            total += self.mark_massless(&child, child_moving, depth + 1);
        }
        if moving && total < inertia::MIN_MOVING_MASS {
            self.needs_mass.insert(link.to_string());
        }
        total
    }

    /// An actuator's MJCF, and the servo whose gains the rule gives, if any.
    fn actuator_xml(&self, request: &ActuatorRequest) -> InputResult<(String, Option<RuledServo>)> {
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
        let effort = (limit.effort > 0.0).then_some(limit.effort);
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
        // A gain the config leaves out is set after compiling, from the inertia the joint
        // moves (model::gains); 1 holds its place until then.
        let ruled = |kind| RuledServo {
            actuator: request.name.clone(),
            kind,
            effort,
            rolled: self
                .drive_wheels
                .get(&request.joint)
                .copied()
                .unwrap_or(0.0),
        };
        Ok(match request.kind {
            CommandKind::Position => {
                let (kp, kv) = (gains.position_kp, gains.position_kv);
                let xml = format!(
                    "<position name=\"{name}\" joint=\"{target}\" kp=\"{}\" kv=\"{}\"{}{force}{gear}/>",
                    kp.unwrap_or(1.0),
                    kv.unwrap_or(1.0),
                    range(request.ctrlrange.or(limit.range))
                );
                // Given gains are checked against the stable bound too (and kept).
                (xml, Some(ruled(RuledKind::Position { kp, kv })))
            }
            CommandKind::Velocity => {
                let vel = (limit.velocity > 0.0).then_some([-limit.velocity, limit.velocity]);
                let xml = format!(
                    "<velocity name=\"{name}\" joint=\"{target}\" kv=\"{}\"{}{force}{gear}/>",
                    gains.velocity_kv.unwrap_or(1.0),
                    range(request.ctrlrange.or(vel))
                );
                (
                    xml,
                    gains
                        .velocity_kv
                        .is_none()
                        .then(|| ruled(RuledKind::Velocity)),
                )
            }
            CommandKind::Effort => (
                format!(
                    "<motor name=\"{name}\" joint=\"{target}\"{}{gear}/>",
                    range(request.ctrlrange.or(effort.map(|e| [-e, e])))
                ),
                None,
            ),
        })
    }

    fn mesh_assets_xml(&self) -> String {
        let mut xml = String::new();
        for asset in &self.mesh_assets {
            let name = escape(&asset.name);
            // A mesh's inertia only places it in its geom's frame, except where it gives a body
            // its mass: a shell then loads open and paper-thin meshes (MuJoCo's volume-based
            // default refuses them), and a convex hull gives a mass that makes sense.
            let inertia = if asset.gives_mass { "convex" } else { "shell" };
            let scale = format!("{}\" inertia=\"{inertia}", fmt3(&asset.scale));
            match &asset.data {
                MeshData::File => {
                    let _ = writeln!(
                        xml,
                        "<mesh name=\"{name}\" file=\"{}\" scale=\"{scale}\"/>",
                        escape(&asset.path.display().to_string())
                    );
                }
                // The triangles go into the spec after parsing (`ConvertedUrdf::meshes`):
                // as MJCF text, MuJoCo's parsing of them costs more than reading the file.
                MeshData::Converted { .. } => {
                    let _ = writeln!(xml, "<mesh name=\"{name}\" scale=\"{scale}\"/>");
                }
            }
        }
        xml
    }
}

/// Links, joints and the tree they form; errors for what no tool can load.
struct Tree {
    link_index: HashMap<String, usize>,
    children_of: HashMap<String, Vec<usize>>,
    root_link: String,
}

fn build_tree(robot: &Robot, origin: &str) -> InputResult<Tree> {
    if robot.links.is_empty() {
        return Err(InputError::new(origin, "the URDF has no <link>"));
    }
    let mut link_index = HashMap::new();
    for (i, link) in robot.links.iter().enumerate() {
        if link_index.insert(link.name.clone(), i).is_some() {
            return Err(InputError::new(origin, "duplicate link name").at(link.location()));
        }
    }
    let mut children_of: HashMap<String, Vec<usize>> = HashMap::new();
    let mut parent_of: HashMap<String, String> = HashMap::new();
    let mut joint_names = HashSet::new();
    for (j, joint) in robot.joints.iter().enumerate() {
        let at = joint.location();
        if !joint_names.insert(joint.name.clone()) {
            return Err(InputError::new(origin, "duplicate joint name").at(at));
        }
        for (role, link) in [("parent", &joint.parent), ("child", &joint.child)] {
            if !link_index.contains_key(link) {
                return Err(InputError::new(
                    origin,
                    format!("{role} link '{link}' is not defined"),
                )
                .at(at));
            }
        }
        if parent_of
            .insert(joint.child.clone(), joint.parent.clone())
            .is_some()
        {
            return Err(InputError::new(
                origin,
                format!("link '{}' is the child of two joints", joint.child),
            )
            .at(at));
        }
        children_of.entry(joint.parent.clone()).or_default().push(j);
    }
    let roots: Vec<&str> = robot
        .links
        .iter()
        .filter(|l| !parent_of.contains_key(&l.name))
        .map(|l| l.name.as_str())
        .collect();
    if roots.len() != 1 {
        return Err(InputError::new(
            origin,
            format!("the links must form one tree, but these links have no parent: {roots:?}"),
        ));
    }
    Ok(Tree {
        root_link: roots[0].to_string(),
        link_index,
        children_of,
    })
}

/// What the `<mujoco>` extension adds: compiler attributes merged into ours, `<worldbody><body
/// name=LINK>` content for that link's body, every other element copied as written.
struct Extension {
    compiler: Vec<(String, String)>,
    bodies: HashMap<String, String>,
    sections: String,
    world: String,
    discard_visual: bool,
    has_option: bool,
    mesh_dir: PathBuf,
}

fn read_extension(doc: &Element, text: &str, tree: &Tree, base_dir: &Path) -> Extension {
    let mut ext = Extension {
        compiler: [
            ("angle", "radian"),
            ("autolimits", "true"),
            ("balanceinertia", "true"),
            // Bodies with an <inertial> keep it; see MassSource for the others.
            ("inertiafromgeom", "auto"),
            ("boundmass", "1e-6"),
            ("boundinertia", "1e-10"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        bodies: HashMap::new(),
        sections: String::new(),
        world: String::new(),
        discard_visual: false,
        has_option: doc
            .children_named("mujoco")
            .any(|e| e.children_named("option").next().is_some()),
        mesh_dir: base_dir.to_path_buf(),
    };
    for block in doc.children_named("mujoco") {
        for section in &block.children {
            match section.name.as_str() {
                "compiler" => {
                    for (key, value) in &section.attributes {
                        match key.as_str() {
                            "discardvisual" => ext.discard_visual = value == "true",
                            "meshdir" | "assetdir" => ext.mesh_dir = base_dir.join(value),
                            "strippath" => {}
                            _ => {
                                ext.compiler.retain(|(k, _)| k != key);
                                ext.compiler.push((key.clone(), value.clone()));
                            }
                        }
                    }
                }
                "worldbody" => {
                    for item in &section.children {
                        let link = item
                            .attr("name")
                            .filter(|n| item.name == "body" && tree.link_index.contains_key(*n));
                        match link {
                            Some(link) => {
                                ext.bodies
                                    .insert(link.to_string(), text[item.inner.clone()].to_string());
                            }
                            None => {
                                ext.world.push_str(&text[item.span.clone()]);
                                ext.world.push('\n');
                            }
                        }
                    }
                }
                _ => {
                    ext.sections.push_str(&text[section.span.clone()]);
                    ext.sections.push('\n');
                }
            }
        }
    }
    ext
}

/// Each wheel joint a `<gazebo>` drive turns, with its share of the robot's mass at the
/// wheel's radius: the inertia it moves rolling on the ground, which its servo's gain is for
/// (the wheel's own is a small part of it).
fn drive_wheels(robot: &Robot, drive: Option<&gazebo::GazeboDrive>) -> HashMap<String, f64> {
    let Some(drive) = drive else {
        return HashMap::new();
    };
    let mass: f64 = robot
        .links
        .iter()
        .filter_map(|l| l.inertial.as_ref())
        .map(|i| i.mass)
        .sum();
    let wheels = drive.left.iter().chain(&drive.right);
    let share = mass / (drive.left.len() + drive.right.len()) as f64;
    wheels
        .map(|wheel| (wheel.clone(), share * drive.radius.powi(2)))
        .collect()
}

/// Converts URDF text to MJCF text.
pub fn urdf_to_mjcf(text: &str, opts: &UrdfOptions) -> InputResult<ConvertedUrdf> {
    let mut repairs = Repairs::default();
    let text = reader::cut_trailing_text(text, &mut repairs, opts.origin);
    let (doc, robot) = read_urdf(text, opts, &mut repairs)?;
    let tree = build_tree(&robot, opts.origin)?;
    let ext = read_extension(&doc, text, &tree, opts.base_dir);
    let root_link = tree.root_link.clone();
    let base = base_rule(&robot, &root_link, opts.floating_base);
    let gazebo = gazebo::read(&doc);
    let drive_wheels = drive_wheels(&robot, gazebo.plugins.drive.as_ref());
    let surfaces = gazebo.surfaces.iter().map(|s| (s.link.clone(), s.clone()));
    let planar = gazebo.plugins.drive.as_ref();
    let mut converter = Converter {
        passive_wheels: planar.is_some_and(|d| d.kind == crate::config::BaseKind::Planar),
        drive_wheels,
        surfaces: surfaces.collect(),
        weightless: gazebo.weightless.iter().cloned().collect(),
        colours: gazebo
            .colours
            .iter()
            .map(|c| (c.link.clone(), c.rgba))
            .collect(),
        labels: gazebo
            .labels
            .iter()
            .map(|l| (l.link.clone(), l.class))
            .collect(),
        opts,
        robot,
        doc,
        repairs,
        warnings: Vec::new(),
        meshes: BTreeMap::new(),
        mesh_assets: Vec::new(),
        mesh_names: HashSet::new(),
        geom_names: HashSet::new(),
        children_of: tree.children_of,
        link_index: tree.link_index,
        needs_mass: HashSet::new(),
        geometry_mass_links: Vec::new(),
        ruled_servos: Vec::new(),
        actuator_rule: None,
        found_beside: 0,
        floating: base.floating,
        extension_bodies: ext.bodies.clone(),
        discard_visual: ext.discard_visual,
        mesh_dir: ext.mesh_dir.clone(),
    };
    let body = converter.write_bodies(&root_link, base.floating)?;
    let (equality, mimic_joints) = converter.mimic_equalities();
    let actuators = if opts.generate_actuators {
        converter.actuators_xml(&mimic_joints)?
    } else {
        String::new()
    };
    if opts.strict {
        converter.refuse_repairs()?;
    }
    let excludes = converter.contact_excludes(&root_link, base.floating);
    let mjcf = converter.document(&ext, &body, &equality, &excludes, &actuators);
    let ros2_control = interfaces::Ros2Control::of(&converter.doc, &mut converter.warnings);
    if converter.found_beside > 0 {
        // Normal resolution, not a repair: one line, each file at RUST_LOG=debug.
        super::notes::note(&format!(
            "{}: {} mesh file(s) found beside the URDF (their packages are on no package path)",
            opts.origin, converter.found_beside
        ));
    }
    Ok(ConvertedUrdf {
        mjcf,
        robot_name: converter.robot.name.clone(),
        root_link,
        base,
        repairs: converter.repairs,
        warnings: converter.warnings,
        urdf: text.to_string(),
        ros2_control,
        gazebo,
        ruled_servos: converter.ruled_servos,
        actuator_rule: converter.actuator_rule,
        geometry_mass_links: converter.geometry_mass_links,
        meshes: converted_meshes(converter.mesh_assets),
    })
}

/// The URDF `text` parsed and read (a root element other than <robot> refused).
fn read_urdf(
    text: &str,
    opts: &UrdfOptions,
    repairs: &mut Repairs,
) -> InputResult<(Element, Robot)> {
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
    let find = |package: &str| {
        opts.resolver
            .find_package(package)
            .ok()
            .map(|p| p.display().to_string())
    };
    let robot = reader::read_robot(&doc, repairs, &find, opts.access.is_none())
        .map_err(|m| InputError::new(opts.origin, m))?;
    Ok((doc, robot))
}

/// The meshes converted to vertices and faces (formats MuJoCo does not read itself), as the
/// model takes them.
fn converted_meshes(assets: Vec<MeshAsset>) -> Vec<ConvertedMesh> {
    assets
        .into_iter()
        .filter_map(|asset| match asset.data {
            MeshData::Converted { vertices, faces } => Some(ConvertedMesh {
                name: asset.name,
                vertices: vertices.into_iter().flatten().collect(),
                faces: faces.into_iter().flatten().map(|i| i as i32).collect(),
            }),
            MeshData::File => None,
        })
        .collect()
}

impl Converter<'_> {
    /// The bodies of the robot as MJCF, from its root link (or the children of `world`).
    fn write_bodies(&mut self, root_link: &str, floating: bool) -> InputResult<String> {
        let mut body = String::new();
        if root_link == "world" {
            // A `world` link is MuJoCo's world body: its children hang directly in <worldbody>.
            for joint_idx in self.children_of.get("world").cloned().unwrap_or_default() {
                let joint = &self.robot.joints[joint_idx];
                let (child, moving) = (joint.child.clone(), joint.joint_type.is_moving());
                self.mark_massless(&child, moving, 1);
                let child_idx = self.link_index[&child];
                self.write_link(&mut body, child_idx, Some(joint_idx), 1)?;
            }
        } else {
            self.mark_massless(root_link, floating, 0);
            let root_idx = self.link_index[root_link];
            self.write_link(&mut body, root_idx, None, 0)?;
        }
        Ok(body)
    }

    /// The robot's contact exclusions, as a Gazebo model's contacts go: its links do not
    /// collide with one another (`self_collide` is off by default) except pairs whose links
    /// both have it on (`<gazebo><self_collide>true</self_collide></gazebo>` for every link,
    /// `<gazebo reference="LINK">` for one; Gazebo Classic's `selfCollide` too); and never a
    /// moving link with its parent (`static_parent_pairs`).
    fn contact_excludes(&self, root_link: &str, floating: bool) -> String {
        let flagged = self.self_colliding_links();
        let colliding: Vec<&str> = self
            .robot
            .links
            .iter()
            .filter(|l| !l.collision.is_empty() && l.name != "world")
            .map(|l| l.name.as_str())
            .collect();
        let mut pairs = std::collections::BTreeSet::new();
        for (k, a) in colliding.iter().enumerate() {
            for b in &colliding[k + 1..] {
                if !(flagged(a) && flagged(b)) {
                    pairs.insert(ordered(a, b));
                }
            }
        }
        for (a, b) in self.static_parent_pairs(root_link, floating) {
            pairs.insert(ordered(&a, &b));
        }
        let mut xml = String::new();
        for (a, b) in pairs {
            let _ = writeln!(
                xml,
                "<exclude body1=\"{}\" body2=\"{}\"/>",
                escape(&a),
                escape(&b)
            );
        }
        xml
    }

    /// Whether link `name` has self-collision on (see `contact_excludes`).
    fn self_colliding_links(&self) -> impl Fn(&str) -> bool + use<> {
        let on = |gazebo: &Element| {
            gazebo
                .children
                .iter()
                .filter(|c| c.name == "self_collide" || c.name == "selfCollide")
                .any(|c| matches!(c.text.trim(), "true" | "1"))
        };
        let mut whole_model = false;
        let mut links = HashSet::new();
        for gazebo in self.doc.children_named("gazebo").filter(|g| on(g)) {
            match gazebo.attr("reference") {
                Some(link) => {
                    links.insert(link.to_string());
                }
                None => whole_model = true,
            }
        }
        move |name: &str| whole_model || links.contains(name)
    }

    /// Each moving link and its parent where that parent is fixed to the world. MuJoCo skips
    /// parent-child contacts except where the parent is welded to the world, so a fixed arm's
    /// first link would otherwise rub on the base it turns in (a UR5e's shoulder on its base:
    /// the pan joint stuck); ROS simulators skip contacts between links a joint connects.
    fn static_parent_pairs(&self, root_link: &str, floating: bool) -> Vec<(String, String)> {
        let mut pairs = Vec::new();
        if floating {
            return pairs;
        }
        let mut static_links = vec![root_link.to_string()];
        while let Some(link) = static_links.pop() {
            for &j in self
                .children_of
                .get(&link)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let joint = &self.robot.joints[j];
                if !joint.joint_type.is_moving() {
                    static_links.push(joint.child.clone());
                } else if link != "world" {
                    // (A `world` link is MuJoCo's world body, which is not the robot's.)
                    pairs.push((link.clone(), joint.child.clone()));
                }
            }
        }
        pairs
    }

    /// Mimic joints as equality constraints (joint = offset + multiplier * leader), and the
    /// joints that mimic. A mimic that cannot be one is dropped, as robot_state_publisher
    /// ignores it.
    fn mimic_equalities(&mut self) -> (String, HashSet<String>) {
        let mut equality = String::new();
        let mut mimic_joints = HashSet::new();
        let joint_names: HashSet<String> =
            self.robot.joints.iter().map(|j| j.name.clone()).collect();
        let single_dof: HashSet<&str> = self
            .robot
            .joints
            .iter()
            .filter(|j| j.joint_type.is_single_dof())
            .map(|j| j.name.as_str())
            .collect();
        for joint in &self.robot.joints {
            let Some(mimic) = &joint.mimic else {
                continue;
            };
            let location = format!("{}/mimic", joint.location());
            let refusal = if !joint_names.contains(&mimic.joint) {
                Some(format!(
                    "mimics joint '{}', which is not defined",
                    mimic.joint
                ))
            } else if mimic.joint == joint.name {
                Some("mimics itself".to_string())
            } else if !single_dof.contains(joint.name.as_str())
                || !single_dof.contains(mimic.joint.as_str())
            {
                Some(format!(
                    "couples '{}' to '{}': a mimic needs two revolute, continuous or prismatic joints",
                    joint.name, mimic.joint
                ))
            } else {
                None
            };
            if let Some(why) = refusal {
                self.repairs
                    .add(RepairKind::Mimic, location, format!("{why}: dropped"));
                continue;
            }
            mimic_joints.insert(joint.name.clone());
            let _ = writeln!(
                equality,
                "<joint name=\"mimic_{}\" joint1=\"{}\" joint2=\"{}\" polycoef=\"{} {} 0 0 0\"/>",
                escape(&joint.name),
                escape(&joint.name),
                escape(&mimic.joint),
                mimic.offset,
                mimic.multiplier
            );
        }
        (equality, mimic_joints)
    }

    /// Actuators for the joints `<ros2_control>` and `<transmission>` name, except those the
    /// config actuates and mimic joints.
    fn actuators_xml(&mut self, mimic_joints: &HashSet<String>) -> InputResult<String> {
        let joint_names: HashSet<String> =
            self.robot.joints.iter().map(|j| j.name.clone()).collect();
        let mut actuators = String::new();
        let mut requests = interfaces::from_ros2_control(&self.doc, &mut self.warnings);
        let covered: HashSet<String> = requests.iter().map(|r| r.joint.clone()).collect();
        requests.extend(
            interfaces::from_transmissions(&self.doc, &mut self.warnings)
                .into_iter()
                .filter(|r| !covered.contains(&r.joint)),
        );
        if requests.is_empty() && self.opts.servo_every_joint {
            requests = self.servo_per_moving_joint(mimic_joints);
            if !requests.is_empty() {
                let servos = match self.drive_wheels.len() {
                    0 => "a position servo".to_string(),
                    n => format!(
                        "a servo (velocity on the {n} wheels its <gazebo> drive turns, position \
                         on the rest)"
                    ),
                };
                self.actuator_rule = Some(format!(
                    "the URDF declares no actuator (no <ros2_control>, <transmission> or config \
                     actuators): {servos} on each of its {} moving joints, its effort limit the \
                     URDF's (`actuators: none` opts out)",
                    requests.len()
                ));
            }
        }
        let mut seen = HashSet::new();
        for request in requests {
            if (self.opts.config_actuated)(&request.joint) || mimic_joints.contains(&request.joint)
            {
                continue;
            }
            if !joint_names.contains(&request.joint) {
                self.repairs.add(
                    RepairKind::Actuator,
                    request.source.clone(),
                    format!(
                        "names joint '{}', which the URDF does not have: no actuator",
                        request.joint
                    ),
                );
                continue;
            }
            if !seen.insert(request.name.clone()) {
                self.warnings.push(format!(
                    "{}: a second actuator named '{}' is ignored",
                    request.source, request.name
                ));
                continue;
            }
            let (xml, ruled) = self.actuator_xml(&request)?;
            actuators.push_str(&xml);
            actuators.push('\n');
            self.ruled_servos.extend(ruled);
        }
        Ok(actuators)
    }

    /// A position servo request for each revolute, continuous and prismatic joint that is
    /// not a mimic joint, in URDF order.
    fn servo_per_moving_joint(&self, mimic_joints: &HashSet<String>) -> Vec<ActuatorRequest> {
        self.robot
            .joints
            .iter()
            .filter(|j| {
                let servoed = match j.joint_type {
                    JointType::Revolute | JointType::Prismatic => true,
                    JointType::Continuous => !self.passive_wheels,
                    _ => false,
                };
                servoed && !mimic_joints.contains(&j.name)
            })
            .map(|j| ActuatorRequest {
                name: j.name.clone(),
                joint: j.name.clone(),
                kind: match self.drive_wheels.contains_key(&j.name) {
                    true => CommandKind::Velocity,
                    false => CommandKind::Position,
                },
                gear: 1.0,
                ctrlrange: None,
                source: format!("joint '{}' (no actuator declared)", j.name),
            })
            .collect()
    }

    /// Strict mode: the first repair the URDF needs, as an error.
    fn refuse_repairs(&self) -> InputResult<()> {
        if let Some(first) = self.repairs.list.first() {
            let count = self.repairs.list.len();
            return Err(InputError::new(
                self.opts.origin,
                format!(
                    "strict: the URDF needs {count} repair{} ({}); the first: {}",
                    if count == 1 { "" } else { "s" },
                    self.repairs.summary().unwrap_or_default(),
                    first.action
                ),
            )
            .at(first.location.clone()));
        }
        Ok(())
    }

    /// The MJCF document around the converted parts.
    fn document(
        &self,
        ext: &Extension,
        body: &str,
        equality: &str,
        excludes: &str,
        actuators: &str,
    ) -> String {
        let mut mjcf = String::new();
        let _ = writeln!(mjcf, "<mujoco model=\"{}\">", escape(&self.robot.name));
        let compiler_attrs: String = ext
            .compiler
            .iter()
            .map(|(k, v)| format!(" {k}=\"{}\"", escape(v)))
            .collect();
        let _ = writeln!(mjcf, "<compiler{compiler_attrs}/>");
        // Servo gains (kv) on light links are unstable with the explicit Euler integrator;
        // implicitfast integrates actuator damping implicitly. The extension may choose otherwise.
        if !ext.has_option {
            mjcf.push_str("<option integrator=\"implicitfast\"/>\n");
        }
        if !self.mesh_assets.is_empty() {
            let _ = write!(mjcf, "<asset>\n{}</asset>\n", self.mesh_assets_xml());
        }
        let _ = write!(mjcf, "<worldbody>\n{body}{}</worldbody>\n", ext.world);
        if !equality.is_empty() {
            let _ = write!(mjcf, "<equality>\n{equality}</equality>\n");
        }
        if !excludes.is_empty() {
            let _ = write!(mjcf, "<contact>\n{excludes}</contact>\n");
        }
        if !actuators.is_empty() {
            let _ = write!(mjcf, "<actuator>\n{actuators}</actuator>\n");
        }
        mjcf.push_str(&ext.sections);
        mjcf.push_str("</mujoco>\n");
        mjcf
    }
}

/// A pair of names in a fixed order, so that each pair is excluded once.
fn ordered(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// Whether the robot floats: a `world` root welds it; otherwise the config decides, or the
/// rule of base.rs.
fn base_rule(robot: &Robot, root_link: &str, configured: Option<bool>) -> BaseRule {
    if root_link == "world" {
        return BaseRule {
            floating: false,
            reason: "the root link is 'world': the robot is attached to the world".into(),
        };
    }
    match configured {
        Some(floating) => BaseRule {
            floating,
            reason: format!("floating_base: {floating} in the config"),
        },
        None => base::detect(robot, root_link),
    }
}
/// A collision geom's attributes from its link's `<gazebo>` surface. The priority makes the
/// link's own surface govern its contacts (MuJoCo takes the larger friction of two geoms where
/// ODE takes the smaller: a slippery caster on a floor of 1 stays slippery). Torsional and
/// rolling friction, and solimp's impedances, stay MuJoCo's defaults.
fn contact_attributes(surface: &gazebo::Surface) -> String {
    let mut attrs = String::from(" priority=\"1\"");
    if let Some(mu) = surface.friction {
        let _ = write!(attrs, " friction=\"{mu} 0.005 0.0001\"");
    }
    if let Some(softness) = surface.softness {
        let [timeconst, dampratio] = softness.solref;
        let _ = write!(attrs, " solref=\"{timeconst} {dampratio}\"");
    }
    if let Some(width) = surface.min_depth {
        let _ = write!(attrs, " solimp=\"0.9 0.95 {width}\"");
    }
    attrs
}
