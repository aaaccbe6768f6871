//! Model loading and composition: every robot of the config becomes an `MjSpec`, attached to
//! one world under its name prefix at its configured pose, compiled once into the `MjModel`
//! the physics thread steps. Name maps tell, per robot, which MuJoCo ids are its own.
pub mod asset_cache;
mod cameras;
mod declared_bases;
mod declared_gazebo;
pub mod declared_sensors;
pub mod export;
pub mod gains;
mod names;
pub mod notes;
pub mod point_sensors;
pub mod pose;
mod request_files;
mod robot_spec;
pub mod sensors;
mod summary;
pub mod urdf;
mod xacro;
pub mod xml;

pub use names::{NamedId, RobotMap};
pub use summary::summary;

use crate::config::controllers::ControllersFile;
use crate::config::gz_bridge;
use crate::config::{Config, RobotConfig, full_match_regex};
use crate::error::{InputError, InputResult};
use mujoco_rs::prelude::*;
use nalgebra::{UnitQuaternion, Vector3};
use robot_spec::{LoadedRobot, load_robot};
use std::fmt::Write;
use std::sync::{Arc, Once};

/// The compiled world and what belongs to whom.
pub struct World {
    pub model: Arc<MjModel>,
    pub robots: Vec<RobotMap>,
    /// Every robot's control settings, from which the simulation builds its controllers.
    pub controls: Vec<crate::config::ControlConfig>,
    /// The config the world came from (what errors about it name).
    pub origin: String,
    /// That config, which a spawn or a delete edits to make the next world.
    pub config: Config,
    /// Which cameras render and which lidars cast, each at its slot.
    pub sensors: Arc<sensors::SensorPlan>,
    /// The ros2_control controllers each robot's config declares (`controllers: FILE`).
    pub declared_controllers: Vec<Option<Arc<ControllersFile>>>,
    /// Whether each of their sensor broadcasters is active.
    pub broadcaster_gates: Arc<declared_sensors::BroadcasterGates>,
    /// Non-fatal findings (skipped meshes, ignored fields), already logged.
    pub warnings: Vec<String>,
}

static MUJOCO_INIT: Once = Once::new();

/// Routes MuJoCo's messages to the `log` crate (instead of stdout and MUJOCO_LOG.TXT; its
/// timings at debug, see `logging::mujoco_message`) and
/// loads the plugins that ship with the MuJoCo wheel. Runs once per process.
pub fn init_mujoco() {
    MUJOCO_INIT.call_once(|| {
        // SAFETY: inside call_once no other thread of this program is using MuJoCo yet: every
        // entry point that loads a model calls this first.
        unsafe { mujoco_rs::logging::set_log_handler(crate::logging::mujoco_message) };
        asset_cache::keep_none();
        let dir = std::env::var("MUJOCO_PLUGIN_DIR")
            .unwrap_or_else(|_| env!("MUJOCO_BRIDGE_PLUGIN_DIR").to_string());
        if std::path::Path::new(&dir).is_dir() {
            if let Ok(c_dir) = std::ffi::CString::new(dir.clone()) {
                // SAFETY: a valid NUL-terminated path and no callback.
                unsafe { mujoco_rs::mujoco_c::mj_loadAllPluginLibraries(c_dir.as_ptr(), None) };
            }
        } else {
            log::warn!(
                "MuJoCo plugin folder '{dir}' not found; models using plugins will not load"
            );
        }
    });
}

/// Placement of a robot as a MuJoCo quaternion (w, x, y, z) from roll, pitch, yaw.
fn quat_wxyz(rpy: &[f64; 3]) -> [f64; 4] {
    pose::wxyz(&UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]))
}

