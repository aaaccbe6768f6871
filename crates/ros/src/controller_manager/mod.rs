//! ros2_control's controller manager, as its `spawner` and `ros2 control` verbs talk to it:
//! the services `controller_manager/{list_controllers, list_controller_types,
//! list_hardware_components, list_hardware_interfaces, load_controller,
//! configure_controller, cleanup_controller, switch_controller, unload_controller,
//! reload_controller_libraries, set_hardware_component_state}` in the node's namespace. The controllers it can load are
//! those the robots' controllers files declare (`controllers: FILE`); each runs as its type
//! says (`kinds.rs`) on the robot that declared it. A request it refuses answers `ok: false`
//! and logs why, as upstream does.
//!
//! A forward command controller's `~/commands` subscription is made with its robot's tasks
//! (a service answer cannot make one) and acts only while the controller is active.
pub mod published;

use super::actions::Managed;
use super::gripper::ManagedGripper;
pub use super::slot::Slot;
use crate::config::ControlSource;
use crate::config::controllers::{ControllersFile, DeclaredController};
use crate::controllers::kinds::{self, Kind};
use crate::controllers::lifecycle::{ConfigureError, Lifecycle, Refusal, State, Strictness};
use crate::messages::controller_manager_msgs::msg::{
    ControllerState, HardwareComponentState, HardwareInterface,
};
use crate::messages::controller_manager_msgs::srv::{
    CleanupController, ConfigureController, ListControllerTypes, ListControllers,
    ListHardwareComponents, ListHardwareInterfaces, LoadController, ReloadControllerLibraries,
    SetHardwareComponentState, SwitchController, UnloadController,
};
use crate::messages::lifecycle_msgs::msg::State as LifecycleState;
use crate::messages::rcl_interfaces::msg::{
    ListParametersResult, Parameter, ParameterDescriptor, ParameterValue, SetParametersResult,
    parameter_type,
};
use crate::messages::rcl_interfaces::srv::{
    DescribeParameters, GetParameterTypes, GetParameters, ListParameters, SetParameters,
    SetParametersAtomically,
};
use crate::messages::std_msgs::msg::Float64MultiArray;
use crate::sim::{SimHandle, WorldGeneration};
use crate::topics::Qos;
use futures::StreamExt;
use futures::executor::LocalSpawner;
use indexmap::IndexMap;
use std::cell::RefCell;
use std::rc::Rc;

/// The manager, shared by its services and the robots' controller tasks on the node's thread.
pub type Manager = Rc<RefCell<ManagerState>>;

/// Where the services are, relative to the node's namespace (ros2_control_node's name).
const PREFIX: &str = "controller_manager";

/// A controller a robot's file declares.
#[derive(Clone)]
struct Declared {
    robot: String,
    controller: DeclaredController,
    slot: Rc<Slot>,
}

/// A loaded controller: its robot, kind and parameters, and its task's slot.
#[derive(Clone)]
struct Running {
    robot: String,
    kind: Kind,
    declared: DeclaredController,
    slot: Rc<Slot>,
}

/// What the manager's parameters say of a controller before it is loaded (the spawner's
/// `-p FILE` sets `<name>.type` and `<name>.params_file`).
#[derive(Default)]
struct Parameters {
    type_name: Option<String>,
    params_files: Vec<String>,
}

pub struct ManagerState {
    declared: IndexMap<String, Declared>,
    /// Controllers declared through the manager's parameters, on the first robot.
    by_parameters: IndexMap<String, Declared>,
    parameters: IndexMap<String, Parameters>,
    /// Controllers declared since the node last started tasks, whose tasks it must start.
    added: Vec<String>,
    lifecycle: Lifecycle<Running>,
    update_rate: u16,
    /// The world the declarations are of.
    world: Option<std::sync::Arc<WorldGeneration>>,
}

impl ManagerState {
    pub fn new() -> Manager {
        Rc::new(RefCell::new(Self {
            declared: IndexMap::new(),
            by_parameters: IndexMap::new(),
            parameters: IndexMap::new(),
            added: Vec::new(),
            lifecycle: Lifecycle::default(),
            update_rate: 0,
            world: None,
        }))
    }

