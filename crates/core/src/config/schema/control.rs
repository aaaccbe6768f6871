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
    /// Limits on the twist the base follows, applied each step (jerk, then acceleration,
    /// then velocity, as ros2_control's diff_drive_controller and Gazebo's DiffDrive apply
    /// them); none: the twist as sent.
    #[serde(default)]
    pub limits: TwistLimits,
    /// The diff_drive_controller of the robot's controllers file that gives this base, when
    /// one does: its `~/cmd_vel` drives the base, and the robot's `cmd_vel` does not.
    #[serde(skip)]
    pub controller: Option<String>,
}

/// Limits on a base's forward speed and turn rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TwistLimits {
    #[serde(default)]
    pub linear_x: AxisLimits,
    #[serde(default)]
    pub angular_z: AxisLimits,
}

/// One twist axis's bounds on its velocity, acceleration and jerk (m/s, m/s^2, m/s^3 or
/// the same in rad).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct AxisLimits {
    #[serde(default)]
    pub velocity: Bounds,
    #[serde(default)]
    pub acceleration: Bounds,
    #[serde(default)]
    pub jerk: Bounds,
}

/// A lower and an upper bound, each unbounded when absent (a deceleration is a negative
/// `min` acceleration).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl TwistLimits {
    /// The bounds given, in words ("linear_x velocity -0.5..0.5, ..."); none when none is.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        for (axis, limits) in [("linear_x", &self.linear_x), ("angular_z", &self.angular_z)] {
            let quantities = [
                ("velocity", limits.velocity),
                ("acceleration", limits.acceleration),
                ("jerk", limits.jerk),
            ];
            for (what, bounds) in quantities.into_iter().filter(|(_, b)| b.given()) {
                let end = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
                parts.push(format!(
                    "{axis} {what} {}..{}",
                    end(bounds.min),
                    end(bounds.max)
                ));
            }
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

impl Bounds {
    pub fn new(min: f64, max: f64) -> Self {
        Self {
            min: Some(min),
            max: Some(max),
        }
    }

    pub fn given(&self) -> bool {
        self.min.is_some() || self.max.is_some()
    }
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