/// The world around the robots: placement frames, and the floor and light the config asks for.
fn world_xml(config: &Config) -> String {
    let mut xml = String::from("<mujoco model=\"mujoco_bridge\">\n<compiler angle=\"radian\"/>\n");
    xml.push_str("<visual><headlight ambient=\"0.3 0.3 0.3\"/></visual>\n<worldbody>\n");
    if config.world.floor {
        xml.push_str(
            "<geom name=\"floor\" type=\"plane\" size=\"0 0 0.05\" rgba=\"0.8 0.8 0.8 1\"/>\n",
        );
    }
    if config.world.light {
        xml.push_str("<light name=\"sun\" pos=\"0 0 5\" dir=\"0 0 -1\" directional=\"true\"/>\n");
    }
    for robot in &config.robots {
        let q = quat_wxyz(&robot.pose.rpy);
        let p = robot.pose.xyz;
        let _ = writeln!(
            xml,
            "<frame name=\"{}_placement\" pos=\"{} {} {}\" quat=\"{} {} {} {}\"/>",
            robot.name, p[0], p[1], p[2], q[0], q[1], q[2], q[3]
        );
    }
    xml.push_str("</worldbody>\n</mujoco>\n");
    xml
}

pub fn prefix_of(robot_name: &str) -> String {
    format!("{robot_name}_")
}

/// MuJoCo's compiler refused a model; its message, on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CompileError(pub String);

fn compile(spec: &mut MjSpec) -> Result<MjModel, CompileError> {
    spec.compile()
        .map_err(|e| CompileError(robot_spec::one_line(&e.to_string())))
}

/// Loads, composes and compiles every robot of the config.
pub fn build_world(config: &Config) -> InputResult<World> {
    build(config, None).map(|(world, _)| world)
}

/// The world of `config` and the spec it was compiled from, its robots' asset files copied
/// where `assets` says (for `--export-mjcf`).
fn build_for_export(config: &Config, assets: &export::AssetCopy) -> InputResult<(World, MjSpec)> {
    let (world, spec) = build(config, Some(assets))?;
    let spec = spec.ok_or_else(|| InputError::new(&config.origin, "internal: no spec kept"))?;
    Ok((world, spec))
}

/// The robots of a world as loaded and attached, what their loading warned of, and the
/// largest arena a robot's model asks for.
struct Attached {
    /// Each robot as loaded (its spec attached to the world): origin, URDF text and load
    /// notes go to its name map after compiling.
    robots_loaded: Vec<LoadedRobot>,
    /// Each robot's config with what its URDF's `<gazebo>` sensors add.
    robot_configs: Vec<RobotConfig>,
    warnings: Vec<String>,
    /// `<size memory>` in bytes, -1 when none asks: a floor, never a ceiling (see
    /// `compile_sized`).
    asked_memory: i64,
}

/// Robot `index`'s ros_gz_bridge file (`gazebo_bridge`), applied to its `<gazebo>` topics.
fn carry_bridge_file(
    config: &Config,
    index: usize,
    gazebo: &mut urdf::GazeboSensors,
) -> InputResult<()> {
    let Some(raw) = &config.robots[index].gazebo_bridge else {
        return Ok(());
    };
    let field = format!("robots[{index}].gazebo_bridge");
    let path = config.resolve_robot_path(index, raw, &field)?;
    let file = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        InputError::new(&config.origin, format!("cannot read {file}: {e}")).at(field)
    })?;
    let topics = gz_bridge::parse(&text).map_err(|why| InputError::new(&file, why))?;
    gazebo.carry(&topics, &file);
    Ok(())
}

