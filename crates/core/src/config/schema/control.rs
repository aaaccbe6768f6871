//! Each robot's `control:`: who drives it, what a command means, PD gains, a mobile base,
//! keyframe presets. The control layer builds its controllers from these.
use super::yes;
use serde::Deserialize;

/// Who drives a robot. Commands from the other sources are ignored (and counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlSource {
    /// ROS 2 topics, services and actions.
    #[default]
    Ros,
    /// Legacy ZMQ clients.
    Zmq,
    /// The internal player: keyframe sequencer and CSV playback.
    Player,
}

impl ControlSource {
    /// The source whose `as u8` is `value` (ROS for anything else).
    pub fn from_u8(value: u8) -> Self {
        match value {
            x if x == Self::Zmq as u8 => Self::Zmq,
            x if x == Self::Player as u8 => Self::Player,
            _ => Self::Ros,
        }
    }
}

/// What an actuator command means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlMode {
    /// The value is written to `ctrl` (a position servo's target, a motor's torque, ...).
    #[default]
    Passthrough,
    /// The value is a joint position target for a PD law computed every step (motors).
    Pd,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct GainsConfig {
    #[serde(default = "default_pd_kp")]
    pub kp: f64,
    #[serde(default = "default_pd_kv")]
    pub kv: f64,
    #[serde(default = "default_torque_limit")]
    pub torque_limit: f64,
}

impl Default for GainsConfig {
    fn default() -> Self {
        Self {
            kp: default_pd_kp(),
            kv: default_pd_kv(),
            torque_limit: default_torque_limit(),
        }
    }
}

fn default_pd_kp() -> f64 {
    100.0
}
fn default_pd_kv() -> f64 {
    5.0
}
fn default_torque_limit() -> f64 {
    200.0
}

#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ControlConfig {
    #[serde(default)]
    pub source: ControlSource,
    #[serde(default)]
    pub mode: ControlMode,
    /// PD gains of every actuator (the legacy defaults: kp 100, kv 5, torque limit 200).
    #[serde(default)]
    pub gains: GainsConfig,
    /// Adds the bias force (gravity, Coriolis) of each motor's joint to its ctrl.
    #[serde(default)]
    pub gravity_compensation: bool,
    pub base: Option<BaseConfig>,
    /// User keyframe presets, in the shape of the built-in ones.
    #[serde(default)]
    pub presets: Vec<Preset>,
    /// A preset (built-in or user) loaded at start.
    pub preset: Option<String>,
    /// Play the loaded preset from the start (after a 0.5 s delay), as the original plugin
    /// does by default. Only matters when `preset` is set.
    #[serde(default = "yes")]
    pub autoplay: bool,
    /// The `update_rate` (Hz) of the robot's controllers file, when it gives one: the
    /// trajectory follower's setpoints change at that rate. Derived, never written.
    #[serde(skip)]
    pub update_rate: Option<f64>,
    /// Topic remappings of the controller manager's node, `from` -> `to`, as the URDF's
    /// ros2_control simulator plugin gives them (`<ros><remapping>`).
    #[serde(skip)]
    pub remappings: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseKind {
    /// Two wheel joints driven from the twist's vx and wz.
    DiffDrive,
    /// The floating base's planar velocity (vx, vy, wz) is set from the twist every step.
    Planar,
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct BaseConfig {
    #[serde(rename = "type")]
    pub kind: BaseKind,
    /// diff_drive: the wheel joint of each side, or a list of them (a skid steer's, all
    /// driven alike).
    #[serde(default, deserialize_with = "one_or_more")]
    pub left_wheel: Vec<String>,
    #[serde(default, deserialize_with = "one_or_more")]
    pub right_wheel: Vec<String>,
    pub wheel_radius: Option<f64>,
    pub wheel_separation: Option<f64>,
    /// Seconds (sim time) after the last twist at which the base stops; 0 keeps it forever.
    #[serde(default = "default_twist_timeout")]
    pub cmd_vel_timeout: f64,
    /// diff_drive: the most each wheel's rim speeds up or slows down, m/s^2 (a twist is
    /// ramped to, as Gazebo's drives and ros2_control's limiter ramp it); none: at once.
    #[serde(default)]
    pub max_wheel_acceleration: Option<f64>,
    /// The diff_drive_controller of the robot's controllers file that gives this base, when
    /// one does: its `~/cmd_vel` drives the base, and the robot's `cmd_vel` does not.
    #[serde(skip)]
    pub controller: Option<String>,
}

/// A name, or a list of names.
fn one_or_more<'de, D: serde::Deserializer<'de>>(to: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Names {
        One(String),
        More(Vec<String>),
    }
    Ok(match Names::deserialize(to)? {
        Names::One(name) => vec![name],
        Names::More(names) => names,
    })
}

fn default_twist_timeout() -> f64 {
    0.5
}

/// A keyframe preset: a sequence of actuator-target poses, each blended in, then held (the
/// control layer checks and plays it).
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub name: String,
    #[serde(default = "yes", rename = "loop")]
    pub looping: bool,
    pub poses: Vec<PresetPose>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PresetPose {
    pub name: String,
    /// Actuator targets in the robot's actuator order.
    pub targets: Vec<f64>,
    /// Seconds held after the blend.
    pub hold: f64,
    /// Seconds of ease-in-out blend from the previous pose.
    pub blend: f64,
}
