//! A diff_drive_controller's parameters, as ros2_control's DiffDriveController reads them,
//! and the base and odometry of the robot's config they stand for: a robot whose config
//! has no `control.base` gets its base from the diff_drive_controller its controllers file
//! declares (one implementation of the base, whichever way it is given).
use super::controller_params::{ParamError, flag, names, number};
use super::{BaseConfig, BaseKind, OdometryConfig, OdometrySource};
use serde_json::{Map, Value};

/// The controller type.
pub const DIFF_DRIVE: &str = "diff_drive_controller/DiffDriveController";

/// What the bridge reads of a diff_drive_controller.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffDrive {
    /// Each side's wheels (several on a skid steer, all driven alike).
    pub left_wheels: Vec<String>,
    pub right_wheels: Vec<String>,
    /// `wheel_separation` times `wheel_separation_multiplier`.
    pub wheel_separation: f64,
    pub wheel_radius: f64,
    /// Seconds after the last twist at which the base stops (`cmd_vel_timeout`, 0.5).
    pub cmd_vel_timeout: f64,
    /// `odom_frame_id` ("odom").
    pub odom_frame: String,
    /// `enable_odom_tf` (true): `odom -> base` on /tf.
    pub odom_tf: bool,
    /// `~/cmd_vel` is geometry_msgs/TwistStamped (`use_stamped_vel`, true), else Twist.
    pub stamped: bool,
    /// `open_loop` (false): odometry from the commanded twist instead of the wheels; read
    /// here as the wheels' (see the table in docs/ros2-control.md).
    pub open_loop: bool,
    /// `linear.x` and `angular.z` velocity limits ([min, max]), where given.
    pub linear_limits: Option<[f64; 2]>,
    pub angular_limits: Option<[f64; 2]>,
}

/// The velocity limits `<axis>.max_velocity` and `.min_velocity` (default: -max), unless
/// `<axis>.has_velocity_limits` is false or no maximum is given.
fn velocity_limits(
    params: &Map<String, Value>,
    axis: &str,
) -> Result<Option<[f64; 2]>, ParamError> {
    let (group, component) = axis.split_once('.').unwrap_or((axis, ""));
    let Some(Value::Object(limits)) = params.get(group).and_then(|g| g.get(component)) else {
        return Ok(None);
    };
    if !flag(limits, "has_velocity_limits", true)? {
        return Ok(None);
    }
    let Some(max) = number(limits, "max_velocity")? else {
        return Ok(None);
    };
    let min = number(limits, "min_velocity")?.unwrap_or(-max);
    if min > max {
        return Err(ParamError::MinAboveMax {
            axis: axis.to_string(),
            min,
            max,
        });
    }
    Ok(Some([min, max]))
}

/// The wheels of a side (`left_wheel_names` / `right_wheel_names`), at least one.
fn wheels(params: &Map<String, Value>, name: &str) -> Result<Vec<String>, ParamError> {
    match names(params, name)?.unwrap_or_default() {
        none if none.is_empty() => Err(ParamError::NoWheel(name.to_string())),
        wheels => Ok(wheels),
    }
}

impl DiffDrive {
    /// Reads a diff_drive_controller's parameters; what is wrong names its parameter.
    pub fn parse(params: &Map<String, Value>) -> Result<Self, ParamError> {
        let positive = |name: &str, default: Option<f64>| -> Result<f64, ParamError> {
            match number(params, name)?.or(default) {
                Some(x) if x > 0.0 => Ok(x),
                Some(x) => Err(ParamError::NotPositive(name.to_string(), x)),
                None => Err(ParamError::Required(name.to_string())),
            }
        };
        let multiplier = positive("wheel_separation_multiplier", Some(1.0))?;
        for side in ["left", "right"] {
            let name = format!("{side}_wheel_radius_multiplier");
            if positive(&name, Some(1.0))? != 1.0 {
                return Err(ParamError::NotOne(name));
            }
        }
        let cmd_vel_timeout = number(params, "cmd_vel_timeout")?.unwrap_or(0.5);
        if cmd_vel_timeout < 0.0 {
            return Err(ParamError::Negative(
                "cmd_vel_timeout".into(),
                cmd_vel_timeout,
            ));
        }
        let odom_frame = match params.get("odom_frame_id") {
            None => "odom".to_string(),
            Some(Value::String(frame)) if !frame.is_empty() => frame.clone(),
            Some(v) => return Err(ParamError::NotAFrame("odom_frame_id".into(), v.clone())),
        };
        Ok(Self {
            left_wheels: wheels(params, "left_wheel_names")?,
            right_wheels: wheels(params, "right_wheel_names")?,
            wheel_separation: positive("wheel_separation", None)? * multiplier,
            wheel_radius: positive("wheel_radius", None)?,
            cmd_vel_timeout,
            odom_frame,
            odom_tf: flag(params, "enable_odom_tf", true)?,
            stamped: flag(params, "use_stamped_vel", true)?,
            open_loop: flag(params, "open_loop", false)?,
            linear_limits: velocity_limits(params, "linear.x")?,
            angular_limits: velocity_limits(params, "angular.z")?,
        })
    }

