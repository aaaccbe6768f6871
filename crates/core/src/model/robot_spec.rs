//! Loads one robot of the config into an `MjSpec`: MJCF (file or text) as MuJoCo parses it,
//! URDF through the converter; then applies the config's actuators.
use crate::config::{
    ActuatorGroup, ActuatorKind, Config, FileAccess, RobotConfig, full_match_regex, read_text,
};
use crate::error::{InputError, InputResult};
use crate::model::urdf::{self, PackageResolver, UrdfOptions};
use crate::model::xacro;
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::{MjsActuator, MjtLimited, PositionConfig};
use std::path::Path;

/// A robot's spec, before it is attached to the world.
pub struct LoadedRobot {
    pub spec: MjSpec,
    /// File path, or `robots[i].mjcf_string` / `robots[i].urdf_string`.
    pub origin: String,
    /// The URDF text, when the model came from URDF (for `robot_description`).
    pub urdf: Option<String>,
    /// What a URDF's `<ros2_control>` and simulator plugin give the controller manager.
    pub ros2_control: super::urdf::Ros2Control,
    /// The sensors a URDF's `<gazebo>` blocks declare.
    pub gazebo: super::urdf::GazeboSensors,
    /// Generated servos whose gains come from the rule once the model is compiled.
    pub ruled_servos: Vec<super::gains::RuledServo>,
    pub warnings: Vec<String>,
    /// URDF robots: the floating-base decision and the repair count, for `--summary`.
    pub base_rule: Option<String>,
    /// URDF robots declaring no actuator: the servos generated for them, for `--summary`.
    pub actuator_rule: Option<String>,
    pub repairs: Option<String>,
    /// URDF links whose mass MuJoCo computes from their collision geometry (a repair).
    pub geometry_mass_links: Vec<String>,
}

/// MuJoCo's messages span lines ("Error: ...\nElement 'geom', line 3"); keep them on one.
fn parse_error(origin: &str, err: impl std::fmt::Display) -> InputError {
    InputError::new(origin, one_line(&err.to_string()))
}

pub(super) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// MuJoCo truncates its XML parser messages to 100 characters; check well-formedness first so
/// a broken file gets a full message with its line.
fn check_well_formed(origin: &str, text: &str) -> InputResult<()> {
    crate::model::xml::parse(text)
        .map(|_| ())
        .map_err(|m| InputError::new(origin, m))
}

/// Joint patterns of the config's actuator groups, compiled.
fn compiled_patterns(config: &Config, index: usize) -> InputResult<Vec<Vec<regex::Regex>>> {
    let robot = &config.robots[index];
    robot
        .actuators
        .iter()
        .enumerate()
        .map(|(k, group)| {
            group
                .joints
                .as_slice()
                .iter()
                .map(|p| {
                    full_match_regex(p).map_err(|m| {
                        InputError::new(&config.origin, m)
                            .at(format!("robots[{index}].actuators[{k}].joints"))
                    })
                })
                .collect()
        })
        .collect()
}

pub fn load_robot(config: &Config, index: usize) -> InputResult<LoadedRobot> {
    let robot = &config.robots[index];
    let field = |f: &str| format!("robots[{index}].{f}");
    let patterns = compiled_patterns(config, index)?;
    let base_dir = match &robot.base_dir {
        Some(dir) => config.resolve_robot_path(index, dir, &field("base_dir"))?,
        None => config.base_dir.clone(),
    };
    if robot.from_request {
        refuse_programs(config, index)?;
    }
    let source = Source {
        config,
        index,
        base_dir,
        // What a robot from a request's text may read: checked before each file is opened.
        access: robot.from_request.then(|| FileAccess::of(config)),
    };
    let mut loaded = if let Some(path) = &robot.mjcf {
        load_mjcf_file(&source, path)?
    } else if let Some(text) = &robot.mjcf_string {
        load_mjcf_string(&source, text)?
    } else {
        load_urdf(&source, &patterns)?
    };
    if robot.floating_base.is_some() && loaded.urdf.is_none() {
        loaded.warnings.push(format!(
            "{}: floating_base applies to URDF models; an MJCF model declares its own free joint",
            field("floating_base")
        ));
    }
    name_unnamed_joints(&mut loaded.spec);
    apply_actuator_groups(&mut loaded.spec, config, index, &patterns)?;
    Ok(loaded)
}

