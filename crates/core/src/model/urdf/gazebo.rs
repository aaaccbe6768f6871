//! The sensors a URDF's `<gazebo reference="LINK">` blocks declare, in gz-sim's syntax
//! (`gpu_lidar`/`lidar` with `<lidar>`, `<topic>`, `<gz_frame_id>`) and Gazebo Classic's
//! (`ray`/`gpu_ray` with `<ray>`, a `libgazebo_ros_*` plugin's `<ros><namespace>`,
//! `<remapping>~/out:=..` and `<frame_name>`). A lidar becomes one of the robot's lidars on the
//! topic and frame its users already read; every other sensor is named as left out.
use crate::config::{LidarConfig, NoiseConfig, NoiseType};
use crate::model::xml::Element;

const LIDAR_TYPES: [&str; 4] = ["gpu_lidar", "lidar", "gpu_ray", "ray"];
/// gz-sim's word for "no topic given": the sensor publishes on a scoped gz topic that no
/// ROS node reads without a bridge entry.
const DEFAULT_TOPIC: &str = "__default_topic__";

/// What the `<gazebo>` sensors give a robot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GazeboSensors {
    pub lidars: Vec<GazeboLidar>,
    /// Each sensor taken, in words, for `--summary`.
    pub taken: Vec<String>,
    /// Each sensor not taken, with why.
    pub left_out: Vec<String>,
}

/// A lidar of a `<gazebo>` block: the bridge's lidar and its `<noise>`.
#[derive(Debug, Clone, PartialEq)]
pub struct GazeboLidar {
    pub lidar: LidarConfig,
    pub noise: Option<NoiseConfig>,
}

/// Reads every `<gazebo reference><sensor>` of the URDF's `<robot>`.
pub fn read(robot: &Element) -> GazeboSensors {
    let mut found = GazeboSensors::default();
    for block in robot.children_named("gazebo") {
        let Some(link) = block.attr("reference") else {
            continue;
        };
        for sensor in block.children_named("sensor") {
            let name = sensor.attr("name").unwrap_or("");
            let kind = sensor.attr("type").unwrap_or("");
            let at = format!(
                "sensor '{name}' ({kind}) on '{link}' (line {})",
                sensor.line
            );
            if !LIDAR_TYPES.contains(&kind) {
                found.left_out.push(format!("{at}: not read yet"));
                continue;
            }
            match lidar(sensor, name, link) {
                Ok(lidar) => {
                    found.taken.push(format!(
                        "{at}: lidar on '{}', frame '{}'",
                        lidar.lidar.topic.as_deref().unwrap_or_default(),
                        lidar.lidar.frame_id.as_deref().unwrap_or_default()
                    ));
                    found.lidars.push(lidar);
                }
                Err(why) => found.left_out.push(format!("{at}: {why}")),
            }
        }
    }
    found
}

/// A number child's value; `default` when absent; an error naming it when not a number.
fn number(parent: Option<&Element>, name: &str, default: f64) -> Result<f64, String> {
    let Some(text) = parent.and_then(|p| p.child(name)).map(|c| c.text.trim()) else {
        return Ok(default);
    };
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("<{name}> '{text}' is not a finite number"))
}

fn lidar(sensor: &Element, name: &str, link: &str) -> Result<GazeboLidar, String> {
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
    let rate = number(Some(sensor), "update_rate", 10.0)?;
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
        // 0 is "as fast as it can" in Gazebo: the bridge's default rate then.
        rate: if rate > 0.0 { rate } else { 10.0 },
        topic: Some(topic(sensor, name, channels == 1)),
        frame_id: Some(frame(sensor, link)),
    };
    Ok(GazeboLidar {
        noise: rays.child("noise").map(noise).transpose()?,
        lidar,
    })
}

