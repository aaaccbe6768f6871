//! A diff_drive_controller's parameters, as ros2_control's DiffDriveController reads them,
//! and the base and odometry of the robot's config they stand for: a robot whose config
//! has no `control.base` gets its base from the diff_drive_controller its controllers file
//! declares (one implementation of the base, whichever way it is given).
use super::controller_params::{ParamError, flag, names, number};
use super::{
    AxisLimits, BaseConfig, BaseKind, Bounds, OdometryConfig, OdometrySource, TwistLimits,
};
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
    /// `base_frame_id`, where given: the odometry's child frame. Not given, the root link
    /// (upstream's default `base_link` would give a URDF rooted at `base_footprint` a
    /// second parent on /tf).
    pub base_frame: Option<String>,
    /// `~/cmd_vel` is geometry_msgs/TwistStamped (`use_stamped_vel`, true), else Twist.
    pub stamped: bool,
    /// `open_loop` (false): odometry from the commanded twist instead of the wheels; read
    /// here as the wheels' (see the table in docs/ros2-control.md).
    pub open_loop: bool,
    /// `linear.x` and `angular.z` velocity, acceleration and jerk limits, where given.
    pub limits: TwistLimits,
}

/// An axis's limits: for each of velocity, acceleration and jerk, `<axis>.max_<what>` and
/// `.min_<what>` (default: -max), unless `<axis>.has_<what>_limits` is false or no maximum
/// is given (Jazzy reads a maximum alone; Humble's flag defaults to false, which a file
/// written for it sets to true beside its maximum).
fn axis_limits(params: &Map<String, Value>, axis: &str) -> Result<AxisLimits, ParamError> {
    let (group, component) = axis.split_once('.').unwrap_or((axis, ""));
    let Some(Value::Object(limits)) = params.get(group).and_then(|g| g.get(component)) else {
        return Ok(AxisLimits::default());
    };
    let bounds = |what: &str| -> Result<Bounds, ParamError> {
        if !flag(limits, &format!("has_{what}_limits"), true)? {
            return Ok(Bounds::default());
        }
        let Some(max) = number(limits, &format!("max_{what}"))? else {
            return Ok(Bounds::default());
        };
        let min = number(limits, &format!("min_{what}"))?.unwrap_or(-max);
        if min > max {
            return Err(ParamError::MinAboveMax {
                axis: axis.to_string(),
                what: what.to_string(),
                min,
                max,
            });
        }
        Ok(Bounds::new(min, max))
    };
    Ok(AxisLimits {
        velocity: bounds("velocity")?,
        acceleration: bounds("acceleration")?,
        jerk: bounds("jerk")?,
    })
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
            base_frame: match params.get("base_frame_id") {
                None => None,
                Some(Value::String(frame)) if !frame.is_empty() => Some(frame.clone()),
                Some(v) => return Err(ParamError::NotAFrame("base_frame_id".into(), v.clone())),
            },
            stamped: flag(params, "use_stamped_vel", true)?,
            open_loop: flag(params, "open_loop", false)?,
            limits: TwistLimits {
                linear_x: axis_limits(params, "linear.x")?,
                angular_z: axis_limits(params, "angular.z")?,
            },
        })
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
            limits: self.limits,
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
            base_frame: self.base_frame.clone().or(odometry.base_frame.clone()),
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
        assert_eq!(drive.base_frame, None);
        let based = "{left_wheel_names: [l], right_wheel_names: [r], wheel_separation: 0.4, wheel_radius: 0.1, base_frame_id: base_footprint}";
        let based = DiffDrive::parse(&params(based)).unwrap();
        let odometry = based.odometry("ddc", &OdometryConfig::default());
        assert_eq!(odometry.base_frame.as_deref(), Some("base_footprint"));
        let unnamed = "{left_wheel_names: [l], right_wheel_names: [r], wheel_separation: 1, wheel_radius: 0.1, base_frame_id: 3}";
        let unnamed = DiffDrive::parse(&params(unnamed)).unwrap_err().to_string();
        assert!(unnamed.contains("base_frame_id"), "{unnamed}");
        let limited = DiffDrive::parse(&params(
            "{left_wheel_names: [l], right_wheel_names: [r], wheel_separation: 0.4, wheel_radius: 0.1, linear: {x: {max_velocity: 0.5}}, angular: {z: {has_velocity_limits: false, max_velocity: 1.0}}}",
        ))
        .unwrap();
        assert_eq!(limited.limits.linear_x.velocity, Bounds::new(-0.5, 0.5));
        assert_eq!(limited.limits.angular_z, AxisLimits::default());
        let ramped = DiffDrive::parse(&params(
            "{left_wheel_names: [l], right_wheel_names: [r], wheel_separation: 0.4, wheel_radius: 0.1, linear: {x: {has_acceleration_limits: true, max_acceleration: 0.8, min_acceleration: -2.0, max_jerk: 5.0}}, angular: {z: {max_acceleration: 1.5, has_jerk_limits: false, max_jerk: 9.0}}}",
        ))
        .unwrap();
        let x = ramped.limits.linear_x;
        assert_eq!(
            (x.acceleration, x.jerk),
            (Bounds::new(-2.0, 0.8), Bounds::new(-5.0, 5.0))
        );
        let z = ramped.limits.angular_z;
        assert_eq!(
            (z.acceleration, z.jerk),
            (Bounds::new(-1.5, 1.5), Bounds::default())
        );
        assert_eq!(ramped.base().limits, ramped.limits);
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