/// Loads each robot of `config` and attaches it to `world` at its placement frame.
fn attach_robots(
    config: &Config,
    world: &mut MjSpec,
    export: Option<&export::AssetCopy>,
) -> InputResult<Attached> {
    let mut warnings = Vec::new();
    let mut robots_loaded = Vec::new();
    let mut robot_configs = Vec::new();
    let mut asked_memory = -1;
    for index in 0..config.robots.len() {
        let mut loaded = load_robot(config, index)?;
        carry_bridge_file(config, index, &mut loaded.gazebo)?;
        declared_gazebo::report(&loaded.gazebo, &loaded.origin);
        let mounted = declared_gazebo::mount(&loaded.gazebo, &mut loaded.spec, &loaded.origin);
        let robot = declared_gazebo::with_sensors(
            &config.robots[index],
            &loaded.gazebo,
            &mounted,
            &loaded.origin,
        );
        cameras::mount(
            robot.listed_cameras(),
            &mut loaded.spec,
            &config.origin,
            index,
        )?;
        point_sensors::mount(&robot, &mut loaded.spec, &config.origin, index)?;
        robot_configs.push(robot);
        if let Some(assets) = export {
            assets.take(&mut loaded.spec, &config.robots[index].name)?;
        }
        if index == 0 {
            // Physics options (timestep, integrator, solver) come from the first robot's model.
            *world.option_mut() = loaded.spec.option().clone();
            *world.visual_mut() = loaded.spec.visual().clone();
        }
        asked_memory = asked_memory.max(loaded.spec.memory());
        let name = &config.robots[index].name;
        let frame = world
            .frame_mut(&format!("{name}_placement"))
            .ok_or_else(|| InputError::new(&config.origin, "internal: placement frame missing"))?;
        frame
            .attach_by_deep_copy(&mut loaded.spec, &prefix_of(name), "")
            .map_err(|e| {
                InputError::new(&loaded.origin, format!("cannot attach to the world: {e}"))
                    .at(format!("robots[{index}]"))
            })?;
        for warning in &loaded.warnings {
            notes::warn(&format!("{}: {warning}", loaded.origin));
        }
        if let Some(rule) = &loaded.base_rule {
            notes::note(&format!("{}: base: {rule}", loaded.origin));
        }
        if let Some(rule) = &loaded.actuator_rule {
            notes::note(&format!("{}: actuators: {rule}", loaded.origin));
        }
        if let Some(repairs) = &loaded.repairs {
            notes::warn(&format!("{}: {repairs}", loaded.origin));
        }
        warnings.extend(
            loaded
                .warnings
                .iter()
                .map(|w| format!("{}: {w}", loaded.origin)),
        );
        robots_loaded.push(loaded);
    }
    Ok(Attached {
        robots_loaded,
        robot_configs,
        warnings,
        asked_memory,
    })
}

/// Compiles `world`; the compiler sizes the arena for the whole world, and a robot's
/// `<size memory>` may only raise it. Taken as the world's size, one small request
/// (`memory="8K"`) would starve every other robot, and MuJoCo ends the process when its
/// stack runs out.
fn compile_sized(
    config: &Config,
    world: &mut MjSpec,
    robots_loaded: &[LoadedRobot],
    asked_memory: i64,
) -> InputResult<MjModel> {
    let model = compile(world).map_err(|m| attribute_compile_error(config, robots_loaded, m))?;
    if asked_memory <= model.ffi().narena {
        return Ok(model);
    }
    world.set_memory(asked_memory);
    compile(world).map_err(|m| attribute_compile_error(config, robots_loaded, m))
}

/// Sets the servo gains each robot's rule gives, noting them; what each robot got, in words.
fn apply_servo_gains(
    config: &Config,
    model: &mut MjModel,
    robots_loaded: &[LoadedRobot],
) -> Vec<Option<String>> {
    config
        .robots
        .iter()
        .zip(robots_loaded)
        .map(|(robot, loaded)| {
            let ruled = gains::apply(model, &prefix_of(&robot.name), &loaded.ruled_servos);
            for beyond in &ruled.beyond_bound {
                notes::warn(&format!("{}: {beyond}", loaded.origin));
            }
            let set = ruled.set;
            if let Some(set) = &set {
                notes::note(&format!(
                    "{}: servo gains (by rule where urdf_gains leaves them out: {} Hz, critically damped, stable together): {set}",
                    loaded.origin,
                    gains::BANDWIDTH_HZ
                ));
            }
            set
        })
        .collect()
}

/// Each robot's name map in the compiled model, with what its loading found.
fn robot_maps(
    config: &Config,
    model: &MjModel,
    robots_loaded: Vec<LoadedRobot>,
    servo_gains: Vec<Option<String>>,
) -> Vec<RobotMap> {
    config
        .robots
        .iter()
        .zip(robots_loaded)
        .zip(servo_gains)
        .map(|((robot, loaded), servo_gains)| {
            let prefix = prefix_of(&robot.name);
            let mut map = RobotMap::build(model, &robot.name, &prefix, loaded.origin, loaded.urdf);
            map.actions = robot.zmq.actions;
            map.base_rule = loaded.base_rule;
            map.actuator_rule = loaded.actuator_rule;
            map.servo_gains = servo_gains;
            map.repairs = loaded.repairs;
            map.hardware_sensors = loaded.ros2_control.sensors;
            map.gazebo = loaded.gazebo.lines();
            map
        })
        .collect()
}