    /// Takes the declarations of `world`'s robots; a controller whose robot is gone goes
    /// too. A robot that stays keeps its controllers and their states.
    pub fn follow(&mut self, world: &std::sync::Arc<WorldGeneration>) {
        let mut declared = IndexMap::new();
        let mut rate = 0.0f64;
        for (map, file) in world.robots.iter().zip(&world.declared_controllers) {
            let Some(file) = file else { continue };
            rate = rate.max(file.update_rate.unwrap_or(0.0));
            for (name, controller) in &file.controllers {
                if declared.contains_key(name) {
                    log::error!(
                        "{}: controller '{name}' is declared by another robot already; this one is left out",
                        file.origin
                    );
                    continue;
                }
                let slot = match self.declared.get(name) {
                    Some(old) if old.robot == map.name => old.slot.clone(),
                    _ => Rc::default(),
                };
                declared.insert(
                    name.clone(),
                    Declared {
                        robot: map.name.clone(),
                        controller: controller.clone(),
                        slot,
                    },
                );
            }
        }
        let robots: Vec<&str> = world.robots.iter().map(|r| r.name.as_str()).collect();
        self.by_parameters
            .retain(|_, d| robots.contains(&d.robot.as_str()));
        for (name, by_parameters) in &self.by_parameters {
            if !declared.contains_key(name) {
                declared.insert(name.clone(), by_parameters.clone());
            }
        }
        for gone in self
            .lifecycle
            .drop_where(|r| !robots.contains(&r.robot.as_str()))
        {
            gone.slot.set_active(false);
        }
        self.declared = declared;
        self.update_rate = rate.min(u16::MAX as f64) as u16;
        self.world = Some(world.clone());
        self.open_active_broadcasters();
    }

    /// Lets the world's sensor broadcaster topics publish while, and only while, their
    /// broadcaster is active.
    fn open_active_broadcasters(&self) {
        if let Some(world) = &self.world {
            world.broadcaster_gates.set(|name| {
                self.lifecycle
                    .iter()
                    .any(|(loaded, l)| loaded == name && l.state == State::Active)
            });
        }
    }

    /// Takes the manager's parameters `<controller>.type` and `<controller>.params_file`
    /// (what the spawner's `-p FILE` sets before it loads the controller).
    fn set_parameter(&mut self, parameter: &Parameter) -> SetParametersResult {
        let answer = |successful: bool, reason: &str| SetParametersResult {
            successful,
            reason: reason.into(),
        };
        let Some((controller, field)) = parameter.name.rsplit_once('.') else {
            return answer(
                false,
                "the controller manager takes <controller>.type and <controller>.params_file",
            );
        };
        let value = &parameter.value;
        let entry = self.parameters.entry(controller.to_string()).or_default();
        match (field, value.type_) {
            ("type", parameter_type::STRING) => {
                entry.type_name = Some(value.string_value.clone());
                answer(true, "")
            }
            ("params_file", parameter_type::STRING_ARRAY) => {
                entry.params_files.clone_from(&value.string_array_value);
                answer(true, "")
            }
            ("params_file", parameter_type::STRING) => {
                entry.params_files = vec![value.string_value.clone()];
                answer(true, "")
            }
            ("type" | "params_file", _) => {
                answer(false, "needs a string (params_file: or a string array)")
            }
            // Taken and not used: no controller falls back or runs as a node of its own here.
            ("fallback_controllers" | "node_options_args", _) => {
                answer(true, "not used by this controller manager")
            }
            _ => answer(
                false,
                "the controller manager takes <controller>.type and <controller>.params_file",
            ),
        }
    }

    /// Declares controller `name` from the manager's parameters, on the first robot, with
    /// its parameters from the params files they name.
    fn declare_from_parameters(&mut self, name: &str) -> Result<(), Refusal> {
        let Some(parameters) = self.parameters.get(name) else {
            return Err(Refusal::NotDeclared(name.to_string()));
        };
        let type_name = parameters
            .type_name
            .clone()
            .ok_or_else(|| Refusal::NoType(name.to_string()))?;
        let mut params = serde_json::Map::new();
        for file in &parameters.params_files {
            let own = ControllersFile::node_params_of(std::path::Path::new(file), name).map_err(
                |error| Refusal::ParamsFile {
                    file: file.clone(),
                    error,
                },
            )?;
            params.extend(own.unwrap_or_default());
        }
        let robot = self
            .world
            .as_ref()
            .and_then(|w| w.robots.first())
            .map(|r| r.name.clone())
            .ok_or(Refusal::NoRobot)?;
        let declared = Declared {
            robot,
            controller: DeclaredController::new(type_name, params),
            slot: Rc::default(),
        };
        self.by_parameters
            .insert(name.to_string(), declared.clone());
        self.declared.insert(name.to_string(), declared);
        self.added.push(name.to_string());
        Ok(())
    }

