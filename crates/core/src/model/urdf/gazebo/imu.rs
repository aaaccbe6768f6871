//! A `<gazebo>` IMU (`type="imu"`, both syntaxes): a site on its link with a framequat, a
//! gyro and an accelerometer, named as mujoco_ros2_control names an IMU's sensors so that a
//! ros2_control sensor of the same name (an imu_sensor_broadcaster's) reads them too.
use super::values::{frame, noise, pose, rate, single_topic};
use crate::config::NoiseConfig;
use crate::model::xml::Element;

#[derive(Debug, Clone, PartialEq)]
pub struct GazeboImu {
    /// The sensor's name: its site's, and the stem of its MuJoCo sensors' names.
    pub name: String,
    pub link: String,
    pub xyz: [f64; 3],
    pub rpy: [f64; 3],
    pub rate: f64,
    pub topic: String,
    pub frame_id: String,
    /// The noise of one axis of the angular velocity and of the linear acceleration (the
    /// bridge gives each axis the same).
    pub gyro_noise: Option<NoiseConfig>,
    pub accel_noise: Option<NoiseConfig>,
    /// What could not be kept as written (axes with different noise), in words.
    pub changed: Option<String>,
}

impl GazeboImu {
    pub fn orientation_sensor(&self) -> String {
        format!("{}_quat", self.name)
    }
    pub fn gyro_sensor(&self) -> String {
        format!("{}_gyro", self.name)
    }
    pub fn accelerometer_sensor(&self) -> String {
        format!("{}_accel", self.name)
    }
}

pub fn read(sensor: &Element, name: &str, link: &str) -> Result<GazeboImu, String> {
    let (xyz, rpy) = pose(sensor)?;
    let optics = sensor.child("imu");
    let (gyro_noise, gyro_differs) = axis_noise(optics, "angular_velocity")?;
    let (accel_noise, accel_differs) = axis_noise(optics, "linear_acceleration")?;
    let changed = (gyro_differs || accel_differs)
        .then(|| "its axes' noise differ: each axis gets the x axis's".to_string());
    Ok(GazeboImu {
        name: name.to_string(),
        link: link.to_string(),
        xyz,
        rpy,
        rate: rate(sensor, 100.0)?,
        topic: single_topic(sensor, format!("{name}/imu")),
        frame_id: frame(sensor, link, None),
        gyro_noise,
        accel_noise,
        changed,
    })
}

/// `<imu><quantity><x|y|z><noise>` (a magnetometer: `<sensor><magnetometer><x>`): the first
/// axis's noise, and whether the others differ.
pub(super) fn axis_noise(
    imu: Option<&Element>,
    quantity: &str,
) -> Result<(Option<NoiseConfig>, bool), String> {
    let Some(quantity) = imu.and_then(|i| i.child(quantity)) else {
        return Ok((None, false));
    };
    let mut axes = Vec::new();
    for axis in ["x", "y", "z"] {
        if let Some(written) = quantity.child(axis).and_then(|a| a.child("noise")) {
            axes.push(noise(written)?);
        }
    }
    let differs = axes.windows(2).any(|pair| pair[0] != pair[1]);
    Ok((axes.into_iter().next(), differs))
}

#[cfg(test)]
mod tests {
    use crate::model::xml;

    #[test]
    fn a_gz_imu_keeps_its_topic_rate_and_noise_and_a_classic_one_its_remapping() {
        let found = super::super::read(
            &xml::parse(
                "<robot name='r'><gazebo reference='imu_link'><sensor name='imu' type='imu'>\
                 <update_rate>200</update_rate><topic>imu</topic><imu><angular_velocity>\
                 <x><noise type='gaussian'><stddev>0.01</stddev></noise></x>\
                 <y><noise type='gaussian'><stddev>0.02</stddev></noise></y></angular_velocity>\
                 </imu></sensor></gazebo><gazebo reference='imu2'><sensor name='imu_sensor' \
                 type='imu'><update_rate>20</update_rate><plugin filename='libgazebo_ros_imu_sensor.so' \
                 name='imu_plugin'><ros><remapping>~/out:=imu/data</remapping></ros></plugin>\
                 </sensor></gazebo></robot>",
            )
            .unwrap(),
        );
        let [gz, classic] = &found.imus[..] else {
            panic!("{found:?}")
        };
        assert_eq!((gz.topic.as_str(), gz.rate), ("imu", 200.0));
        assert_eq!(gz.frame_id, "imu_link");
        assert_eq!(gz.gyro_noise.as_ref().unwrap().stddev, 0.01);
        assert!(gz.changed.is_some());
        assert_eq!(gz.accel_noise, None);
        assert_eq!((classic.topic.as_str(), classic.rate), ("imu/data", 20.0));
        assert_eq!(classic.gyro_sensor(), "imu_sensor_gyro");
    }
}
