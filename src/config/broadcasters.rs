//! ros2_control's sensor broadcasters, as a controllers file declares them, and the robot
//! config's sensor topics they stand for. A broadcaster's `sensor_name` S names MuJoCo
//! sensors of the robot as mujoco_ros2_control names them: an IMU is the framequat `S_quat`,
//! the gyro `S_gyro` and the accelerometer `S_accel` (those there are); a force-torque
//! sensor the force `S_force` and the torque `S_torque`; a range sensor the rangefinder `S`.
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

/// What the bridge reads of a broadcaster: `sensor_name` and `frame_id`, both required
/// upstream.
#[derive(Clone, Debug, PartialEq)]
pub struct Broadcaster {
    pub kind: SensorKind,
    pub sensor_name: String,
    pub frame_id: String,
}

fn text(params: &Map<String, Value>, name: &str) -> Result<String, String> {
    match params.get(name) {
        Some(Value::String(value)) if !value.is_empty() => Ok(value.clone()),
        Some(v) => Err(format!("'{name}' must be a name, got {v}")),
        None => Err(format!("'{name}' is required")),
    }
}

impl Broadcaster {
    /// Reads a broadcaster of kind `kind`; what is wrong names its parameter.
    pub fn parse(kind: SensorKind, params: &Map<String, Value>) -> Result<Self, String> {
        Ok(Self {
            kind,
            sensor_name: text(params, "sensor_name")?,
            frame_id: text(params, "frame_id")?,
        })
    }

    /// The robot's MuJoCo sensor names it reads, given which of them the robot has; the
    /// ones it needs missing are an error naming them.
    pub fn sensors(&self, has: impl Fn(&str) -> bool) -> Result<Vec<Option<String>>, String> {
        let names: Vec<Option<String>> = self
            .kind
            .suffixes()
            .iter()
            .map(|suffix| Some(format!("{}{suffix}", self.sensor_name)).filter(|n| has(n)))
            .collect();
        if names.iter().all(Option::is_none) {
            let wanted: Vec<String> = self
                .kind
                .suffixes()
                .iter()
                .map(|suffix| format!("{}{suffix}", self.sensor_name))
                .collect();
            return Err(format!(
                "sensor '{}': the robot has none of the MuJoCo sensors {wanted:?}",
                self.sensor_name
            ));
        }
        Ok(names)
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
        let sensors = imu.sensors(|n| n != "imu_sensor_accel").unwrap();
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
        let none = imu.sensors(|_| false).unwrap_err();
        assert!(none.contains("none of the MuJoCo sensors"), "{none}");
        let no_frame: Map<String, Value> = serde_saphyr::from_str("{sensor_name: s}").unwrap();
        assert_eq!(
            Broadcaster::parse(SensorKind::Range, &no_frame).unwrap_err(),
            "'frame_id' is required"
        );
    }
}