    /// The manager's parameters: `update_rate`, and each controller's `type` and
    /// `params_file` (those of its file's declaration, or set through the parameters).
    fn parameter_values(&self) -> Vec<(String, ParameterValue)> {
        let text = |value: &str| ParameterValue {
            type_: parameter_type::STRING,
            string_value: value.into(),
            ..Default::default()
        };
        let mut values = vec![(
            "update_rate".to_string(),
            ParameterValue {
                type_: parameter_type::INTEGER,
                integer_value: self.update_rate as i64,
                ..Default::default()
            },
        )];
        for (name, declared) in &self.declared {
            values.push((format!("{name}.type"), text(&declared.controller.type_name)));
        }
        for (name, set) in &self.parameters {
            if let Some(type_name) = set
                .type_name
                .as_deref()
                .filter(|_| !self.declared.contains_key(name))
            {
                values.push((format!("{name}.type"), text(type_name)));
            }
            if !set.params_files.is_empty() {
                let files = ParameterValue {
                    type_: parameter_type::STRING_ARRAY,
                    string_array_value: set.params_files.clone(),
                    ..Default::default()
                };
                values.push((format!("{name}.params_file"), files));
            }
        }
        values
    }

    fn parameter(&self, name: &str) -> ParameterValue {
        self.parameter_values()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .unwrap_or_default()
    }

    /// The controllers declared since the last call, whose tasks the node starts.
    pub fn take_added(&mut self) -> Vec<String> {
        std::mem::take(&mut self.added)
    }

    /// The index in `world` of the robot controller `name` runs on.
    pub fn robot_of(&self, name: &str, world: &WorldGeneration) -> Option<usize> {
        let declared = self.declared.get(name)?;
        world.robot_index(&declared.robot)
    }

    fn load(&mut self, name: &str) -> Result<(), Refusal> {
        if !self.declared.contains_key(name) {
            self.declare_from_parameters(name)?;
        }
        let declared = self
            .declared
            .get(name)
            .ok_or_else(|| Refusal::NotDeclared(name.to_string()))?;
        let kind = kinds::kind_of(&declared.controller.type_name)?;
        let running = Running {
            robot: declared.robot.clone(),
            kind,
            declared: declared.controller.clone(),
            slot: declared.slot.clone(),
        };
        self.lifecycle
            .load(name, &declared.controller.type_name, running)
    }

    fn configure(&mut self, name: &str) -> Result<(), Refusal> {
        let world = self.world.clone();
        self.lifecycle.configure(name, |running| {
            let world = world.ok_or(ConfigureError::NoWorld)?;
            let map = world
                .robots
                .iter()
                .find(|r| r.name == running.robot)
                .ok_or_else(|| ConfigureError::RobotGone(running.robot.clone()))?;
            let configured = kinds::configure(running.kind, &running.declared, &world.model, map)?;
            *running.slot.joints.borrow_mut() = configured.joints;
            Ok(configured.interfaces)
        })
    }

    fn switch(&mut self, request: &SwitchController::Request) -> Result<(), Refusal> {
        let strictness = Strictness::from_request(request.strictness);
        let (switch, skipped) = self.lifecycle.plan_switch(
            &request.activate_controllers,
            &request.deactivate_controllers,
            strictness,
        )?;
        for refusal in skipped {
            log::warn!("controller_manager: switch (best effort): {refusal}; left out");
        }
        self.lifecycle
            .apply_switch(&switch, |running, active| running.slot.set_active(active));
        self.open_active_broadcasters();
        Ok(())
    }

