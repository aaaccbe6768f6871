//! The controller types the manager can load, and what each does once configured. A type is
//! a name ros2_control users write in their controllers file, and a `configure` that reads
//! its parameters against the robot and says which interfaces it uses.
use super::{GoalDefaults, GripperSettings, Interfaces};
use crate::config::broadcasters::{self, SensorKind};
use crate::config::controller_params::{
    ControllerError, ParamError, flag, names, number, number_in,
};
use crate::config::controllers::DeclaredController;
use crate::control::{ActuatorInfo, ActuatorKind};
use crate::model::RobotMap;
use mujoco_rs::prelude::MjModel;
use serde_json::{Map, Value};

/// What a controller of a type commands, if anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Publishes joint states; commands nothing.
    JointStateBroadcaster,
    /// `~/commands` (Float64MultiArray) to one interface of its joints: the given one, or
    /// the one its parameter `interface_name` names.
    Forward(Option<Interface>),
    /// joint_trajectory_controller: the FollowJointTrajectory server
    /// `~/follow_joint_trajectory` of its joints (position commands), which takes goals
    /// only while the controller is active.
    Trajectory,
    /// gripper_action_controller (`parallel`: parallel_gripper_action_controller): the
    /// GripperCommand (ParallelGripperCommand) server `~/gripper_cmd` of its joint (position
    /// commands), which takes goals only while the controller is active.
    Gripper { parallel: bool },
    /// diff_drive_controller: `~/cmd_vel` to the robot's base (which the controller's
    /// parameters give, see `config::diff_drive`) while the controller is active.
    DiffDrive,
    /// An imu, force-torque or range sensor broadcaster: `~/imu`, `~/wrench` or `~/range`
    /// from the MuJoCo sensors its `sensor_name` prefixes (`config::broadcasters`); it
    /// commands nothing.
    Broadcaster(SensorKind),
}

/// A joint's command interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    Position,
    Velocity,
    Effort,
}

impl Interface {
    pub fn name(self) -> &'static str {
        match self {
            Self::Position => "position",
            Self::Velocity => "velocity",
            Self::Effort => "effort",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "position" => Some(Self::Position),
            "velocity" => Some(Self::Velocity),
            "effort" => Some(Self::Effort),
            _ => None,
        }
    }

    /// The interface an actuator of `kind` takes commands on.
    pub fn of(kind: ActuatorKind) -> Self {
        match kind {
            ActuatorKind::PositionServo => Self::Position,
            ActuatorKind::VelocityServo => Self::Velocity,
            ActuatorKind::Force => Self::Effort,
        }
    }
}

/// Every type the manager loads, with its kind.
pub const TYPES: &[(&str, Kind)] = &[
    (
        "joint_state_broadcaster/JointStateBroadcaster",
        Kind::JointStateBroadcaster,
    ),
    (
        "forward_command_controller/ForwardCommandController",
        Kind::Forward(None),
    ),
    (
        "joint_trajectory_controller/JointTrajectoryController",
        Kind::Trajectory,
    ),
    (crate::config::diff_drive::DIFF_DRIVE, Kind::DiffDrive),
    (broadcasters::IMU, Kind::Broadcaster(SensorKind::Imu)),
    (
        broadcasters::FORCE_TORQUE,
        Kind::Broadcaster(SensorKind::ForceTorque),
    ),
    (broadcasters::RANGE, Kind::Broadcaster(SensorKind::Range)),
    (
        "position_controllers/GripperActionController",
        Kind::Gripper { parallel: false },
    ),
    (
        "parallel_gripper_action_controller/GripperActionController",
        Kind::Gripper { parallel: true },
    ),
    (
        "position_controllers/JointGroupPositionController",
        Kind::Forward(Some(Interface::Position)),
    ),
    (
        "velocity_controllers/JointGroupVelocityController",
        Kind::Forward(Some(Interface::Velocity)),
    ),
    (
        "effort_controllers/JointGroupEffortController",
        Kind::Forward(Some(Interface::Effort)),
    ),
];

/// A controller type the manager does not have; the text names the types there are.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "controller type '{type_name}' is not supported; supported: {}",
    supported()
)]
pub struct UnknownType {
    pub type_name: String,
}

fn supported() -> String {
    let known: Vec<&str> = TYPES.iter().map(|(name, _)| *name).collect();
    known.join(", ")
}

/// The kind of type `type_name`.
pub fn kind_of(type_name: &str) -> Result<Kind, UnknownType> {
    TYPES
        .iter()
        .find(|(name, _)| *name == type_name)
        .map(|(_, kind)| *kind)
        .ok_or_else(|| UnknownType {
            type_name: type_name.to_string(),
        })
}

/// A configured controller's joints, in its order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Configured {
    pub joints: Vec<String>,
    pub interfaces: Interfaces,
}

