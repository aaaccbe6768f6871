//! A `<gazebo>` lidar: gz-sim's `gpu_lidar`/`lidar` with `<lidar>` and Classic's
//! `ray`/`gpu_ray` with `<ray>` (gz-sim robots also write `<ray>`), one of the robot's lidars.
use super::values::{frame, noise, number, pose, rate, single_topic};
use crate::config::{LidarConfig, NoiseConfig};
use crate::model::xml::Element;

pub const TYPES: [&str; 4] = ["gpu_lidar", "lidar", "gpu_ray", "ray"];

/// A lidar of a `<gazebo>` block: the bridge's lidar and its `<noise>`.
#[derive(Debug, Clone, PartialEq)]
pub struct GazeboLidar {
    pub lidar: LidarConfig,
    pub noise: Option<NoiseConfig>,
}

pub fn read(sensor: &Element, name: &str, link: &str) -> Result<GazeboLidar, String> {
    let rays = sensor
        .child("lidar")
        .or_else(|| sensor.child("ray"))
        .ok_or("no <lidar> or <ray> element")?;
    let scan = rays.child("scan");
    let horizontal = scan.and_then(|s| s.child("horizontal"));
    let vertical = scan.and_then(|s| s.child("vertical"));
    let range = rays.child("range");
    let count = |axis, default| -> Result<u32, String> {
        let samples = number(axis, "samples", default)?;
        let resolution = number(axis, "resolution", 1.0)?;
        // Gazebo returns samples x resolution ranges (resolution above 1 interpolates).
        let rays = (samples * resolution.max(1.0)).round();
        if !(1.0..=f64::from(u32::MAX)).contains(&rays) {
            return Err(format!("{rays} samples"));
        }
        Ok(rays as u32)
    };
    let angles = |axis| -> Result<[f64; 2], String> {
        let first = number(axis, "min_angle", 0.0)?.to_degrees();
        let last = number(axis, "max_angle", 0.0)?.to_degrees();
        Ok([first, last])
    };
    let mut horizontal_fov = angles(horizontal)?;
    // ±3.1416 rad is a full turn as written by hand: a hair over 360 degrees.
    if (360.0..360.01).contains(&(horizontal_fov[1] - horizontal_fov[0])) {
        horizontal_fov[1] = horizontal_fov[0] + 360.0;
    }
    let channels = count(vertical, 1.0)?;
    let vertical_fov = if channels == 1 {
        [0.0, 0.0]
    } else {
        angles(vertical)?
    };
    let (xyz, rpy) = pose(sensor)?;
    let planar = channels == 1;
    let fallback = format!("{name}/{}", if planar { "scan" } else { "points" });
    let lidar = LidarConfig {
        name: name.to_string(),
        body: link.to_string(),
        xyz,
        rpy,
        channels,
        samples: count(horizontal, 640.0)?,
        vertical_fov,
        horizontal_fov,
        range_min: number(range, "min", 0.0)?,
        range_max: number(range, "max", 30.0)?,
        resolution: number(range, "resolution", 0.0)?,
        rate: rate(sensor, 10.0)?,
        topic: Some(single_topic(sensor, fallback)),
        frame_id: Some(frame(sensor, link, None)),
    };
    Ok(GazeboLidar {
        noise: rays.child("noise").map(noise).transpose()?,
        lidar,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::xml;

    fn sensors(text: &str) -> super::super::GazeboSensors {
        super::super::read(&xml::parse(text).unwrap())
    }

    #[test]
    fn a_gz_sim_lidar_keeps_its_topic_frame_and_rays() {
        let found = sensors(
            "<robot name='r'><gazebo reference='rplidar_link'><sensor name='rplidar' type='gpu_lidar'>\
             <update_rate>10.0</update_rate><topic>scan</topic><gz_frame_id>rplidar_link</gz_frame_id>\
             <lidar><scan><horizontal><samples>360</samples><resolution>1.0</resolution>\
             <min_angle>0.0</min_angle><max_angle>6.28</max_angle></horizontal></scan>\
             <range><min>0.164</min><max>20.0</max><resolution>0.01</resolution></range></lidar>\
             </sensor></gazebo></robot>",
        );
        let lidar = &found.lidars[0].lidar;
        assert_eq!(lidar.topic.as_deref(), Some("scan"));
        assert_eq!(lidar.frame_id.as_deref(), Some("rplidar_link"));
        assert_eq!((lidar.channels, lidar.samples), (1, 360));
        // 6.28 rad as written: a hair under a full turn, kept as it is.
        assert!((lidar.horizontal_fov[1] - 359.817_495).abs() < 1e-5);
        assert_eq!(
            (lidar.range_min, lidar.range_max, lidar.resolution),
            (0.164, 20.0, 0.01)
        );
        assert_eq!(lidar.problem(), None);
    }

    #[test]
    fn a_classic_ray_takes_its_plugins_remapping_and_frame_and_noise() {
        let found = sensors(
            "<robot name='r'><gazebo reference='laser'><sensor name='laser_lidar' type='gpu_ray'>\
             <update_rate>10</update_rate><pose>0 0 0.1 0 0 0</pose><ray><scan><horizontal>\
             <samples>360</samples><min_angle>-3.1416</min_angle><max_angle>3.1416</max_angle>\
             </horizontal></scan><range><min>0.08</min><max>12.0</max></range>\
             <noise><type>gaussian</type><stddev>0.01</stddev></noise></ray>\
             <plugin filename='libgazebo_ros_ray_sensor.so' name='laser_lidar_controller'>\
             <ros><namespace>/bot</namespace><remapping>~/out:=scan</remapping></ros>\
             <frame_name>laser</frame_name></plugin></sensor></gazebo>\
             <gazebo reference='eye'><sensor name='eye' type='logical_camera'/></gazebo></robot>",
        );
        let GazeboLidar { lidar, noise } = &found.lidars[0];
        assert_eq!(lidar.topic.as_deref(), Some("/bot/scan"));
        assert_eq!(lidar.frame_id.as_deref(), Some("laser"));
        assert_eq!(lidar.xyz, [0.0, 0.0, 0.1]);
        // A hair over a full turn is a full turn.
        assert_eq!(lidar.horizontal_fov[1] - lidar.horizontal_fov[0], 360.0);
        assert_eq!(lidar.problem(), None);
        assert_eq!(noise.as_ref().unwrap().stddev, 0.01);
        assert_eq!(found.left_out.len(), 1);
        assert!(
            found.left_out[0].contains("'eye' (logical_camera)"),
            "{:?}",
            found.left_out
        );
    }

    #[test]
    fn a_broken_number_leaves_the_sensor_out_naming_the_element() {
        let found = sensors(
            "<robot name='r'><gazebo reference='l'><sensor name='s' type='ray'><ray><range>\
             <max>far</max></range></ray></sensor></gazebo></robot>",
        );
        assert!(found.lidars.is_empty());
        assert!(
            found.left_out[0].contains("<max> 'far'"),
            "{:?}",
            found.left_out
        );
    }
}