    fn controller_states(&self) -> Vec<ControllerState> {
        self.lifecycle
            .iter()
            .map(|(name, loaded)| ControllerState {
                name: name.clone(),
                state: loaded.state.label().into(),
                type_: loaded.type_name.clone(),
                update_rate: self.update_rate,
                claimed_interfaces: match loaded.state {
                    State::Active => loaded.interfaces.command.clone(),
                    _ => Vec::new(),
                },
                required_command_interfaces: loaded.interfaces.command.clone(),
                required_state_interfaces: loaded.interfaces.state.clone(),
                ..Default::default()
            })
            .collect()
    }

    /// Every robot's command interfaces (one per actuated joint, by its actuator's kind) and
    /// state interfaces (position, velocity, effort of each joint).
    fn hardware_interfaces(
        &self,
        map: &crate::model::RobotMap,
    ) -> (Vec<HardwareInterface>, Vec<HardwareInterface>) {
        let Some(world) = &self.world else {
            return Default::default();
        };
        let interface = |name: String, is_claimed: bool| HardwareInterface {
            name,
            data_type: "double".into(),
            is_available: true,
            is_claimed,
        };
        let mut command = Vec::new();
        let mut state = Vec::new();
        for joint in &map.joints {
            // Only a hinge or a slide has one position, velocity and effort (a floating
            // base's free joint is no ros2_control joint).
            use mujoco_rs::prelude::MjtJoint;
            let kind = world.model.jnt_type()[joint.id];
            if !matches!(kind, MjtJoint::mjJNT_HINGE | MjtJoint::mjJNT_SLIDE) {
                continue;
            }
            if let Some(taken) = kinds::actuator_interface(&world.model, map, &joint.name) {
                let name = format!("{}/{}", joint.name, taken.name());
                let claimed = self.lifecycle.claimed_by(&name).is_some();
                command.push(interface(name, claimed));
            }
            for kind in ["position", "velocity", "effort"] {
                state.push(interface(format!("{}/{kind}", joint.name), false));
            }
        }
        (command, state)
    }

    fn components(&self) -> Vec<HardwareComponentState> {
        let Some(world) = self.world.clone() else {
            return Vec::new();
        };
        world
            .robots
            .iter()
            .map(|map| {
                let (command_interfaces, state_interfaces) = self.hardware_interfaces(map);
                HardwareComponentState {
                    name: map.name.clone(),
                    type_: "system".into(),
                    plugin_name: "mujoco_bridge/MujocoSystem".into(),
                    state: LifecycleState {
                        id: LifecycleState::PRIMARY_STATE_ACTIVE,
                        label: "active".into(),
                    },
                    command_interfaces,
                    state_interfaces,
                    ..Default::default()
                }
            })
            .collect()
    }
}

/// Answers `ok` for a request that `result` decided, logging a refusal.
fn ok_or_log(what: &str, result: Result<(), Refusal>) -> bool {
    match result {
        Ok(()) => true,
        Err(refusal) => {
            log::error!("controller_manager: {what}: {refusal}");
            false
        }
    }
}

/// Serves `name` (under the manager's prefix) with `answer`, on the manager.
fn serve<S: super::backend::ServiceType>(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    manager: &Manager,
    name: &str,
    answer: impl Fn(&mut ManagerState, &S::Request) -> S::Response + 'static,
) -> Result<(), super::Error> {
    let manager = manager.clone();
    super::serve::<S>(node, spawner, &format!("{PREFIX}/{name}"), move |request| {
        answer(&mut manager.borrow_mut(), &request)
    })
}

/// Starts the manager's services.
pub fn start(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    manager: &Manager,
) -> Result<(), super::Error> {
    serve_parameters(node, spawner, manager)?;
    serve_hardware(node, spawner, manager)?;
    serve_controllers(node, spawner, manager)
}