    /// A twist's linear x and angular z within the velocity limits.
    pub fn limited(&self, linear_x: f64, angular_z: f64) -> (f64, f64) {
        let clamp = |v: f64, limits: Option<[f64; 2]>| limits.map_or(v, |[lo, hi]| v.clamp(lo, hi));
        (
            clamp(linear_x, self.linear_limits),
            clamp(angular_z, self.angular_limits),
        )
    }

    /// The robot config's base this controller stands for.
    pub fn base(&self) -> BaseConfig {
        BaseConfig {
            kind: BaseKind::DiffDrive,
            left_wheel: self.left_wheels.clone(),
            right_wheel: self.right_wheels.clone(),
            wheel_radius: Some(self.wheel_radius),
            wheel_separation: Some(self.wheel_separation),
            cmd_vel_timeout: self.cmd_vel_timeout,
            max_wheel_acceleration: None,
            controller: None,
        }
    }

    /// Its odometry, published as `<controller>/odom`: from the wheels, as upstream's.
    pub fn odometry(&self, controller: &str, odometry: &OdometryConfig) -> OdometryConfig {
        OdometryConfig {
            frame_id: self.odom_frame.clone(),
            source: OdometrySource::Wheels,
            topic: format!("{controller}/odom"),
            tf: self.odom_tf,
            ..odometry.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(yaml: &str) -> Map<String, Value> {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn reads_upstream_parameters_and_names_the_wrong_one() {
        let drive = DiffDrive::parse(&params(
            "{left_wheel_names: [l], right_wheel_names: [r], wheel_separation: 0.4, wheel_radius: 0.1, wheel_separation_multiplier: 1.5, use_stamped_vel: false}",
        ))
        .unwrap();
        assert_eq!(
            (
                drive.left_wheels[0].as_str(),
                drive.right_wheels[0].as_str()
            ),
            ("l", "r")
        );
        assert!((drive.wheel_separation - 0.6).abs() < 1e-12);
        assert_eq!((drive.cmd_vel_timeout, drive.stamped), (0.5, false));
        assert_eq!((drive.odom_frame.as_str(), drive.odom_tf), ("odom", true));
        let filtered = "{left_wheel_names: [l], right_wheel_names: [r], wheel_separation: 0.4, wheel_radius: 0.1, enable_odom_tf: false}";
        assert!(!DiffDrive::parse(&params(filtered)).unwrap().odom_tf);
        let limited = DiffDrive::parse(&params(
            "{left_wheel_names: [l], right_wheel_names: [r], wheel_separation: 0.4, wheel_radius: 0.1, linear: {x: {max_velocity: 0.5}}, angular: {z: {has_velocity_limits: false, max_velocity: 1.0}}}",
        ))
        .unwrap();
        assert_eq!(limited.limited(2.0, 3.0), (0.5, 3.0));
        assert_eq!(limited.limited(-2.0, 0.0), (-0.5, 0.0));
        let wrong = |yaml| DiffDrive::parse(&params(yaml)).unwrap_err().to_string();
        assert!(
            wrong("{left_wheel_names: [l], right_wheel_names: [r], wheel_radius: 0.1}")
                .contains("'wheel_separation' is required")
        );
        assert!(wrong("{left_wheel_names: [], right_wheel_names: [r], wheel_separation: 1, wheel_radius: 0.1}")
            .contains("'left_wheel_names' must name the wheel joints"));
        let skid = DiffDrive::parse(&params("{left_wheel_names: [fl, rl], right_wheel_names: [fr, rr], wheel_separation: 0.27, wheel_radius: 0.04}")).unwrap();
        assert_eq!(skid.base().left_wheel, ["fl", "rl"]);
        assert!(wrong("{left_wheel_names: [l], right_wheel_names: [r], wheel_separation: -1, wheel_radius: 0.1}")
            .contains("'wheel_separation' must be positive"));
    }
}
