//! Reading one controller's parameters (its `ros__parameters` in a controllers file): a
//! number, a flag, a list of names, each refused with its dotted name when it is not one.
use serde_json::{Map, Value};

/// A controller parameter that does not say what the controller's type reads; the text
/// names it by its dotted path, as the controllers file writes it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    #[error("'{0}' must be a number, got {1}")]
    NotANumber(String, Value),
    #[error("'{0}' must be true or false, got {1}")]
    NotAFlag(String, Value),
    #[error("'{0}' must be a list of names")]
    NotNames(String),
    #[error("'{0}' must be a name, got {1}")]
    NotAName(String, Value),
    #[error("'{0}' must name a frame, got {1}")]
    NotAFrame(String, Value),
    #[error("'{0}' must be a map")]
    NotAMap(String),
    #[error("'{0}' is required")]
    Required(String),
    #[error("'{0}' must be positive, got {1}")]
    NotPositive(String, f64),
    #[error("'{0}' must be at least 0, got {1}")]
    Negative(String, f64),
    #[error("'{0}' other than 1.0 is not supported")]
    NotOne(String),
    #[error("'{axis}.min_{what}' {min} is above max_{what} {max}")]
    MinAboveMax {
        axis: String,
        what: String,
        min: f64,
        max: f64,
    },
    #[error("'{0}' must name the wheel joints of that side")]
    NoWheel(String),
}

/// A controller whose parameters do not fit its robot: what the controller manager refuses
/// to configure, and what leaves a robot without the base or the sensor topics its
/// controllers file declares.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ControllerError {
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("sensor '{sensor}': the robot has none of the MuJoCo sensors {wanted:?}")]
    NoSensors { sensor: String, wanted: Vec<String> },
    #[error("'joints': robot '{robot}' has no joint '{joint}'")]
    NoListedJoint { robot: String, joint: String },
    #[error("robot '{robot}' has no joint '{joint}'")]
    NoJoint { robot: String, joint: String },
    #[error("robot '{robot}' has no actuated joint '{joint}'")]
    NotActuated { robot: String, joint: String },
    #[error("no actuator drives joint '{0}'")]
    NoActuator(String),
    #[error("joint '{0}' has a position servo; a wheel needs a velocity servo or a motor")]
    PositionServoWheel(String),
    #[error("wheel '{0}' has a position command interface; a wheel needs velocity (or effort)")]
    PositionWheel(String),
    #[error("'joint' must name the gripper's joint")]
    NoGripperJoint,
    #[error("type '{0}' is not diff_drive_controller/DiffDriveController")]
    NotDiffDrive(String),
    #[error(
        "'command_interfaces' {0:?}: only position is supported (the joints follow the trajectory's positions)"
    )]
    OnlyPosition(Vec<String>),
    #[error("'joints' parameter is empty")]
    NoJoints,
    #[error("'interface_name' must be position, velocity or effort, got '{0}'")]
    InterfaceName(String),
    #[error("joint '{joint}' has no {wanted} command interface (its actuator takes {taken})")]
    Interface {
        joint: String,
        wanted: &'static str,
        taken: &'static str,
    },
}

/// Parameter `name` of `params`, which messages call `{path}{name}`: a finite number, if
/// given.
pub fn number_in(
    params: &Map<String, Value>,
    path: &str,
    name: &str,
) -> Result<Option<f64>, ParamError> {
    match params.get(name) {
        None => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| ParamError::NotANumber(format!("{path}{name}"), v.clone())),
    }
}

/// Parameter `name`: a finite number, if given.
pub fn number(params: &Map<String, Value>, name: &str) -> Result<Option<f64>, ParamError> {
    number_in(params, "", name)
}

/// Parameter `name`: true or false, `default` if not given.
pub fn flag(params: &Map<String, Value>, name: &str, default: bool) -> Result<bool, ParamError> {
    match params.get(name) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(ParamError::NotAFlag(name.to_string(), v.clone())),
    }
}

/// Parameter `name`: a list of names, if given.
pub fn names(params: &Map<String, Value>, name: &str) -> Result<Option<Vec<String>>, ParamError> {
    let Some(value) = params.get(name) else {
        return Ok(None);
    };
    let wrong = || ParamError::NotNames(name.to_string());
    let list = value.as_array().ok_or_else(wrong)?;
    list.iter()
        .map(|v| v.as_str().map(str::to_string).ok_or_else(wrong))
        .collect::<Result<_, _>>()
        .map(Some)
}