/// The world of `config`; with `export`, also its spec (and the robots' asset files copied).
fn build(
    config: &Config,
    export: Option<&export::AssetCopy>,
) -> InputResult<(World, Option<MjSpec>)> {
    init_mujoco();
    let mut world = MjSpec::from_xml_string(&world_xml(config))
        .map_err(|e| InputError::new(&config.origin, format!("internal world model: {e}")))?;
    if let Some(assets) = export {
        // The robots' copied files are named relative to the export's folder.
        world.set_modelfiledir(&format!("{}/", assets.dir().display()));
    }
    let Attached {
        robots_loaded,
        robot_configs,
        warnings,
        asked_memory,
    } = attach_robots(config, &mut world, export)?;
    if let Some(ts) = config.world.timestep {
        world.option_mut().timestep = ts;
    }
    if let Some(g) = config.world.gravity {
        world.option_mut().gravity = g;
    }
    // One thread: the compiler's worker threads leave what they allocated for meshes in
    // malloc arenas of their own, which the allocator keeps for the rest of the run (Go1: 28 MB
    // resident); compiling on one thread took 287 ms against 326 ms with them here (2 cores).
    world.compiler_mut().set_usethread(false);
    // The world's own config: with what the robots' files give (initial positions here,
    // bases and sensor topics below).
    let mut world_config = config.clone();
    world_config.robots = robot_configs;
    for (robot, loaded) in world_config.robots.iter_mut().zip(&robots_loaded) {
        add_initial_keyframe(robot, &loaded.ros2_control.initial_positions);
        robot.control.remappings = loaded.ros2_control.remappings.clone();
    }
    // Named now, filled in once the compiled model says where each joint lies: one compile
    // less (meshes are processed again at each; Go1 builds in half the time).
    declare_config_keyframes(&world_config, &mut world)?;
    let mut model = compile_sized(config, &mut world, &robots_loaded, asked_memory)?;
    log_geometry_masses(config, &model, &robots_loaded);
    check_ranges(config, &model)?;
    fill_config_keyframes(&world_config, &mut world, &mut model)?;
    // Gains the rule gives are set last: a compile would put back the placeholders.
    let servo_gains = apply_servo_gains(config, &mut model, &robots_loaded);
    let declared_controllers: Vec<_> = robots_loaded
        .iter()
        .enumerate()
        .map(|(index, loaded)| {
            declared_controllers(
                config,
                index,
                loaded.ros2_control.controllers_file.as_deref(),
            )
        })
        .collect::<InputResult<_>>()?;
    let robots = robot_maps(config, &model, robots_loaded, servo_gains);
    for (robot, file) in world_config.robots.iter_mut().zip(&declared_controllers) {
        robot.control.update_rate = file.as_ref().and_then(|f| f.update_rate);
    }
    declared_bases::apply(&mut world_config, &model, &robots, &declared_controllers);
    declared_sensors::apply(&mut world_config, &model, &robots, &declared_controllers);
    let broadcaster_gates = Arc::new(declared_sensors::BroadcasterGates::of(&world_config));
    let sensors = sensors::SensorPlan::of(&model, &robots, &world_config)
        .map_err(|e| InputError::new(&config.origin, e.to_string()))?;
    check_caps(config, &model, &sensors)?;
    // A diverging step is answered by the physics thread (`sim.on_divergence`), not by
    // MuJoCo resetting the whole world.
    model.opt_mut().disableflags |= MjtDisableBit::mjDSBL_AUTORESET as i32;
    let model = Arc::new(model);
    // What compiling took (the specs, parsed meshes) goes back to the system, not held by the
    // allocator for the rest of the run.
    let kept = export.map(|_| world);
    crate::census::return_freed_memory();
    let world = World {
        model,
        robots,
        controls: world_config
            .robots
            .iter()
            .map(|r| r.control.clone())
            .collect(),
        declared_controllers,
        broadcaster_gates,
        origin: config.origin.clone(),
        config: world_config,
        sensors: Arc::new(sensors),
        warnings,
    };
    Ok((world, kept))
}