/// Its parameter services, which the spawner's -p and `ros2 param` use.
fn serve_parameters(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    manager: &Manager,
) -> Result<(), super::Error> {
    serve::<SetParameters::Service>(node, spawner, manager, "set_parameters", |m, r| {
        SetParameters::Response {
            results: r.parameters.iter().map(|p| m.set_parameter(p)).collect(),
        }
    })?;
    serve::<SetParametersAtomically::Service>(
        node,
        spawner,
        manager,
        "set_parameters_atomically",
        |m, r| SetParametersAtomically::Response {
            result: m.set_parameters_atomically(&r.parameters),
        },
    )?;
    serve::<GetParameters::Service>(node, spawner, manager, "get_parameters", |m, r| {
        GetParameters::Response {
            values: r.names.iter().map(|n| m.parameter(n)).collect(),
        }
    })?;
    serve::<GetParameterTypes::Service>(node, spawner, manager, "get_parameter_types", |m, r| {
        GetParameterTypes::Response {
            types: r.names.iter().map(|n| m.parameter(n).type_).collect(),
        }
    })?;
    serve::<ListParameters::Service>(node, spawner, manager, "list_parameters", |m, r| {
        ListParameters::Response {
            result: ListParametersResult {
                names: m.parameter_names(&r.prefixes),
                prefixes: Vec::new(),
            },
        }
    })?;
    serve::<DescribeParameters::Service>(node, spawner, manager, "describe_parameters", |m, r| {
        DescribeParameters::Response {
            descriptors: r.names.iter().map(|n| m.describe(n)).collect(),
        }
    })
}

/// Its hardware services: one component per robot, always active.
fn serve_hardware(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    manager: &Manager,
) -> Result<(), super::Error> {
    serve::<ListHardwareComponents::Service>(
        node,
        spawner,
        manager,
        "list_hardware_components",
        |m, _| ListHardwareComponents::Response {
            component: m.components(),
        },
    )?;
    serve::<ListHardwareInterfaces::Service>(
        node,
        spawner,
        manager,
        "list_hardware_interfaces",
        |m, _| m.all_interfaces(),
    )?;
    serve::<SetHardwareComponentState::Service>(
        node,
        spawner,
        manager,
        "set_hardware_component_state",
        |m, r| m.set_component_state(r),
    )
}

/// Its controller services: types, listing, the lifecycle and switching.
fn serve_controllers(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    manager: &Manager,
) -> Result<(), super::Error> {
    serve::<ListControllers::Service>(node, spawner, manager, "list_controllers", |m, _| {
        ListControllers::Response {
            controller: m.controller_states(),
        }
    })?;
    serve::<ListControllerTypes::Service>(
        node,
        spawner,
        manager,
        "list_controller_types",
        |_, _| controller_types(),
    )?;
    serve::<LoadController::Service>(node, spawner, manager, "load_controller", |m, r| {
        LoadController::Response {
            ok: ok_or_log("load_controller", m.load(&r.name)),
        }
    })?;
    serve::<ConfigureController::Service>(
        node,
        spawner,
        manager,
        "configure_controller",
        |m, r| ConfigureController::Response {
            ok: ok_or_log("configure_controller", m.configure(&r.name)),
        },
    )?;
    serve::<CleanupController::Service>(node, spawner, manager, "cleanup_controller", |m, r| {
        CleanupController::Response {
            ok: ok_or_log("cleanup_controller", m.lifecycle.cleanup(&r.name).map(drop)),
        }
    })?;
    serve::<UnloadController::Service>(node, spawner, manager, "unload_controller", |m, r| {
        UnloadController::Response {
            ok: ok_or_log("unload_controller", m.lifecycle.unload(&r.name).map(drop)),
        }
    })?;
    serve::<SwitchController::Service>(node, spawner, manager, "switch_controller", |m, r| {
        m.switch_answer(r)
    })?;
    serve::<ReloadControllerLibraries::Service>(
        node,
        spawner,
        manager,
        "reload_controller_libraries",
        |m, r| ReloadControllerLibraries::Response {
            ok: m.reload_libraries(r.force_kill),
        },
    )
}

/// The types the manager has, each a ControllerInterface.
fn controller_types() -> ListControllerTypes::Response {
    ListControllerTypes::Response {
        types: kinds::TYPES
            .iter()
            .map(|(name, _)| name.to_string())
            .collect(),
        base_classes: kinds::TYPES
            .iter()
            .map(|_| "controller_interface::ControllerInterface".to_string())
            .collect(),
    }
}

