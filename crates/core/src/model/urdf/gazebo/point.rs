//! `<gazebo>` sensors that read where a point of the link is: `navsat` (gz-sim) or `gps`
//! (Classic), `air_pressure` and `altimeter`. Each becomes the bridge's GPS, barometer or
//! altimeter at the sensor's `<pose>` on the link (its turn does not matter to any of them),
//! with its rate, topic, frame and noise channels.
use super::values::{frame, noise, pose, rate, single_topic};
use crate::config::{NoiseConfig, PointSensorConfig};
use crate::model::xml::Element;

pub const TYPES: [&str; 4] = ["navsat", "gps", "air_pressure", "altimeter"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    Gps,
    Barometer,
    Altimeter,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GazeboPoint {
    pub kind: PointKind,
    pub sensor: PointSensorConfig,
    /// Its noise channels, under the keys the robot's `noise:` takes.
    pub noise: Vec<(String, NoiseConfig)>,
    /// What could not be kept as written, in words.
    pub changed: Option<String>,
}

pub fn read(sensor: &Element, name: &str, link: &str, kind: &str) -> Result<GazeboPoint, String> {
    let (xyz, _) = pose(sensor)?;
    let (kind, fallback_topic) = match kind {
        "navsat" | "gps" => (PointKind::Gps, format!("{name}/fix")),
        "air_pressure" => (PointKind::Barometer, name.to_string()),
        _ => (PointKind::Altimeter, name.to_string()),
    };
    let mut noises = Vec::new();
    let mut channel = |key: String, at: Option<&Element>| -> Result<(), String> {
        if let Some(written) = at.and_then(|a| a.child("noise")) {
            noises.push((key, noise(written)?));
        }
        Ok(())
    };
    let mut changed = None;
    match kind {
        PointKind::Gps => {
            let optics = sensor.child("navsat").or_else(|| sensor.child("gps"));
            for (sensing, what) in [
                ("position_sensing", "position"),
                ("velocity_sensing", "velocity"),
            ] {
                let block = optics.and_then(|o| o.child(sensing));
                for side in ["horizontal", "vertical"] {
                    let at = block.and_then(|b| b.child(side));
                    channel(format!("{name}/{side}_{what}"), at)?;
                }
            }
        }
        PointKind::Barometer => {
            let optics = sensor.child("air_pressure");
            channel(name.to_string(), optics.and_then(|o| o.child("pressure")))?;
            if optics.is_some_and(|o| o.child("reference_altitude").is_some()) {
                changed = Some(
                    "its <reference_altitude> is left: the pressure is at world.origin.altitude \
                     plus the height"
                        .to_string(),
                );
            }
        }
        PointKind::Altimeter => {
            let optics = sensor.child("altimeter");
            for what in ["vertical_position", "vertical_velocity"] {
                channel(format!("{name}/{what}"), optics.and_then(|o| o.child(what)))?;
            }
        }
    }
    Ok(GazeboPoint {
        kind,
        sensor: PointSensorConfig {
            name: name.to_string(),
            body: link.to_string(),
            xyz,
            rate: rate(sensor, 10.0)?,
            topic: Some(single_topic(sensor, fallback_topic)),
            frame_id: Some(frame(sensor, link, None)),
        },
        noise: noises,
        changed,
    })
}

#[cfg(test)]
mod tests {
    use super::PointKind;
    use crate::model::xml;

    #[test]
    fn navsat_gps_air_pressure_and_altimeter_keep_topic_frame_rate_and_noise() {
        let found = super::super::read(
            &xml::parse(
                "<robot name='r'><gazebo reference='gps_link'><sensor name='navsat' type='navsat'>\
                 <update_rate>5</update_rate><topic>gps/fix</topic><gz_frame_id>gps_frame</gz_frame_id>\
                 <pose>0.1 0 0.2 0 0 1</pose><navsat><position_sensing><horizontal><noise \
                 type='gaussian'><stddev>2.0</stddev></noise></horizontal></position_sensing>\
                 </navsat></sensor></gazebo><gazebo reference='base'><sensor name='gps1' type='gps'>\
                 <plugin filename='libgazebo_ros_gps_sensor.so' name='gps_plugin'><ros>\
                 <namespace>/rover</namespace><remapping>~/out:=fix</remapping></ros></plugin>\
                 </sensor><sensor name='baro' type='air_pressure'><update_rate>20</update_rate>\
                 <topic>air_pressure</topic><air_pressure><reference_altitude>100</reference_altitude>\
                 <pressure><noise type='gaussian'><stddev>3</stddev></noise></pressure></air_pressure>\
                 </sensor><sensor name='alt' type='altimeter'><altimeter><vertical_velocity><noise \
                 type='gaussian'><stddev>0.1</stddev></noise></vertical_velocity></altimeter></sensor>\
                 </gazebo></robot>",
            )
            .unwrap(),
        );
        let [navsat, gps, baro, alt] = &found.points[..] else {
            panic!("{found:?}")
        };
        assert_eq!(navsat.kind, PointKind::Gps);
        let s = &navsat.sensor;
        assert_eq!(
            (s.body.as_str(), s.xyz, s.rate),
            ("gps_link", [0.1, 0.0, 0.2], 5.0)
        );
        assert_eq!(s.topic.as_deref(), Some("gps/fix"));
        assert_eq!(s.frame_id.as_deref(), Some("gps_frame"));
        assert_eq!(navsat.noise[0].0, "navsat/horizontal_position");
        assert_eq!(navsat.noise[0].1.stddev, 2.0);
        assert_eq!(gps.sensor.topic.as_deref(), Some("/rover/fix"));
        assert_eq!(gps.sensor.frame_id.as_deref(), Some("base"));
        assert_eq!((baro.kind, baro.sensor.rate), (PointKind::Barometer, 20.0));
        assert_eq!(baro.sensor.topic.as_deref(), Some("air_pressure"));
        assert_eq!(baro.noise[0].0, "baro");
        assert!(baro.changed.is_some());
        assert_eq!(alt.kind, PointKind::Altimeter);
        assert_eq!(alt.sensor.topic.as_deref(), Some("alt"));
        assert_eq!(alt.noise[0].0, "alt/vertical_velocity");
    }
}
