//! A ros_gz_bridge file applied to what the `<gazebo>` blocks declare: each sensor or drive
//! topic whose gz name the file bridges goes out (or is read) on the file's ROS name, as
//! ros_gz_bridge would carry it. What every entry did goes to `--summary`.
use super::GazeboSensors;
use crate::config::gz_bridge::BridgedTopic;

/// Topics the bridge publishes of its own, whatever the robot declares.
const OWN_TOPICS: [&str; 5] = [
    "clock",
    "tf",
    "tf_static",
    "joint_states",
    "robot_description",
];

impl GazeboSensors {
    /// Renames every topic that one of `topics` bridges; `file` names the file in the lines
    /// said about each entry.
    pub fn carry(&mut self, topics: &[BridgedTopic], file: &str) {
        for topic in topics {
            let renamed = self.rename(topic);
            let at = format!("{file}: gz '{}' -> ROS '{}'", topic.gz, topic.ros);
            if !renamed.is_empty() {
                self.taken.push(format!("{at}: {}", renamed.join(", ")));
            } else if OWN_TOPICS.contains(&bare(&topic.gz).as_str()) {
                self.taken
                    .push(format!("{at}: the bridge publishes it of its own"));
            } else {
                self.left_out.push(format!(
                    "{at}: no <gazebo> sensor or plugin has that gz topic"
                ));
            }
        }
    }

    /// Renames each topic named `topic.gz`; what was renamed, in words.
    fn rename(&mut self, topic: &BridgedTopic) -> Vec<String> {
        let mut renamed = Vec::new();
        let mut carry = |what: String, name: &mut String| {
            if bare(name) == bare(&topic.gz) {
                name.clone_from(&topic.ros);
                renamed.push(what);
            }
        };
        for lidar in &mut self.lidars {
            let what = format!("lidar '{}'", lidar.lidar.name);
            lidar
                .lidar
                .topic
                .iter_mut()
                .for_each(|t| carry(what.clone(), t));
        }
        for camera in &mut self.cameras {
            let name = camera.camera.name().to_string();
            let topics = &mut camera.camera.topics;
            let streams = [
                ("image", &mut topics.image),
                ("depth", &mut topics.depth),
                ("camera_info", &mut topics.camera_info),
                ("points", &mut topics.points),
            ];
            for (stream, written) in streams {
                let what = format!("camera '{name}' {stream}");
                written.iter_mut().for_each(|t| carry(what.clone(), t));
            }
        }
        for point in &mut self.points {
            let what = format!("sensor '{}'", point.sensor.name);
            point
                .sensor
                .topic
                .iter_mut()
                .for_each(|t| carry(what.clone(), t));
        }
        for contact in &mut self.contacts {
            let what = format!("contact sensor '{}'", contact.sensor.name);
            contact
                .sensor
                .topic
                .iter_mut()
                .for_each(|t| carry(what.clone(), t));
        }
        for imu in &mut self.imus {
            carry(format!("imu '{}'", imu.name), &mut imu.topic);
        }
        for mag in &mut self.magnetometers {
            carry(format!("magnetometer '{}'", mag.name), &mut mag.topic);
        }
        for ft in &mut self.force_torques {
            carry(format!("force-torque sensor '{}'", ft.name), &mut ft.topic);
        }
        if let Some(drive) = &mut self.plugins.drive {
            carry("the drive's cmd_vel".into(), &mut drive.cmd_vel);
            let odometry = drive.odometry.iter_mut();
            odometry.for_each(|t| carry("the drive's odometry".into(), t));
        }
        renamed
    }
}

/// A gz or ROS topic name without its leading `/`: gz names are absolute either way, and a
/// robot's relative ROS names stand beside its absolute ones.
fn bare(name: &str) -> String {
    name.trim_start_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use crate::config::gz_bridge::BridgedTopic;
    use crate::model::xml;

    #[test]
    fn a_bridged_gz_topic_goes_out_on_its_ros_name_and_an_unknown_one_is_named() {
        let mut found = super::super::read(
            &xml::parse(
                "<robot name='r'><gazebo reference='laser'><sensor name='lidar' \
                 type='gpu_lidar'><topic>scan</topic><lidar><scan><horizontal><samples>90\
                 </samples></horizontal></scan><range><max>10</max></range></lidar></sensor>\
                 </gazebo><gazebo reference='imu_link'><sensor name='imu' type='imu'>\
                 <topic>/imu</topic></sensor></gazebo></robot>",
            )
            .unwrap(),
        );
        let pair = |gz: &str, ros: &str| BridgedTopic {
            gz: gz.into(),
            ros: ros.into(),
        };
        let file = [
            pair("/scan", "front/scan"),
            pair("imu", "imu/data"),
            pair("/clock", "/clock"),
            pair("/sonar", "sonar"),
        ];
        found.carry(&file, "bridge.yaml");
        assert_eq!(found.lidars[0].lidar.topic.as_deref(), Some("front/scan"));
        assert_eq!(found.imus[0].topic, "imu/data");
        let taken = &found.taken[found.taken.len() - 3..];
        assert!(
            taken[0].ends_with("gz '/scan' -> ROS 'front/scan': lidar 'lidar'"),
            "{taken:?}"
        );
        assert!(
            taken[2].ends_with("the bridge publishes it of its own"),
            "{taken:?}"
        );
        assert_eq!(
            found.left_out,
            [
                "bridge.yaml: gz '/sonar' -> ROS 'sonar': no <gazebo> sensor or plugin has that gz topic"
            ]
        );
    }
}