impl ManagerState {
    /// All or nothing: only `<controller>.type` and `<controller>.params_file` are taken.
    fn set_parameters_atomically(&mut self, parameters: &[Parameter]) -> SetParametersResult {
        let refused = parameters
            .iter()
            .find(|p| !matches!(p.name.rsplit_once('.'), Some((_, "type" | "params_file"))));
        if let Some(p) = refused {
            return SetParametersResult {
                successful: false,
                reason: format!(
                    "{}: the controller manager takes <controller>.type and <controller>.params_file",
                    p.name
                ),
            };
        }
        let results: Vec<_> = parameters.iter().map(|p| self.set_parameter(p)).collect();
        results
            .into_iter()
            .find(|r| !r.successful)
            .unwrap_or(SetParametersResult {
                successful: true,
                reason: String::new(),
            })
    }

    /// The names of its parameters under any of `prefixes` (all when none).
    fn parameter_names(&self, prefixes: &[String]) -> Vec<String> {
        self.parameter_values()
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| prefixes.is_empty() || prefixes.iter().any(|p| n.starts_with(p.as_str())))
            .collect()
    }

    fn describe(&self, name: &str) -> ParameterDescriptor {
        ParameterDescriptor {
            name: name.to_string(),
            type_: self.parameter(name).type_,
            dynamic_typing: false,
            ..Default::default()
        }
    }

    /// Every component's interfaces.
    fn all_interfaces(&self) -> ListHardwareInterfaces::Response {
        let (mut command_interfaces, mut state_interfaces) = (Vec::new(), Vec::new());
        for component in self.components() {
            command_interfaces.extend(component.command_interfaces);
            state_interfaces.extend(component.state_interfaces);
        }
        ListHardwareInterfaces::Response {
            command_interfaces,
            state_interfaces,
        }
    }

    /// A simulated robot's joints are always read and commanded: its component stays active.
    fn set_component_state(
        &self,
        r: &SetHardwareComponentState::Request,
    ) -> SetHardwareComponentState::Response {
        let component = self.components().into_iter().find(|c| c.name == r.name);
        let active = |s: &LifecycleState| {
            s.id == LifecycleState::PRIMARY_STATE_ACTIVE || s.label == "active"
        };
        let ok = match &component {
            None => {
                log::error!(
                    "controller_manager: set_hardware_component_state: no hardware component '{}'",
                    r.name
                );
                false
            }
            Some(_) if active(&r.target_state) => true,
            Some(_) => {
                log::error!(
                    "controller_manager: set_hardware_component_state: '{}' stays active: a simulated robot's component takes no other state (asked: {} '{}')",
                    r.name,
                    r.target_state.id,
                    r.target_state.label
                );
                false
            }
        };
        SetHardwareComponentState::Response {
            ok,
            state: component.map(|c| c.state).unwrap_or_default(),
        }
    }

    fn switch_answer(&mut self, r: &SwitchController::Request) -> SwitchController::Response {
        match self.switch(r) {
            Ok(()) => SwitchController::Response {
                ok: true,
                message: String::new(),
            },
            Err(refusal) => {
                log::error!("controller_manager: switch_controller: {refusal}");
                SwitchController::Response {
                    ok: false,
                    message: refusal.to_string(),
                }
            }
        }
    }

    /// Types are built in: there is nothing to reload. Upstream refuses while controllers are
    /// loaded, unless `force_kill`, which stops and unloads them.
    fn reload_libraries(&mut self, force_kill: bool) -> bool {
        let names: Vec<String> = self.lifecycle.iter().map(|(n, _)| n.clone()).collect();
        if !names.is_empty() && !force_kill {
            log::error!(
                "controller_manager: reload_controller_libraries: controllers are loaded ({names:?}); force_kill stops and unloads them"
            );
            return false;
        }
        let request = SwitchController::Request {
            deactivate_controllers: self
                .lifecycle
                .iter()
                .filter(|(_, l)| l.state == State::Active)
                .map(|(n, _)| n.clone())
                .collect(),
            ..Default::default()
        };
        let _ = self.switch(&request);
        for name in names {
            if let Ok(running) = self.lifecycle.unload(&name) {
                running.slot.set_active(false);
            }
        }
        true
    }
}

/// A controller robot `robot` of `world` declares, with its kind, parameters and slot.
pub(super) struct OfRobot {
    pub name: String,
    pub kind: Kind,
    pub controller: DeclaredController,
    pub slot: Rc<Slot>,
}