/// What a joint_trajectory_controller's parameters hold goals to, as upstream reads them:
/// `constraints.goal_time` (0: no limit), `constraints.stopped_velocity_tolerance`
/// (default 0.01), `constraints.<joint>.trajectory` and `.goal` (0 or absent: not checked)
/// for joints of `joints`, `allow_partial_joints_goal` (default false) and
/// `open_loop_control` (default false).
pub fn goal_defaults(
    params: &Map<String, Value>,
    joints: &[String],
) -> Result<GoalDefaults, ParamError> {
    let constraints = match params.get("constraints") {
        None => &Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(ParamError::NotAMap("constraints".into())),
    };
    let positive = |x: Option<f64>| x.filter(|x| *x > 0.0);
    let mut defaults = GoalDefaults {
        path: Default::default(),
        goal: Default::default(),
        goal_otherwise: None,
        stopped_velocity: positive(
            number_in(constraints, "constraints.", "stopped_velocity_tolerance")?.or(Some(0.01)),
        ),
        goal_time: positive(number_in(constraints, "constraints.", "goal_time")?),
        allow_partial: flag(params, "allow_partial_joints_goal", false)?,
        open_loop: flag(params, "open_loop_control", false)?,
    };
    for joint in joints {
        let Some(Value::Object(limits)) = constraints.get(joint) else {
            continue;
        };
        for (key, into) in [
            ("trajectory", &mut defaults.path),
            ("goal", &mut defaults.goal),
        ] {
            let at = format!("constraints.{joint}.");
            if let Some(tolerance) = positive(number_in(limits, &at, key)?) {
                into.insert(joint.clone(), tolerance);
            }
        }
    }
    Ok(defaults)
}

/// What a gripper_action_controller's parameters say, with upstream's defaults:
/// `goal_tolerance` (0.01), `allow_stalling` (false), `stall_velocity_threshold` (0.001)
/// and `stall_timeout` (1.0 s).
pub fn gripper_settings(params: &Map<String, Value>) -> Result<GripperSettings, ParamError> {
    let number = |name: &str, default: f64| -> Result<f64, ParamError> {
        match number(params, name)?.unwrap_or(default) {
            x if x >= 0.0 => Ok(x),
            x => Err(ParamError::Negative(name.to_string(), x)),
        }
    };
    Ok(GripperSettings {
        goal_tolerance: number("goal_tolerance", 0.01)?,
        allow_stalling: flag(params, "allow_stalling", false)?,
        stall_velocity: number("stall_velocity_threshold", 0.001)?,
        stall_timeout: number("stall_timeout", 1.0)?,
    })
}

/// Reads a controller's parameters against robot `map` of `model`: the joints it names, the
/// interface each takes commands on.
pub fn configure(
    kind: Kind,
    controller: &DeclaredController,
    model: &MjModel,
    map: &RobotMap,
) -> Result<Configured, ControllerError> {
    let params = &controller.params;
    match kind {
        Kind::JointStateBroadcaster => joint_state_broadcaster(params, map),
        Kind::Broadcaster(sensor) => broadcaster(sensor, params, map),
        Kind::DiffDrive => diff_drive(controller, model, map),
        Kind::Gripper { .. } => gripper(params, model, map),
        Kind::Trajectory => trajectory(controller, model, map),
        Kind::Forward(fixed) => forward(fixed, params, model, map),
    }
}

/// joint_state_broadcaster: the joints it lists (all when none) and their state interfaces.
fn joint_state_broadcaster(
    params: &Map<String, Value>,
    map: &RobotMap,
) -> Result<Configured, ControllerError> {
    let joint_names: Vec<String> = map.joints.iter().map(|j| j.name.clone()).collect();
    let joints = names(params, "joints")?
        .filter(|j| !j.is_empty())
        .unwrap_or(joint_names.clone());
    let interfaces = names(params, "interfaces")?
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| {
            ["position", "velocity", "effort"]
                .map(String::from)
                .to_vec()
        });
    if let Some(missing) = joints.iter().find(|j| !joint_names.contains(j)) {
        return Err(ControllerError::NoListedJoint {
            robot: map.name.clone(),
            joint: missing.clone(),
        });
    }
    let state = joints
        .iter()
        .flat_map(|j| interfaces.iter().map(move |i| format!("{j}/{i}")))
        .collect();
    Ok(Configured {
        joints,
        interfaces: Interfaces {
            command: Vec::new(),
            state,
        },
    })
}

/// A sensor broadcaster: its sensor's state interfaces.
fn broadcaster(
    sensor: SensorKind,
    params: &Map<String, Value>,
    map: &RobotMap,
) -> Result<Configured, ControllerError> {
    let broadcaster = broadcasters::Broadcaster::parse(sensor, params)?;
    let wanted = broadcaster.wanted(&map.hardware_sensors);
    broadcaster.sensors(wanted, |_, name| map.sensors.iter().any(|s| s.name == name))?;
    let state = sensor
        .interfaces()
        .iter()
        .map(|i| format!("{}/{i}", broadcaster.sensor_name))
        .collect();
    Ok(Configured {
        joints: Vec::new(),
        interfaces: Interfaces {
            command: Vec::new(),
            state,
        },
    })
}