/// Where robot `index` of `config` is read from, and what it may read.
struct Source<'a> {
    config: &'a Config,
    index: usize,
    /// Its own folder, against which a model given as text resolves its files.
    base_dir: std::path::PathBuf,
    /// What a robot from a request's text may read (None: anything the user can).
    access: Option<FileAccess>,
}

impl Source<'_> {
    fn field(&self, f: &str) -> String {
        format!("robots[{}].{f}", self.index)
    }

    /// Refuses a file a request's robot may not read.
    fn allowed(&self, path: &Path, at: &str) -> InputResult<()> {
        match &self.access {
            Some(access) => access.file(path).map(drop).map_err(|e| {
                InputError::new(&self.config.origin, e.to_string()).at(self.field(at))
            }),
            None => Ok(()),
        }
    }
}

impl LoadedRobot {
    /// A robot loaded from MJCF, which declares its own base and actuators.
    fn from_mjcf(spec: MjSpec, origin: String) -> Self {
        LoadedRobot {
            spec,
            origin,
            urdf: None,
            ros2_control: Default::default(),
            gazebo: Default::default(),
            ruled_servos: Vec::new(),
            warnings: Vec::new(),
            base_rule: None,
            actuator_rule: None,
            repairs: None,
            geometry_mass_links: Vec::new(),
        }
    }
}

fn load_mjcf_file(source: &Source, path: &str) -> InputResult<LoadedRobot> {
    let (config, index) = (source.config, source.index);
    let path = config.resolve_robot_path(index, path, &source.field("mjcf"))?;
    let origin = path.display().to_string();
    if !path.is_file() {
        return Err(InputError::new(
            &config.origin,
            format!("model file '{origin}' does not exist"),
        )
        .at(source.field("mjcf")));
    }
    source.allowed(&path, "mjcf")?;
    let text =
        read_text(&path).map_err(|e| InputError::new(&origin, format!("cannot read: {e}")))?;
    check_well_formed(&origin, &text)?;
    let spec = MjSpec::from_xml(&path).map_err(|e| parse_error(&origin, e))?;
    Ok(LoadedRobot::from_mjcf(spec, origin))
}

fn load_mjcf_string(source: &Source, text: &str) -> InputResult<LoadedRobot> {
    let config = source.config;
    let origin = format!("{} ({})", config.origin, source.field("mjcf_string"));
    check_well_formed(&origin, text)?;
    if let Some(access) = &source.access {
        super::request_files::check_mjcf(text, &source.base_dir, access, &config.limits)
            .map_err(|e| InputError::new(&origin, e))?;
    }
    let mut spec = MjSpec::from_xml_string(text).map_err(|e| parse_error(&origin, e))?;
    // Relative asset paths resolve against the model file's folder; a string has none.
    spec.set_modelfiledir(&format!("{}/", source.base_dir.display()));
    Ok(LoadedRobot::from_mjcf(spec, origin))
}

/// A URDF robot's text (a xacro expanded), its origin, and the folder its files resolve
/// against.
fn urdf_text(
    source: &Source,
    resolver: &PackageResolver,
) -> InputResult<(String, String, std::path::PathBuf)> {
    let (config, index) = (source.config, source.index);
    let robot = &config.robots[index];
    Ok(if let Some(path) = &robot.urdf {
        let path = config.resolve_robot_path(index, path, &source.field("urdf"))?;
        let origin = path.display().to_string();
        if path.exists() {
            source.allowed(&path, "urdf")?;
        }
        let text = if xacro::is_xacro(&path) {
            if !path.is_file() {
                return Err(InputError::new(
                    &config.origin,
                    format!("xacro file '{origin}' does not exist"),
                )
                .at(source.field("urdf")));
            }
            xacro::expand(&path, &robot.xacro_args, resolver)
                .map_err(|m| InputError::new(&origin, m))?
        } else {
            read_text(&path).map_err(|e| {
                InputError::new(&config.origin, format!("cannot read URDF '{origin}': {e}"))
                    .at(source.field("urdf"))
            })?
        };
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        (text, origin, dir)
    } else {
        let text = robot.urdf_string.clone().unwrap_or_default();
        (
            text,
            format!("{} ({})", config.origin, source.field("urdf_string")),
            source.base_dir.clone(),
        )
    })
}