/// The controllers robot `robot` of `world` declares (`only`: that one) whose kind `wanted`
/// accepts, with their kinds; a type the manager does not know is left out.
pub(super) fn of_robot(
    manager: &Manager,
    world: &WorldGeneration,
    robot: usize,
    only: Option<&str>,
    wanted: impl Fn(Kind) -> bool,
) -> Vec<OfRobot> {
    let manager = manager.borrow();
    let robot_name = &world.robots[robot].name;
    manager
        .declared
        .iter()
        .filter(|(name, d)| &d.robot == robot_name && only.is_none_or(|o| o == *name))
        .filter_map(|(name, d)| {
            let kind = kinds::kind_of(&d.controller.type_name).ok()?;
            wanted(kind).then(|| OfRobot {
                name: name.clone(),
                kind,
                controller: d.controller.clone(),
                slot: d.slot.clone(),
            })
        })
        .collect()
}

/// The joint_trajectory_controllers robot `robot` declares, as the action servers take them
/// (`ros.trajectory_controllers` entries), each with what the manager says of it: its slot
/// (its server takes goals only while active) and what its parameters hold goals to
/// (`kinds::goal_defaults`). One whose parameters do not fit the robot gets no server:
/// configuring it says why.
pub fn trajectory_controllers(
    manager: &Manager,
    world: &WorldGeneration,
    robot: usize,
    only: Option<&str>,
) -> Vec<(crate::config::TrajectoryController, Managed)> {
    let map = &world.robots[robot];
    of_robot(manager, world, robot, only, |k| k == Kind::Trajectory)
        .into_iter()
        .filter_map(|of| {
            let params = &of.controller.params;
            let configured = kinds::configure(of.kind, &of.controller, &world.model, map).ok()?;
            let defaults = kinds::goal_defaults(params, &configured.joints).ok()?;
            let joints = configured.joints.iter().map(|j| regex::escape(j)).collect();
            let controller = crate::config::TrajectoryController {
                name: of.name,
                joints: crate::config::Patterns::Many(joints),
                // Checked as a config's; the goals follow `defaults`.
                goal_tolerance: 0.02,
                goal_time: 1.0,
            };
            let managed = Managed {
                slot: of.slot,
                defaults,
            };
            Some((controller, managed))
        })
        .collect()
}

/// The gripper_action_controllers robot `robot` declares (`only`: that one), as the
/// GripperCommand servers take them, each with its slot and parameters. One whose
/// parameters do not fit the robot gets no server: configuring it says why.
pub fn gripper_controllers(
    manager: &Manager,
    world: &WorldGeneration,
    robot: usize,
    only: Option<&str>,
) -> Vec<(crate::config::GripperController, ManagedGripper)> {
    let map = &world.robots[robot];
    of_robot(manager, world, robot, only, |k| {
        matches!(k, Kind::Gripper { .. })
    })
    .into_iter()
    .filter_map(|of| {
        let Kind::Gripper { parallel } = of.kind else {
            return None;
        };
        let params = &of.controller.params;
        let configured = kinds::configure(of.kind, &of.controller, &world.model, map).ok()?;
        let settings = kinds::gripper_settings(params).ok()?;
        let gripper = crate::config::GripperController {
            name: of.name,
            joint: configured.joints.first()?.clone(),
            actuator: None,
            position_range: None,
            // Checked as a config's; the goals follow `settings`.
            tolerance: 0.002,
            allow_stalling: settings.allow_stalling,
        };
        let managed = ManagedGripper {
            slot: of.slot,
            settings,
            parallel,
        };
        Some((gripper, managed))
    })
    .collect()
}

/// Starts the command subscriptions of the controllers robot `robot` of `world` declares
/// (`only`: of that one): forward commands' `~/commands` and the diff drive's `~/cmd_vel`.
pub fn start_subscriptions(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    world: &WorldGeneration,
    robot: usize,
    manager: &Manager,
    only: Option<&str>,
) -> Result<(), super::Error> {
    start_forward(node, spawner, handle, world, robot, manager, only)?;
    start_diff_drive(node, spawner, handle, world, robot, manager, only)
}