/// `<pose>x y z roll pitch yaw</pose>` on the link (none: the link's frame).
fn pose(sensor: &Element) -> Result<([f64; 3], [f64; 3]), String> {
    let Some(text) = sensor.child("pose").map(|p| p.text.trim()) else {
        return Ok(([0.0; 3], [0.0; 3]));
    };
    let values: Vec<f64> = text
        .split_whitespace()
        .map(|v| v.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("<pose> '{text}' is not six finite numbers"))?;
    match values[..] {
        [x, y, z, roll, pitch, yaw] => Ok(([x, y, z], [roll, pitch, yaw])),
        _ => Err(format!("<pose> '{text}' is not six finite numbers")),
    }
}

/// `<noise><type>gaussian</type><mean/><stddev/></noise>` (gz-sim and Classic alike).
fn noise(element: &Element) -> Result<NoiseConfig, String> {
    let kind = match element.child("type").map(|t| t.text.trim()) {
        Some("gaussian") | None => NoiseType::Gaussian,
        Some("gaussian_quantized") => NoiseType::GaussianQuantized,
        Some("none") => NoiseType::None,
        Some(other) => return Err(format!("<noise><type> '{other}' is not known")),
    };
    let at = Some(element);
    Ok(NoiseConfig {
        kind,
        mean: number(at, "mean", 0.0)?,
        stddev: number(at, "stddev", 0.0)?,
        bias_mean: number(at, "bias_mean", 0.0)?,
        bias_stddev: number(at, "bias_stddev", 0.0)?,
        dynamic_bias_stddev: number(at, "dynamic_bias_stddev", 0.0)?,
        dynamic_bias_correlation_time: number(at, "dynamic_bias_correlation_time", 0.0)?,
        precision: number(at, "precision", 0.0)?,
    })
}

/// A Classic `libgazebo_ros_*` plugin inside the sensor.
fn ros_plugin(sensor: &Element) -> Option<&Element> {
    sensor
        .children_named("plugin")
        .find(|p| p.attr("filename").is_some_and(|f| f.contains("gazebo_ros")))
}

/// The ROS topic its users read: gz-sim's `<topic>` (as ros_gz_bridge carries it under the
/// same name), else a Classic plugin's `~/out` remapping under its namespace, else the
/// bridge's own `{name}/scan` or `{name}/points`.
fn topic(sensor: &Element, name: &str, planar: bool) -> String {
    let text = |e: Option<&Element>| {
        e.map(|e| e.text.trim().to_string())
            .filter(|t| !t.is_empty() && t != DEFAULT_TOPIC)
    };
    if let Some(plugin) = ros_plugin(sensor) {
        let ros = plugin.child("ros");
        let namespace = text(ros.and_then(|r| r.child("namespace")));
        let out = ros
            .into_iter()
            .flat_map(|r| r.children_named("remapping"))
            .find_map(|r| {
                let (from, to) = r.text.trim().split_once(":=")?;
                (from == "~/out" || from == "out").then(|| to.to_string())
            });
        // Unremapped, Classic's `~/out` is the plugin node's `out`.
        let out = out.unwrap_or_else(|| format!("{}/out", plugin.attr("name").unwrap_or(name)));
        return match namespace {
            Some(ns) if !out.starts_with('/') => format!("{}/{out}", ns.trim_end_matches('/')),
            _ => out,
        };
    }
    if let Some(topic) = text(sensor.child("topic")) {
        return topic;
    }
    format!("{name}/{}", if planar { "scan" } else { "points" })
}

/// The frame its messages name: gz-sim's `<gz_frame_id>` (or Fortress's `<ignition_frame_id>`),
/// a Classic plugin's `<frame_name>`, else the link's, as Gazebo names them.
fn frame(sensor: &Element, link: &str) -> String {
    let given = ["gz_frame_id", "ignition_frame_id"]
        .iter()
        .find_map(|name| sensor.child(name))
        .or_else(|| ros_plugin(sensor).and_then(|p| p.child("frame_name")))
        .map(|e| e.text.trim().to_string())
        .filter(|t| !t.is_empty());
    given.unwrap_or_else(|| link.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::xml;

    fn sensors(text: &str) -> GazeboSensors {
        read(&xml::parse(text).unwrap())
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
             <gazebo reference='camera_link'><sensor name='camera' type='depth'/></gazebo></robot>",
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
            found.left_out[0].contains("'camera' (depth)"),
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
