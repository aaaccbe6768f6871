//! ros2_control's sensor broadcasters, as a controllers file declares them, and the robot
//! config's sensor topics they stand for. A broadcaster's `sensor_name` S names MuJoCo
//! sensors of the robot as mujoco_ros2_control names them: an IMU is the framequat `S_quat`,
//! the gyro `S_gyro` and the accelerometer `S_accel` (those there are); a force-torque
//! sensor the force `S_force` and the torque `S_torque`; a range sensor the rangefinder `S`.
//! Where the URDF's `<ros2_control>` has a sensor S (`HardwareSensor`), its
//! `mujoco_sensor_name` and its hardware's suffix parameters name them instead.
use super::controller_params::{ControllerError, ParamError};
use super::{ForceTorqueTopic, ImuTopic, RangeTopic};
use serde_json::{Map, Value};

pub const IMU: &str = "imu_sensor_broadcaster/IMUSensorBroadcaster";
pub const FORCE_TORQUE: &str = "force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster";
pub const RANGE: &str = "range_sensor_broadcaster/RangeSensorBroadcaster";

/// Which sensor a broadcaster reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SensorKind {
    Imu,
    ForceTorque,
    Range,
}

impl SensorKind {
    /// The kind of broadcaster type `type_name`, if it is one.
    pub fn of(type_name: &str) -> Option<Self> {
        match type_name {
            IMU => Some(Self::Imu),
            FORCE_TORQUE => Some(Self::ForceTorque),
            RANGE => Some(Self::Range),
            _ => None,
        }
    }

    /// The MuJoCo sensor names (suffixes to `sensor_name`) each value comes from.
    pub fn suffixes(self) -> &'static [&'static str] {
        match self {
            Self::Imu => &["_quat", "_gyro", "_accel"],
            Self::ForceTorque => &["_force", "_torque"],
            Self::Range => &[""],
        }
    }

    /// The hardware parameters of mujoco_ros2_control that replace each of `suffixes`.
    pub fn suffix_params(self) -> &'static [&'static str] {
        match self {
            Self::Imu => &[
                "orientation_mjcf_suffix",
                "angular_velocity_mjcf_suffix",
                "linear_acceleration_mjcf_suffix",
            ],
            Self::ForceTorque => &["force_mjcf_suffix", "torque_mjcf_suffix"],
            Self::Range => &[""],
        }
    }

    /// The state interfaces upstream's hardware gives such a sensor.
    pub fn interfaces(self) -> &'static [&'static str] {
        match self {
            Self::Imu => &[
                "orientation.x",
                "orientation.y",
                "orientation.z",
                "orientation.w",
                "angular_velocity.x",
                "angular_velocity.y",
                "angular_velocity.z",
                "linear_acceleration.x",
                "linear_acceleration.y",
                "linear_acceleration.z",
            ],
            Self::ForceTorque => &[
                "force.x", "force.y", "force.z", "torque.x", "torque.y", "torque.z",
            ],
            Self::Range => &["range"],
        }
    }
}

/// A sensor of a URDF's `<ros2_control>`: the prefix of its MuJoCo sensors
/// (`mujoco_sensor_name`, default its name) and the suffixes its hardware gives.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HardwareSensor {
    pub name: String,
    pub mujoco_name: String,
    /// (`<kind>_mjcf_suffix` parameter, suffix), those the hardware gives.
    pub suffixes: Vec<(String, String)>,
}

/// What the bridge reads of a broadcaster: `sensor_name` and `frame_id`, both required
/// upstream.
#[derive(Clone, Debug, PartialEq)]
pub struct Broadcaster {
    pub kind: SensorKind,
    pub sensor_name: String,
    pub frame_id: String,
}

fn text(params: &Map<String, Value>, name: &str) -> Result<String, ParamError> {
    match params.get(name) {
        Some(Value::String(value)) if !value.is_empty() => Ok(value.clone()),
        Some(v) => Err(ParamError::NotAName(name.to_string(), v.clone())),
        None => Err(ParamError::Required(name.to_string())),
    }
}

impl Broadcaster {
    /// Reads a broadcaster of kind `kind`; what is wrong names its parameter.
    pub fn parse(kind: SensorKind, params: &Map<String, Value>) -> Result<Self, ParamError> {
        Ok(Self {
            kind,
            sensor_name: text(params, "sensor_name")?,
            frame_id: text(params, "frame_id")?,
        })
    }