/// A URDF (or xacro) robot, converted to MJCF.
fn load_urdf(source: &Source, patterns: &[Vec<regex::Regex>]) -> InputResult<LoadedRobot> {
    let (config, index) = (source.config, source.index);
    let robot = &config.robots[index];
    let config_actuated = |joint: &str| patterns.iter().flatten().any(|p| p.is_match(joint));
    let resolver = package_resolver(config, index)?;
    let (text, origin, urdf_dir) = urdf_text(source, &resolver)?;
    let converted = urdf::urdf_to_mjcf(
        &text,
        &UrdfOptions {
            origin: &origin,
            base_dir: &urdf_dir,
            resolver: &resolver,
            floating_base: robot.floating_base,
            strict: robot.strict,
            generate_actuators: robot.urdf_actuators,
            servo_every_joint: robot.urdf_actuators
                && robot.actuators.is_empty()
                && !robot.actuators.none,
            gains: &robot.urdf_gains,
            config_actuated: &config_actuated,
            access: source.access.as_ref(),
        },
    )?;
    // A request's URDF passes its `<mujoco>` blocks (assets, compiler folders) on to
    // MuJoCo: they are checked as a request's MJCF is.
    if let Some(access) = &source.access {
        super::request_files::check_mjcf(&converted.mjcf, &urdf_dir, access, &config.limits)
            .map_err(|e| InputError::new(&origin, e))?;
    }
    let mut spec = MjSpec::from_xml_string(&converted.mjcf).map_err(|e| {
        parse_error(
            &origin,
            format!("in the MJCF converted from this URDF: {e}"),
        )
    })?;
    spec.set_modelfiledir(&format!("{}/", urdf_dir.display()));
    for mesh in &converted.meshes {
        mesh.fill(&mut spec);
    }
    let mut warnings: Vec<String> = converted
        .repairs
        .list
        .iter()
        .map(|r| r.to_string())
        .collect();
    warnings.extend(converted.warnings.iter().cloned());
    let base = &converted.base;
    Ok(LoadedRobot {
        spec,
        origin,
        urdf: Some(converted.urdf),
        ros2_control: converted.ros2_control,
        gazebo: converted.gazebo,
        ruled_servos: converted.ruled_servos,
        warnings,
        base_rule: Some(format!(
            "{} ({})",
            if base.floating { "floating" } else { "fixed" },
            base.reason
        )),
        repairs: converted.repairs.summary(),
        actuator_rule: converted.actuator_rule,
        geometry_mass_links: converted.geometry_mass_links,
    })
}

/// ROS and the legacy protocol address joints by name; MJCF allows unnamed ones (Menagerie's
/// Go1 has an unnamed free joint). Give them stable names: `floating_base` for a free joint,
/// `joint_<index>` otherwise.
fn name_unnamed_joints(spec: &mut MjSpec) {
    let taken: Vec<String> = spec.joint_iter().map(|j| j.name().to_string()).collect();
    for (index, joint) in spec.joint_iter_mut().enumerate() {
        if !joint.name().is_empty() {
            continue;
        }
        let preferred = if joint.type_() == MjtJoint::mjJNT_FREE
            && !taken.iter().any(|t| t == urdf::FLOATING_BASE_JOINT)
        {
            urdf::FLOATING_BASE_JOINT.to_string()
        } else {
            format!("joint_{index}")
        };
        let _ = joint.set_name(&preferred);
    }
}