/// diff_drive_controller: its two wheels, each commanded in velocity (or effort).
fn diff_drive(
    controller: &DeclaredController,
    model: &MjModel,
    map: &RobotMap,
) -> Result<Configured, ControllerError> {
    let Some(drive) = &controller.diff_drive else {
        return Err(ControllerError::NotDiffDrive(controller.type_name.clone()));
    };
    let drive = drive.clone()?;
    let (mut command, mut state) = (Vec::new(), Vec::new());
    let wheels: Vec<String> = drive
        .left_wheels
        .iter()
        .chain(&drive.right_wheels)
        .cloned()
        .collect();
    for wheel in &wheels {
        let interface =
            actuator_interface(model, map, wheel).ok_or_else(|| not_actuated(map, wheel))?;
        if interface == Interface::Position {
            return Err(ControllerError::PositionWheel(wheel.clone()));
        }
        command.push(format!("{wheel}/{}", interface.name()));
        state.extend(["position", "velocity"].map(|i| format!("{wheel}/{i}")));
    }
    Ok(Configured {
        joints: wheels,
        interfaces: Interfaces { command, state },
    })
}

/// A gripper action controller: one joint commanded in position.
fn gripper(
    params: &Map<String, Value>,
    model: &MjModel,
    map: &RobotMap,
) -> Result<Configured, ControllerError> {
    let joint = match params.get("joint") {
        Some(Value::String(joint)) if !joint.is_empty() => joint.clone(),
        _ => return Err(ControllerError::NoGripperJoint),
    };
    gripper_settings(params)?;
    let joints = Value::Array(vec![Value::String(joint.clone())]);
    let forward = DeclaredController {
        params: Map::from_iter([("joints".to_string(), joints)]),
        ..Default::default()
    };
    let mut configured = configure(
        Kind::Forward(Some(Interface::Position)),
        &forward,
        model,
        map,
    )?;
    configured.interfaces.state = ["position", "velocity"]
        .map(|i| format!("{joint}/{i}"))
        .to_vec();
    Ok(configured)
}

/// joint_trajectory_controller: its joints commanded in position.
fn trajectory(
    controller: &DeclaredController,
    model: &MjModel,
    map: &RobotMap,
) -> Result<Configured, ControllerError> {
    let params = &controller.params;
    let commanded = names(params, "command_interfaces")?.unwrap_or_default();
    if commanded.iter().any(|i| i != "position") {
        return Err(ControllerError::OnlyPosition(commanded));
    }
    let mut configured = configure(
        Kind::Forward(Some(Interface::Position)),
        controller,
        model,
        map,
    )?;
    goal_defaults(params, &configured.joints)?;
    let read = names(params, "state_interfaces")?
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| ["position", "velocity"].map(String::from).to_vec());
    configured.interfaces.state = configured
        .joints
        .iter()
        .flat_map(|j| read.iter().map(move |i| format!("{j}/{i}")))
        .collect();
    Ok(configured)
}

/// A forward command controller: its joints, each on the interface its actuator takes.
fn forward(
    fixed: Option<Interface>,
    params: &Map<String, Value>,
    model: &MjModel,
    map: &RobotMap,
) -> Result<Configured, ControllerError> {
    let joints = names(params, "joints")?.unwrap_or_default();
    if joints.is_empty() {
        return Err(ControllerError::NoJoints);
    }
    let interface = match fixed {
        Some(interface) => interface,
        None => {
            let name = params
                .get("interface_name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Interface::parse(name)
                .ok_or_else(|| ControllerError::InterfaceName(name.to_string()))?
        }
    };
    for joint in &joints {
        let taken =
            actuator_interface(model, map, joint).ok_or_else(|| not_actuated(map, joint))?;
        if taken != interface {
            return Err(ControllerError::Interface {
                joint: joint.clone(),
                wanted: interface.name(),
                taken: taken.name(),
            });
        }
    }
    let command = joints
        .iter()
        .map(|j| format!("{j}/{}", interface.name()))
        .collect();
    Ok(Configured {
        joints,
        interfaces: Interfaces {
            command,
            state: Vec::new(),
        },
    })
}

fn not_actuated(map: &RobotMap, joint: &str) -> ControllerError {
    ControllerError::NotActuated {
        robot: map.name.clone(),
        joint: joint.to_string(),
    }
}

/// The command interface of the actuator that drives joint `joint` of robot `map`.
pub fn actuator_interface(model: &MjModel, map: &RobotMap, joint: &str) -> Option<Interface> {
    let joint_id = map.joint(joint)?.id;
    map.actuators
        .iter()
        .map(|a| ActuatorInfo::of(model, a.id))
        .find(|info| info.joint.map(|(j, _, _)| j) == Some(joint_id))
        .map(|info| Interface::of(info.kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_type_names_the_supported_ones() {
        let error = kind_of("ur_controllers/GPIOController")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("controller type 'ur_controllers/GPIOController' is not supported; supported: joint_state_broadcaster/JointStateBroadcaster, "),
            "{error}"
        );
        assert_eq!(
            kind_of("velocity_controllers/JointGroupVelocityController"),
            Ok(Kind::Forward(Some(Interface::Velocity)))
        );
    }
}
