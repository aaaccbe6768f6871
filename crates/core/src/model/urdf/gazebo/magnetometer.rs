//! A `<gazebo>` magnetometer (gz-sim's `type="magnetometer"`): a site on its link with a
//! MuJoCo magnetometer, listed as the robot's magnetometer on the sensor's topic and frame.
//! MuJoCo's field is the world's `magnetic` option, in tesla, turned into the site's frame.
use super::imu::axis_noise;
use super::values::{frame, pose, rate, single_topic};
use crate::config::NoiseConfig;
use crate::model::xml::Element;

#[derive(Debug, Clone, PartialEq)]
pub struct GazeboMagnetometer {
    /// The sensor's name: its site's, and the stem of its MuJoCo sensor's name.
    pub name: String,
    pub link: String,
    pub xyz: [f64; 3],
    pub rpy: [f64; 3],
    pub rate: f64,
    pub topic: String,
    pub frame_id: String,
    /// The noise of one axis (the bridge gives each axis the same).
    pub noise: Option<NoiseConfig>,
    /// What could not be kept as written (axes with different noise), in words.
    pub changed: Option<String>,
}

impl GazeboMagnetometer {
    /// Its MuJoCo sensor's name.
    pub fn sensor(&self) -> String {
        format!("{}_mag", self.name)
    }
}

pub fn read(sensor: &Element, name: &str, link: &str) -> Result<GazeboMagnetometer, String> {
    let (xyz, rpy) = pose(sensor)?;
    let (noise, differs) = axis_noise(Some(sensor), "magnetometer")?;
    Ok(GazeboMagnetometer {
        name: name.to_string(),
        link: link.to_string(),
        xyz,
        rpy,
        // gz-sim's magnetometer without a rate publishes every step; the bridge's IMU rate
        // is the nearest thing that does not flood a subscriber.
        rate: rate(sensor, 100.0)?,
        topic: single_topic(sensor, name.to_string()),
        frame_id: frame(sensor, link, None),
        noise,
        changed: differs.then(|| "its axes' noise differ: each axis gets the x axis's".into()),
    })
}

#[cfg(test)]
mod tests {
    use crate::model::xml;

    #[test]
    fn a_magnetometer_keeps_its_pose_topic_frame_rate_and_noise() {
        let found = super::super::read(
            &xml::parse(
                "<robot name='r'><gazebo reference='mag_link'><sensor name='compass' \
                 type='magnetometer'><update_rate>50</update_rate><topic>/mag</topic>\
                 <gz_frame_id>compass_frame</gz_frame_id><pose>0 0 0.1 0 0 1.57</pose>\
                 <magnetometer><x><noise type='gaussian'><stddev>1e-6</stddev></noise></x>\
                 </magnetometer></sensor></gazebo></robot>",
            )
            .unwrap(),
        );
        let [mag] = &found.magnetometers[..] else {
            panic!("{found:?}")
        };
        assert_eq!((mag.topic.as_str(), mag.rate), ("/mag", 50.0));
        assert_eq!(
            (mag.link.as_str(), mag.frame_id.as_str()),
            ("mag_link", "compass_frame")
        );
        assert_eq!((mag.xyz, mag.rpy), ([0.0, 0.0, 0.1], [0.0, 0.0, 1.57]));
        assert_eq!(mag.noise.as_ref().unwrap().stddev, 1e-6);
        assert_eq!(mag.sensor(), "compass_mag");
        assert!(
            found.taken[0].contains("magnetometer on '/mag'"),
            "{found:?}"
        );
    }
}