fn package_resolver(config: &Config, index: usize) -> InputResult<PackageResolver> {
    let robot: &RobotConfig = &config.robots[index];
    let mut resolver = PackageResolver::default();
    for (name, dir) in &robot.packages {
        let path =
            config.resolve_robot_path(index, dir, &format!("robots[{index}].packages.{name}"))?;
        resolver.explicit.insert(name.clone(), path);
    }
    for (k, dir) in robot.package_search_paths.iter().enumerate() {
        resolver.search_paths.push(config.resolve_robot_path(
            index,
            dir,
            &format!("robots[{index}].package_search_paths[{k}]"),
        )?);
    }
    Ok(resolver)
}

/// A robot from a request's text runs no program and names no package folder: xacro is a
/// program with arguments, and package folders would lead a mesh path anywhere.
fn refuse_programs(config: &Config, index: usize) -> InputResult<()> {
    let robot = &config.robots[index];
    let refused = |field: &str, why: &str| {
        Err(InputError::new(&config.origin, why.to_string()).at(format!("robots[{index}].{field}")))
    };
    if robot
        .urdf
        .as_deref()
        .is_some_and(|u| xacro::is_xacro(Path::new(u)))
    {
        return refused(
            "urdf",
            "a request's robot cannot be a xacro file (spawn it by its uri)",
        );
    }
    if !robot.xacro_args.is_empty() {
        return refused("xacro_args", "a request's robot takes no xacro arguments");
    }
    if !robot.packages.is_empty() || !robot.package_search_paths.is_empty() {
        return refused(
            "packages",
            "a request's robot names no package folders (packages are found on the ROS package paths)",
        );
    }
    Ok(())
}

/// Adds the config's actuators to the spec. An actuator the model already has on the same
/// joint is replaced, so the config has the last word.
fn apply_actuator_groups(
    spec: &mut MjSpec,
    config: &Config,
    index: usize,
    patterns: &[Vec<regex::Regex>],
) -> InputResult<()> {
    let robot = &config.robots[index];
    if robot.actuators.is_empty() {
        return Ok(());
    }
    let chosen = group_joints(spec, config, index, patterns)?;
    drop_replaced(spec, &chosen, &config.origin)?;
    let existing: Vec<String> = spec.actuator_iter().map(|a| a.name().to_string()).collect();
    for (joint, k) in chosen {
        let group: &ActuatorGroup = &robot.actuators[k];
        let name = if existing.contains(&joint) {
            format!("{joint}_actuator")
        } else {
            joint.clone()
        };
        let at = format!("robots[{index}].actuators[{k}]");
        let fail = |e: String| InputError::new(&config.origin, e).at(at.clone());
        add_actuator(spec, &joint, &name, group, fail)?;
        set_joint(spec, &joint, group);
    }
    Ok(())
}

/// The hinge and slide joints each actuator group takes, in the model's joint order: later
/// groups win over earlier ones for the same joint, and a group that matches none is an error.
fn group_joints(
    spec: &MjSpec,
    config: &Config,
    index: usize,
    patterns: &[Vec<regex::Regex>],
) -> InputResult<Vec<(String, usize)>> {
    let robot = &config.robots[index];
    let joints: Vec<(String, MjtJoint)> = spec
        .joint_iter()
        .map(|j| (j.name().to_string(), j.type_()))
        .collect();
    let mut chosen: Vec<(String, usize)> = Vec::new();
    for (k, group_patterns) in patterns.iter().enumerate() {
        let mut matched = false;
        for (name, kind) in &joints {
            if !group_patterns.iter().any(|p| p.is_match(name)) {
                continue;
            }
            if !matches!(kind, MjtJoint::mjJNT_HINGE | MjtJoint::mjJNT_SLIDE) {
                continue;
            }
            matched = true;
            chosen.retain(|(j, _)| j != name);
            chosen.push((name.clone(), k));
        }
        if !matched {
            return Err(InputError::new(
                &config.origin,
                format!(
                    "no hinge or slide joint matches {:?}; the model's joints are {:?}",
                    robot.actuators[k].joints.as_slice(),
                    joints.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()
                ),
            )
            .at(format!("robots[{index}].actuators[{k}].joints")));
        }
    }
    // Actuators in the model's joint order, whatever the order of the groups.
    chosen.sort_by_key(|(name, _)| joints.iter().position(|(j, _)| j == name));
    Ok(chosen)
}

