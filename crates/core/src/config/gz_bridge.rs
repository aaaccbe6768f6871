//! ros_gz_bridge's YAML config file (what `parameter_bridge -p config_file:=FILE` reads): a
//! list of bridged topics, each with its ROS name and its gz name. A robot described for
//! Gazebo names its sensors' and drive's gz topics; this file says the ROS name each goes
//! out on. Types, direction, laziness and QoS are ros_gz_bridge's concern and are not read.
use serde::Deserialize;

/// One topic the file bridges: its gz name and the ROS name it is carried on.
#[derive(Debug, Clone, PartialEq)]
pub struct BridgedTopic {
    pub gz: String,
    pub ros: String,
}

#[derive(Deserialize)]
struct Entry {
    topic_name: Option<String>,
    ros_topic_name: Option<String>,
    gz_topic_name: Option<String>,
    /// Fortress's spelling of `gz_topic_name`.
    ign_topic_name: Option<String>,
    service_name: Option<String>,
}

/// The topics of a bridge file's text; an error names the entry that has neither
/// `topic_name` nor both names. Service entries are passed over.
pub fn parse(text: &str) -> Result<Vec<BridgedTopic>, String> {
    let entries: Option<Vec<Entry>> =
        serde_saphyr::from_str(text).map_err(|e| format!("not a ros_gz_bridge list: {e}"))?;
    let mut topics = Vec::new();
    for (k, entry) in entries.unwrap_or_default().into_iter().enumerate() {
        if entry.service_name.is_some() {
            continue;
        }
        let gz = entry.gz_topic_name.or(entry.ign_topic_name);
        let named = match (entry.topic_name, entry.ros_topic_name, gz) {
            (_, Some(ros), Some(gz)) => BridgedTopic { gz, ros },
            (Some(both), None, None) => BridgedTopic {
                gz: both.clone(),
                ros: both,
            },
            (Some(both), Some(ros), None) => BridgedTopic { gz: both, ros },
            (Some(both), None, Some(gz)) => BridgedTopic { gz, ros: both },
            (None, _, _) => {
                return Err(format!(
                    "entry {k} needs topic_name, or ros_topic_name and gz_topic_name"
                ));
            }
        };
        topics.push(named);
    }
    Ok(topics)
}

#[cfg(test)]
mod tests {
    use super::{BridgedTopic, parse};

    #[test]
    fn each_entry_gives_its_gz_and_ros_names_and_a_broken_one_is_named() {
        let topics = parse(
            "- ros_topic_name: front/scan\n  gz_topic_name: /scan\n  ros_type_name: \
             sensor_msgs/msg/LaserScan\n  gz_type_name: gz.msgs.LaserScan\n  direction: \
             GZ_TO_ROS\n- topic_name: /clock\n  ros_type_name: rosgraph_msgs/msg/Clock\n\
             - service_name: /world/empty/control\n  ros_type_name: ros_gz_interfaces/srv/\
             ControlWorld\n- ros_topic_name: imu/data\n  ign_topic_name: imu\n",
        )
        .unwrap();
        let pair = |gz: &str, ros: &str| BridgedTopic {
            gz: gz.into(),
            ros: ros.into(),
        };
        assert_eq!(
            topics,
            [
                pair("/scan", "front/scan"),
                pair("/clock", "/clock"),
                pair("imu", "imu/data")
            ]
        );
        let broken = parse("- ros_topic_name: scan\n").unwrap_err();
        assert!(broken.contains("entry 0 needs topic_name"), "{broken}");
        assert_eq!(parse("").unwrap(), []);
    }
}