/// The ros2_control controllers robot `index` declares, read at load: its config's
/// `controllers: FILE`, else the file its URDF gives a simulator's ros2_control plugin (as
/// a gz_ros2_control bringup does). A wrong file is refused with its name and the field.
fn declared_controllers(
    config: &Config,
    index: usize,
    plugin_file: Option<&str>,
) -> InputResult<Option<Arc<ControllersFile>>> {
    let robot = &config.robots[index];
    let (raw, field) = match (&robot.controllers, plugin_file) {
        (Some(raw), _) => (raw.as_str(), format!("robots[{index}].controllers")),
        // A request's robot reads no file its URDF names.
        (None, Some(raw)) if !robot.from_request => {
            (raw, "<gazebo><plugin><parameters>".to_string())
        }
        _ => return Ok(None),
    };
    if robot.from_request {
        return Err(InputError::new(
            &config.origin,
            "a request's robot names no controllers file",
        )
        .at(field));
    }
    let path = config.resolve_path(raw, &field)?;
    let file =
        ControllersFile::read(&path).map_err(|e| InputError::new(path.display().to_string(), e))?;
    if robot.controllers.is_none() {
        notes::note(&format!(
            "robot '{}': controllers from {} (its URDF's ros2_control plugin names it)",
            robot.name,
            path.display()
        ));
    }
    Ok(Some(Arc::new(file)))
}

/// Refuses a world beyond what `limits` lets one world hold: pixels over every camera that
/// renders, texture pixels over every texture, rays over every lidar.
fn check_caps(config: &Config, model: &MjModel, sensors: &sensors::SensorPlan) -> InputResult<()> {
    let limits = &config.limits;
    let camera_pixels = sensors.camera_pixels();
    let lidar_rays = sensors.lidar_rays();
    let texture_pixels: u64 = model
        .tex_width()
        .iter()
        .zip(model.tex_height())
        .map(|(w, h)| (*w).max(0) as u64 * (*h).max(0) as u64)
        .sum();
    let caps = [
        (
            "camera_pixels",
            "pixels over its cameras",
            camera_pixels,
            limits.camera_pixels,
        ),
        (
            "texture_pixels",
            "texture pixels",
            texture_pixels,
            limits.texture_pixels,
        ),
        (
            "lidar_rays",
            "lidar rays per scan",
            lidar_rays,
            limits.lidar_rays,
        ),
    ];
    for (field, what, value, cap) in caps {
        if value > cap {
            return Err(InputError::new(
                &config.origin,
                format!("the world holds {value} {what}, more than limits.{field} ({cap})"),
            ));
        }
    }
    Ok(())
}

