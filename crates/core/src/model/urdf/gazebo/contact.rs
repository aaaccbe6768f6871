//! A `<gazebo>` contact sensor (`type="contact"`, both syntaxes): the robot's contact sensor
//! on the sensor's link, every geom of it watched, publishing ros_gz_interfaces/Contacts on
//! the topic its users read: gz-sim's `<topic>` (as ros_gz_bridge carries it) or Classic's
//! bumper plugin's `bumper_states`, remapped and under its namespace.
use super::values::{ClassicTopics, gz_topic, rate, text};
use crate::config::ContactSensorConfig;
use crate::model::xml::Element;

#[derive(Debug, Clone, PartialEq)]
pub struct GazeboContact {
    pub sensor: ContactSensorConfig,
    /// What could not be kept as written, in words.
    pub changed: Option<String>,
}

pub fn read(sensor: &Element, name: &str, link: &str) -> Result<GazeboContact, String> {
    let contact = sensor.child("contact");
    let classic = ClassicTopics::of(sensor);
    let topic = match &classic {
        Some(classic) => classic.resolve("bumper_states"),
        None => gz_topic(sensor)
            .or_else(|| contact.and_then(gz_topic))
            .unwrap_or_else(|| name.to_string()),
    };
    let mut changed = Vec::new();
    if classic.is_some() {
        changed.push("Classic's gazebo_msgs/ContactsState goes out as ros_gz_interfaces/Contacts");
    }
    if text(contact, "collision").is_some() {
        changed.push("it watches every collision of its link, the one <collision> named too");
    }
    Ok(GazeboContact {
        sensor: ContactSensorConfig {
            name: name.to_string(),
            topic: Some(topic),
            body: Some(link.to_string()),
            geom: None,
            // Gazebo's contact sensor without a rate reports every step; the bridge's default
            // rate is the nearest that does not flood a subscriber.
            rate: rate(sensor, ContactSensorConfig::DEFAULT_RATE)?,
            threshold: ContactSensorConfig::DEFAULT_THRESHOLD,
            debounce: 0.0,
        },
        changed: (!changed.is_empty()).then(|| changed.join("; ")),
    })
}

#[cfg(test)]
mod tests {
    use crate::model::xml;

    #[test]
    fn a_gz_contact_sensor_keeps_its_topic_and_a_classic_bumper_its_remapping() {
        let found = super::super::read(
            &xml::parse(
                "<robot name='r'><gazebo reference='bumper_link'><sensor name='bumper' \
                 type='contact'><update_rate>50</update_rate><contact><collision>\
                 bumper_link_collision</collision><topic>bumper</topic></contact></sensor>\
                 </gazebo><gazebo reference='base_link'><sensor name='base_contact' \
                 type='contact'><contact><collision>base_link_collision</collision></contact>\
                 <plugin name='bumper_plugin' filename='libgazebo_ros_bumper.so'><ros>\
                 <namespace>/demo</namespace><remapping>bumper_states:=bumper_demo</remapping>\
                 </ros><frame_name>world</frame_name></plugin></sensor></gazebo></robot>",
            )
            .unwrap(),
        );
        let [gz, classic] = &found.contacts[..] else {
            panic!("{found:?}")
        };
        assert_eq!(gz.sensor.topic.as_deref(), Some("bumper"));
        assert_eq!(gz.sensor.body.as_deref(), Some("bumper_link"));
        assert_eq!(gz.sensor.rate, 50.0);
        assert_eq!(classic.sensor.topic.as_deref(), Some("/demo/bumper_demo"));
        assert_eq!(classic.sensor.rate, 100.0);
        assert!(classic.changed.as_ref().unwrap().contains("ContactsState"));
        assert_eq!(gz.sensor.problem(), None);
        assert_eq!(classic.sensor.problem(), None);
    }
}