/// Starts the `~/cmd_vel` subscriptions of the diff_drive_controllers robot `robot` of
/// `world` declares (`only`: of that one) whose parameters gave the robot its base; each
/// drives the base only while its controller is active.
fn start_diff_drive(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    world: &WorldGeneration,
    robot: usize,
    manager: &Manager,
    only: Option<&str>,
) -> Result<(), super::Error> {
    use crate::messages::geometry_msgs::msg::{Twist, TwistStamped};
    let robot_name = world.robots[robot].name.clone();
    let base = world.config.robots[robot].control.base.as_ref();
    let Some(driving) = base.and_then(|b| b.controller.clone()) else {
        return Ok(());
    };
    let manager = manager.borrow();
    let Some(declared) = manager
        .declared
        .get(&driving)
        .filter(|d| d.robot == robot_name && only.is_none_or(|o| o == driving))
    else {
        return Ok(());
    };
    let Some(Ok(drive)) = &declared.controller.diff_drive else {
        return Ok(());
    };
    // Humble's controller read a plain Twist on `~/cmd_vel_unstamped`; a URDF's ros2_control
    // plugin may remap either name.
    let remappings = &world.config.robots[robot].control.remappings;
    let remapped = |topic: String| {
        remappings
            .iter()
            .find(|(from, _)| from.trim_start_matches('/') == topic)
            .map_or(topic.clone(), |(_, to)| to.clone())
    };
    let topic = remapped(format!("{driving}/cmd_vel"));
    let unstamped = remapped(format!("{driving}/cmd_vel_unstamped"));
    let (slot, handle) = (declared.slot.clone(), handle.clone());
    // Deactivated, upstream's controller halts its wheels at once.
    let (halting, halted) = (handle.clone(), robot_name.clone());
    slot.when_deactivated(move || {
        if let Ok(robot) = halting.robot_index(&halted) {
            let _ = halting.stop_base(robot);
        }
    });
    // Upstream's diff drive reads the twist's linear x and angular z; the base limits it.
    let drive_base = move |twist: &Twist| {
        if !slot.active() {
            return;
        }
        if let Ok(robot) = handle.robot_index(&robot_name) {
            let (linear_x, angular_z) = (twist.linear.x, twist.angular.z);
            let _ = handle.command_twist(ControlSource::Ros, robot, linear_x, 0.0, angular_z);
        }
    };
    if drive.stamped {
        let mut twists = node.subscribe::<TwistStamped>(&topic, Qos::DEFAULT)?;
        super::spawn(spawner, async move {
            while let Some(message) = twists.next().await {
                drive_base(&message.twist);
            }
        })?;
    } else {
        for topic in [topic, unstamped] {
            let mut twists = node.subscribe::<Twist>(&topic, Qos::DEFAULT)?;
            let drive_base = drive_base.clone();
            super::spawn(spawner, async move {
                while let Some(message) = twists.next().await {
                    drive_base(&message);
                }
            })?;
        }
    }
    Ok(())
}

/// Starts the `~/commands` subscriptions of the forward command controllers robot `robot`
/// of `world` declares (`only`: of that one); each acts only while its controller is active.
fn start_forward(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    world: &WorldGeneration,
    robot: usize,
    manager: &Manager,
    only: Option<&str>,
) -> Result<(), super::Error> {
    let robot_name = world.robots[robot].name.clone();
    let forward = of_robot(manager, world, robot, only, |k| {
        matches!(k, Kind::Forward(_))
    });
    for OfRobot { name, slot, .. } in forward {
        let mut commands =
            node.subscribe::<Float64MultiArray>(&format!("{name}/commands"), Qos::DEFAULT)?;
        let (handle, robot_name) = (handle.clone(), robot_name.clone());
        super::spawn(spawner, async move {
            while let Some(message) = commands.next().await {
                if !slot.active() {
                    continue;
                }
                let joints = slot.joints.borrow();
                if message.data.len() != joints.len() {
                    let _ = handle.bad_command(
                        "forward commands",
                        format!(
                            "{name}/commands: {} values for {} joints",
                            message.data.len(),
                            joints.len()
                        ),
                    );
                    continue;
                }
                let Ok(robot) = handle.robot_index(&robot_name) else {
                    continue;
                };
                let names: Vec<&str> = joints.iter().map(String::as_str).collect();
                let _ = handle.command_actuators(ControlSource::Ros, robot, &names, &message.data);
            }
        })?;
    }
    Ok(())
}