/// Refuses ranges MuJoCo compiles with a warning but no number can be kept within: NaN
/// bounds, or a lower bound above the upper (control clamps them every step).
fn check_ranges(config: &Config, model: &MjModel) -> InputResult<()> {
    let bad =
        |[lo, hi]: [f64; 2], limited: bool| lo.is_nan() || hi.is_nan() || (limited && lo > hi);
    // (attribute, element kind, ranges, whether each is limited)
    type Ranges<'a> = (&'a str, MjtObjBase, &'a [[f64; 2]], &'a [bool]);
    let ranges: [Ranges; 5] = [
        (
            "ctrlrange",
            MjtObjBase::mjOBJ_ACTUATOR,
            model.actuator_ctrlrange(),
            model.actuator_ctrllimited(),
        ),
        (
            "forcerange",
            MjtObjBase::mjOBJ_ACTUATOR,
            model.actuator_forcerange(),
            model.actuator_forcelimited(),
        ),
        (
            "actrange",
            MjtObjBase::mjOBJ_ACTUATOR,
            model.actuator_actrange(),
            model.actuator_actlimited(),
        ),
        (
            "range",
            MjtObjBase::mjOBJ_JOINT,
            model.jnt_range(),
            model.jnt_limited(),
        ),
        (
            "range",
            MjtObjBase::mjOBJ_TENDON,
            model.tendon_range(),
            model.tendon_limited(),
        ),
    ];
    for (attribute, kind, values, limited) in ranges {
        for (id, range) in values.iter().enumerate() {
            // NaN is refused even where the range is not in use: a config's actuator group
            // may turn the limit on.
            if bad(*range, limited.get(id) == Some(&true)) {
                let name = model.id_to_name(kind, id).unwrap_or("(unnamed)");
                return Err(InputError::new(
                    &config.origin,
                    format!(
                        "{} '{name}': {attribute} [{}, {}] is not a range (NaN, or lower above upper)",
                        match kind {
                            MjtObjBase::mjOBJ_ACTUATOR => "actuator",
                            MjtObjBase::mjOBJ_JOINT => "joint",
                            _ => "tendon",
                        },
                        range[0],
                        range[1]
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The repair that gave massless moving links the mass of their collision geometry says
/// "logged after compiling": here are the values.
fn log_geometry_masses(config: &Config, model: &MjModel, loaded: &[LoadedRobot]) {
    for (loaded, robot) in loaded.iter().zip(&config.robots) {
        let origin = &loaded.origin;
        for link in &loaded.geometry_mass_links {
            let full = format!("{}{link}", prefix_of(&robot.name));
            if let Some(id) = model.name_to_id(MjtObjBase::mjOBJ_BODY, &full) {
                let i = model.body_inertia()[id];
                log::warn!(
                    "{origin}: link '{link}': mass from its collision geometry: {} kg, \
                     principal inertia [{:.4e}, {:.4e}, {:.4e}] kg m^2",
                    model.body_mass()[id],
                    i[0],
                    i[1],
                    i[2]
                );
            }
        }
    }
}

/// A compile error of the composed world names MuJoCo's element; find the robot it came from
/// by compiling each robot alone (only on this error path).
fn attribute_compile_error(
    config: &Config,
    loaded: &[LoadedRobot],
    message: CompileError,
) -> InputError {
    for (index, origin) in loaded.iter().map(|l| &l.origin).enumerate() {
        if let Ok(mut loaded) = load_robot(config, index)
            && let Err(own) = compile(&mut loaded.spec)
        {
            return InputError::new(origin, own).at(format!("robots[{index}]"));
        }
    }
    InputError::new(&config.origin, format!("compiling the world: {message}"))
}

/// The keyframe a robot starts at (at start, after a reset, when a world change adds it):
/// MuJoCo's `{robot}_ros2_control_initial`.
pub const INITIAL_KEYFRAME: &str = "ros2_control_initial";

/// Adds to `robot`'s keyframes the one it starts at, from the `<ros2_control>` initial
/// positions of its URDF, unless its config names one so.
fn add_initial_keyframe(robot: &mut crate::config::RobotConfig, positions: &[(String, f64)]) {
    if positions.is_empty() || robot.keyframes.contains_key(INITIAL_KEYFRAME) {
        return;
    }
    let joints = positions
        .iter()
        .map(|(joint, value)| (regex::escape(joint), *value))
        .collect();
    robot.keyframes.insert(
        INITIAL_KEYFRAME.to_string(),
        crate::config::KeyframeConfig {
            joints,
            ..Default::default()
        },
    );
}

/// The joint actuator `id` of `model` holds at a position (a position servo: an affine
/// bias with a position term), if it is one.
pub(crate) fn position_servo_joint(model: &MjModel, id: usize) -> Option<usize> {
    let joint = model.actuator_trnid()[id][0];
    let servo = model.actuator_biastype()[id] == MjtBias::mjBIAS_AFFINE
        && model.actuator_biasprm()[id][1] != 0.0;
    (servo && model.actuator_trntype()[id] == MjtTrn::mjTRN_JOINT && joint >= 0)
        .then_some(joint as usize)
}

/// The MuJoCo keyframe a config keyframe becomes.
fn config_keyframe_name(robot: &str, key: &str) -> String {
    format!("{}{key}", prefix_of(robot))
}

/// Adds an empty MuJoCo keyframe `{robot}_{key}` per keyframe of the config, for
/// `fill_config_keyframes` to fill after compiling.
fn declare_config_keyframes(config: &Config, world: &mut MjSpec) -> InputResult<()> {
    for (index, robot) in config.robots.iter().enumerate() {
        for key in robot.keyframes.keys() {
            let name = config_keyframe_name(&robot.name, key);
            world.add_key().set_name(&name).map_err(|e| {
                InputError::new(&config.origin, e.to_string())
                    .at(format!("robots[{index}].keyframes.{key}"))
            })?;
        }
    }
    Ok(())
}

/// Fills the config's keyframes, in the spec and in its compiled `model`: qpos0 with the
/// robot's joints set, and position actuators' ctrl equal to their joint's target so that
/// nothing pulls the robot away from the keyframe.
fn fill_config_keyframes(
    config: &Config,
    world: &mut MjSpec,
    model: &mut MjModel,
) -> InputResult<()> {
    for (index, robot) in config.robots.iter().enumerate() {
        if robot.keyframes.is_empty() {
            continue;
        }
        let map = RobotMap::build(
            model,
            &robot.name,
            &prefix_of(&robot.name),
            String::new(),
            None,
        );
        for (key, frame) in &robot.keyframes {
            let at = format!("robots[{index}].keyframes.{key}");
            let mut qpos: Vec<f64> = model.qpos0().to_vec();
            if frame.base_xyz.is_some() || frame.base_rpy.is_some() {
                let Some(free) = map.floating_joint else {
                    return Err(InputError::new(
                        &config.origin,
                        "base_xyz / base_rpy need a robot with a floating base",
                    )
                    .at(at));
                };
                let adr = model.jnt_qposadr()[free] as usize;
                let placement_q = UnitQuaternion::from_euler_angles(
                    robot.pose.rpy[0],
                    robot.pose.rpy[1],
                    robot.pose.rpy[2],
                );
                let placement_p = Vector3::from(robot.pose.xyz);
                if let Some(xyz) = frame.base_xyz {
                    let p = placement_p + placement_q * Vector3::from(xyz);
                    qpos[adr..adr + 3].copy_from_slice(p.as_slice());
                }
                if let Some(rpy) = frame.base_rpy {
                    let q = placement_q * UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]);
                    qpos[adr + 3..adr + 7].copy_from_slice(&pose::wxyz(&q));
                }
            }
            for (pattern, value) in &frame.joints {
                let regex = full_match_regex(pattern)
                    .map_err(|m| InputError::new(&config.origin, m).at(at.clone()))?;
                let mut matched = false;
                for joint in &map.joints {
                    let kind = model.jnt_type()[joint.id];
                    if regex.is_match(&joint.name)
                        && matches!(kind, MjtJoint::mjJNT_HINGE | MjtJoint::mjJNT_SLIDE)
                    {
                        qpos[model.jnt_qposadr()[joint.id] as usize] = *value;
                        matched = true;
                    }
                }
                if !matched {
                    return Err(InputError::new(
                        &config.origin,
                        format!("no hinge or slide joint matches '{pattern}'"),
                    )
                    .at(format!("{at}.joints")));
                }
            }
            let mut ctrl = vec![0.0; model.nu() as usize];
            for (id, value) in ctrl.iter_mut().enumerate() {
                if let Some(joint) = position_servo_joint(model, id) {
                    *value = qpos[model.jnt_qposadr()[joint] as usize];
                }
            }
            let name = config_keyframe_name(&robot.name, key);
            let declared = world
                .key_mut(&name)
                .zip(model.name_to_id(MjtObjBase::mjOBJ_KEY, &name));
            let Some((mjs_key, id)) = declared else {
                return Err(
                    InputError::new(&config.origin, "internal: keyframe not declared").at(at),
                );
            };
            mjs_key.set_qpos(&qpos);
            mjs_key.set_ctrl(&ctrl);
            let (nq, nu) = (qpos.len(), ctrl.len());
            model.key_qpos_mut()[id * nq..(id + 1) * nq].copy_from_slice(&qpos);
            model.key_ctrl_mut()[id * nu..(id + 1) * nu].copy_from_slice(&ctrl);
        }
    }
    Ok(())
}