    /// The MuJoCo sensor names it reads: `sensor_name` with its kind's suffixes, or what
    /// the `<ros2_control>` sensor of that name in `hardware` says.
    pub fn wanted(&self, hardware: &[HardwareSensor]) -> Vec<String> {
        let declared = hardware.iter().find(|h| h.name == self.sensor_name);
        let prefix = declared.map_or(self.sensor_name.as_str(), |h| h.mujoco_name.as_str());
        self.kind
            .suffixes()
            .iter()
            .zip(self.kind.suffix_params())
            .map(|(suffix, param)| {
                let given = declared
                    .and_then(|h| h.suffixes.iter().find(|(p, _)| p == param))
                    .map_or(*suffix, |(_, s)| s.as_str());
                format!("{prefix}{given}")
            })
            .collect()
    }

    /// Those of `wanted` names that the robot has; none of them is an error naming them.
    pub fn sensors(
        &self,
        wanted: Vec<String>,
        has: impl Fn(usize, &str) -> bool,
    ) -> Result<Vec<Option<String>>, ControllerError> {
        let found: Vec<Option<String>> = wanted
            .iter()
            .enumerate()
            .map(|(k, name)| Some(name.clone()).filter(|n| has(k, n)))
            .collect();
        if found.iter().all(Option::is_none) {
            return Err(ControllerError::NoSensors {
                sensor: self.sensor_name.clone(),
                wanted,
            });
        }
        Ok(found)
    }

    /// The robot config's IMU topic `<controller>/imu` it stands for.
    pub fn imu(&self, controller: &str, sensors: &[Option<String>]) -> ImuTopic {
        ImuTopic {
            topic: format!("{controller}/imu"),
            orientation: sensors[0].clone(),
            angular_velocity: sensors[1].clone(),
            linear_acceleration: sensors[2].clone(),
            frame_id: Some(self.frame_id.clone()),
            rate: None,
            controller: Some(controller.to_string()),
        }
    }

    /// The robot config's wrench topic `<controller>/wrench` it stands for.
    pub fn force_torque(&self, controller: &str, sensors: &[Option<String>]) -> ForceTorqueTopic {
        ForceTorqueTopic {
            topic: format!("{controller}/wrench"),
            force: sensors[0].clone(),
            torque: sensors[1].clone(),
            frame_id: Some(self.frame_id.clone()),
            rate: None,
            measure_direction: Default::default(),
            controller: Some(controller.to_string()),
        }
    }

    /// The robot config's range topic `<controller>/range` it stands for.
    pub fn range(&self, controller: &str, sensor: &str) -> RangeTopic {
        RangeTopic {
            topic: format!("{controller}/range"),
            sensor: sensor.to_string(),
            field_of_view: 0.0,
            min_range: 0.0,
            max_range: None,
            frame_id: Some(self.frame_id.clone()),
            rate: None,
            controller: Some(controller.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broadcaster_reads_the_sensors_its_name_prefixes() {
        let params: Map<String, Value> =
            serde_saphyr::from_str("{sensor_name: imu_sensor, frame_id: imu_link}").unwrap();
        let imu = Broadcaster::parse(SensorKind::Imu, &params).unwrap();
        let sensors = imu
            .sensors(imu.wanted(&[]), |_, n| n != "imu_sensor_accel")
            .unwrap();
        assert_eq!(
            sensors,
            [
                Some("imu_sensor_quat".into()),
                Some("imu_sensor_gyro".into()),
                None
            ]
        );
        let topic = imu.imu("imu_sensor_broadcaster", &sensors);
        assert_eq!(topic.topic, "imu_sensor_broadcaster/imu");
        assert_eq!(topic.frame_id.as_deref(), Some("imu_link"));
        let none = imu.sensors(imu.wanted(&[]), |_, _| false).unwrap_err();
        let none = none.to_string();
        assert!(none.contains("none of the MuJoCo sensors"), "{none}");
        // A <ros2_control> sensor of that name renames them, as mujoco_ros2_control does.
        let hardware = HardwareSensor {
            name: "imu_sensor".into(),
            mujoco_name: "body_imu".into(),
            suffixes: vec![("linear_acceleration_mjcf_suffix".into(), "_acc".into())],
        };
        assert_eq!(
            imu.wanted(&[hardware]),
            ["body_imu_quat", "body_imu_gyro", "body_imu_acc"]
        );
        let no_frame: Map<String, Value> = serde_saphyr::from_str("{sensor_name: s}").unwrap();
        assert_eq!(
            Broadcaster::parse(SensorKind::Range, &no_frame)
                .unwrap_err()
                .to_string(),
            "'frame_id' is required"
        );
    }
}