/// Drops the actuators the model already has on the chosen joints.
fn drop_replaced(spec: &mut MjSpec, chosen: &[(String, usize)], origin: &str) -> InputResult<()> {
    let replaced: Vec<String> = spec
        .actuator_iter()
        .filter(|a| {
            a.trntype() == MjtTrn::mjTRN_JOINT && chosen.iter().any(|(j, _)| j == a.target())
        })
        .map(|a| a.name().to_string())
        .collect();
    for name in replaced {
        if let Some(actuator) = spec.actuator_mut(&name) {
            // SAFETY: the actuator belongs to this spec and no other handle to it is kept.
            unsafe { actuator.delete() }.map_err(|e| {
                InputError::new(origin, format!("cannot replace actuator '{name}': {e}"))
            })?;
        }
    }
    Ok(())
}

/// Adds actuator `name` on `joint`, of the group's kind and ranges (`fail` names the group
/// in an error).
fn add_actuator(
    spec: &mut MjSpec,
    joint: &str,
    name: &str,
    group: &ActuatorGroup,
    fail: impl Fn(String) -> InputError,
) -> InputResult<()> {
    let effort = group.effort_limit.map(|e| [-e, e]);
    let actuator = spec.add_actuator().with_trntype(MjtTrn::mjTRN_JOINT);
    actuator.set_target(joint);
    actuator.set_name(name).map_err(|e| fail(e.to_string()))?;
    match group.kind {
        ActuatorKind::Motor => {
            actuator.set_to_motor();
            if let Some(range) = group.ctrlrange.or(effort) {
                set_ctrlrange(actuator, range);
            }
        }
        ActuatorKind::Position => {
            let mut position = PositionConfig {
                kp: group.kp.unwrap_or(100.0),
                ..Default::default()
            };
            position.kv = group.kv;
            if group.ctrlrange.is_none() {
                position.inheritrange = 1.0; // ctrlrange = the joint's range, in its units
            }
            actuator
                .set_to_position(position)
                .map_err(|e| fail(e.to_string()))?;
            if let Some(range) = group.ctrlrange {
                set_ctrlrange(actuator, range);
            }
            if let Some(range) = group.forcerange.or(effort) {
                set_forcerange(actuator, range);
            }
        }
        ActuatorKind::Velocity => {
            actuator.set_to_velocity(group.kv.unwrap_or(10.0));
            if let Some(range) = group.ctrlrange {
                set_ctrlrange(actuator, range);
            }
            if let Some(range) = group.forcerange.or(effort) {
                set_forcerange(actuator, range);
            }
        }
    }
    if let Some(gear) = group.gear {
        actuator.gear_mut()[0] = gear;
    }
    Ok(())
}

/// The group's joint settings: armature, damping, friction loss.
fn set_joint(spec: &mut MjSpec, joint: &str, group: &ActuatorGroup) {
    let Some(spec_joint) = spec.joint_mut(joint) else {
        return;
    };
    if let Some(armature) = group.armature {
        spec_joint.set_armature(armature);
    }
    if let Some(damping) = group.damping {
        spec_joint.damping_mut()[0] = damping;
    }
    if let Some(frictionloss) = group.frictionloss {
        spec_joint.set_frictionloss(frictionloss);
    }
}

fn set_ctrlrange(actuator: &mut MjsActuator, range: [f64; 2]) {
    *actuator.ctrlrange_mut() = range;
    actuator.set_ctrllimited(MjtLimited::mjLIMITED_TRUE);
}

fn set_forcerange(actuator: &mut MjsActuator, range: [f64; 2]) {
    *actuator.forcerange_mut() = range;
    actuator.set_forcelimited(MjtLimited::mjLIMITED_TRUE);
}
