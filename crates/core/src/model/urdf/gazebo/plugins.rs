//! The `<gazebo><plugin>` blocks of a URDF (those without a reference): a diff drive (gz-sim's
//! `DiffDrive` system, Classic's `libgazebo_ros_diff_drive`) becomes the robot's diff-drive
//! base with wheel odometry, Classic's `libgazebo_ros_planar_move` its planar base;
//! ros2_control, joint-state, IMU and sensor systems are what the bridge does anyway; every
//! other plugin is named as left out.
use super::values::{ClassicTopics, number, text};
use crate::config::{AxisLimits, BaseKind, Bounds, TwistLimits};
use crate::model::xml::Element;

/// A drive plugin: a diff drive's wheels (several per side on a skid steer) and geometry
/// (none for a planar move), and the topics and frames of its twist and odometry.
#[derive(Debug, Clone, PartialEq)]
pub struct GazeboDrive {
    pub kind: BaseKind,
    pub left: Vec<String>,
    pub right: Vec<String>,
    pub separation: f64,
    pub radius: f64,
    /// The most a wheel's rim speeds up, m/s^2 (Classic's `max_wheel_acceleration`).
    pub wheel_acceleration: Option<f64>,
    /// The twist's limits (gz-sim's speed limiters).
    pub limits: TwistLimits,
    /// The twist topic, as the plugin names it.
    pub cmd_vel: String,
    /// The odometry topic; none when the plugin publishes none.
    pub odometry: Option<String>,
    pub odom_frame: String,
    /// `odom -> base` on /tf (Classic's `publish_odom_tf`; gz-sim's drive sends it too).
    pub odom_tf: bool,
}

/// What the plugins give a robot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GazeboPlugins {
    pub drive: Option<GazeboDrive>,
    pub taken: Vec<String>,
    pub left_out: Vec<String>,
}

/// Plugins that ask for what the bridge does for every robot, by a word of their file name.
const DONE_ANYWAY: [(&str, &str); 8] = [
    (
        "ros2_control",
        "the controller manager (its <parameters> file)",
    ),
    ("joint-state-publisher", "joint_states"),
    ("joint_state_publisher", "joint_states"),
    ("imu-system", "the IMU sensors"),
    ("imu_system", "the IMU sensors"),
    ("sensors-system", "the sensors"),
    ("sensors_system", "the sensors"),
    ("pose-publisher", "tf"),
];

/// How a note names a plugin: its name, file and line.
pub(super) fn place(plugin: &Element) -> String {
    format!(
        "plugin '{}' ({}, line {})",
        plugin.attr("name").unwrap_or(""),
        plugin.attr("filename").unwrap_or(""),
        plugin.line
    )
}

pub fn read(robot: &Element) -> GazeboPlugins {
    let mut found = GazeboPlugins::default();
    let plugins = robot
        .children_named("gazebo")
        .filter(|block| block.attr("reference").is_none())
        .flat_map(|block| block.children_named("plugin"));
    for plugin in plugins {
        let file = plugin.attr("filename").unwrap_or("");
        let at = place(plugin);
        match found.add(plugin, file) {
            Ok(what) => found.taken.push(format!("{at}: {what}")),
            Err(why) => found.left_out.push(format!("{at}: {why}")),
        }
    }
    found
}

impl GazeboPlugins {
    fn add(&mut self, plugin: &Element, file: &str) -> Result<String, String> {
        let lower = file.to_ascii_lowercase();
        let diff = lower.contains("diff-drive") || lower.contains("diff_drive");
        let planar = lower.contains("gazebo_ros_planar_move");
        if diff || planar {
            let classic = lower.contains("gazebo_ros");
            let drive = match (planar, classic) {
                (true, _) => planar_move(plugin),
                (false, true) => classic_drive(plugin)?,
                (false, false) => gz_drive(plugin)?,
            };
            if self.drive.is_some() {
                return Err("a second drive".into());
            }
            let odometry = drive
                .odometry
                .as_deref()
                .map_or("off".into(), |t| format!("'{t}'"));
            let what = match planar {
                true => format!(
                    "planar base, cmd_vel '{}', odometry {odometry}",
                    drive.cmd_vel
                ),
                false => format!(
                    "diff drive on {} / {}, cmd_vel '{}', odometry {odometry}{}",
                    drive.left.join(", "),
                    drive.right.join(", "),
                    drive.cmd_vel,
                    drive
                        .limits
                        .describe()
                        .map_or(String::new(), |l| format!(", limits {l}")),
                ),
            };
            self.drive = Some(drive);
            return Ok(what);
        }
        DONE_ANYWAY
            .iter()
            .find(|(word, _)| lower.contains(word))
            .map(|(_, what)| format!("accepted: {what}"))
            .ok_or_else(|| "not supported".to_string())
    }
}

/// Every `<name>` child's text.
fn all(plugin: &Element, name: &str) -> Vec<String> {
    plugin
        .children_named(name)
        .map(|c| c.text.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn positive(plugin: &Element, name: &str) -> Result<f64, String> {
    let value = number(Some(plugin), name, f64::NAN)?;
    if value.is_nan() {
        return Err(format!("no <{name}>"));
    }
    if value <= 0.0 {
        return Err(format!("<{name}> {value} is not positive"));
    }
    Ok(value)
}

/// A limit that 0 or absence leaves off (as Gazebo reads it).
fn limit(plugin: &Element, name: &str) -> Result<Option<f64>, String> {
    let value = number(Some(plugin), name, 0.0)?;
    match value {
        v if v > 0.0 => Ok(Some(v)),
        0.0 => Ok(None),
        v => Err(format!("<{name}> {v} is negative")),
    }
}

/// gz-sim's speed limiter of one axis: `<min_|max_><velocity|acceleration|jerk>` for both
/// axes, overridden by `<min_|max_><linear|angular>_<...>`; a bound not given is open (a
/// maximum alone leaves slowing down and reversing unbounded, as gz-math's limiter does).
fn gz_axis(plugin: &Element, axis: &str) -> Result<AxisLimits, String> {
    let bound = |end: &str, what: &str| -> Result<Option<f64>, String> {
        let own = number(Some(plugin), &format!("{end}_{axis}_{what}"), f64::NAN)?;
        let both = number(Some(plugin), &format!("{end}_{what}"), f64::NAN)?;
        Ok([own, both].into_iter().find(|v| !v.is_nan()))
    };
    let bounds = |what: &str| -> Result<Bounds, String> {
        Ok(Bounds {
            min: bound("min", what)?,
            max: bound("max", what)?,
        })
    };
    Ok(AxisLimits {
        velocity: bounds("velocity")?,
        acceleration: bounds("acceleration")?,
        jerk: bounds("jerk")?,
    })
}

fn wheels(plugin: &Element, name: &str) -> Result<Vec<String>, String> {
    let wheels = all(plugin, name);
    if wheels.is_empty() {
        return Err(format!("no <{name}>"));
    }
    Ok(wheels)
}

/// gz-sim's DiffDrive: `left_joint`/`right_joint` (repeated for more wheels), `wheel_radius`,
/// `wheel_separation`, `topic`, `odom_topic`, `frame_id` (defaults under `/model/NAME/`,
/// which no ROS node reads unbridged: `cmd_vel` and `odom` then).
fn gz_drive(plugin: &Element) -> Result<GazeboDrive, String> {
    Ok(GazeboDrive {
        kind: BaseKind::DiffDrive,
        left: wheels(plugin, "left_joint")?,
        right: wheels(plugin, "right_joint")?,
        separation: positive(plugin, "wheel_separation")?,
        radius: positive(plugin, "wheel_radius")?,
        wheel_acceleration: None,
        limits: TwistLimits {
            linear_x: gz_axis(plugin, "linear")?,
            angular_z: gz_axis(plugin, "angular")?,
        },
        cmd_vel: text(Some(plugin), "topic").unwrap_or_else(|| "cmd_vel".into()),
        odometry: Some(text(Some(plugin), "odom_topic").unwrap_or_else(|| "odom".into())),
        odom_frame: text(Some(plugin), "frame_id").unwrap_or_else(|| "odom".into()),
        odom_tf: true,
    })
}

/// Classic's libgazebo_ros_diff_drive: `left_joint`/`right_joint`, `wheel_separation`,
/// `wheel_diameter`, `publish_odom`, `odometry_frame`; its `cmd_vel` and `odom` under the
/// plugin's `<ros><namespace>`, remapped by its `<remapping>`s.
fn classic_drive(plugin: &Element) -> Result<GazeboDrive, String> {
    let (cmd_vel, odometry) = classic_topics(plugin);
    Ok(GazeboDrive {
        kind: BaseKind::DiffDrive,
        left: wheels(plugin, "left_joint")?,
        right: wheels(plugin, "right_joint")?,
        separation: positive(plugin, "wheel_separation")?,
        radius: positive(plugin, "wheel_diameter")? / 2.0,
        wheel_acceleration: limit(plugin, "max_wheel_acceleration")?,
        limits: TwistLimits::default(),
        cmd_vel,
        odometry,
        odom_frame: text(Some(plugin), "odometry_frame").unwrap_or_else(|| "odom".into()),
        odom_tf: classic_flag(plugin, "publish_odom_tf"),
    })
}

/// Classic's libgazebo_ros_planar_move: the model's planar velocity set from the twist, on the
/// same topics as its diff drive.
fn planar_move(plugin: &Element) -> GazeboDrive {
    let (cmd_vel, odometry) = classic_topics(plugin);
    GazeboDrive {
        kind: BaseKind::Planar,
        left: Vec::new(),
        right: Vec::new(),
        separation: 0.0,
        radius: 0.0,
        wheel_acceleration: None,
        limits: TwistLimits::default(),
        cmd_vel,
        odometry,
        odom_frame: text(Some(plugin), "odometry_frame").unwrap_or_else(|| "odom".into()),
        odom_tf: classic_flag(plugin, "publish_odom_tf"),
    }
}

/// A Classic plugin's true-by-default flag (`true` or `1` when written).
fn classic_flag(plugin: &Element, name: &str) -> bool {
    text(Some(plugin), name).is_none_or(|v| v == "true" || v == "1")
}

/// A Classic drive's twist and odometry topics (`cmd_vel`, `odom`, none when `publish_odom` is
/// false), under the plugin's `<ros><namespace>` and through its `<remapping>`s.
fn classic_topics(plugin: &Element) -> (String, Option<String>) {
    let topics = ClassicTopics::of_plugin(plugin);
    let publishes = classic_flag(plugin, "publish_odom");
    (
        topics.resolve("cmd_vel"),
        publishes.then(|| topics.resolve("odom")),
    )
}

#[cfg(test)]
mod tests {
    use crate::model::xml;

    #[test]
    fn diff_drives_of_both_syntaxes_give_wheels_topics_and_geometry() {
        let gz = super::read(
            &xml::parse(
                "<robot name='r'><gazebo><plugin filename='gz-sim-diff-drive-system' \
                 name='gz::sim::systems::DiffDrive'><left_joint>l</left_joint>\
                 <right_joint>r</right_joint><wheel_separation>0.233</wheel_separation>\
                 <wheel_radius>0.03575</wheel_radius><topic>/cmd_vel</topic>\
                 <max_acceleration>1</max_acceleration><max_linear_acceleration>2\
                 </max_linear_acceleration><min_linear_velocity>-0.5</min_linear_velocity>\
                 <odom_topic>/odom</odom_topic></plugin></gazebo><gazebo><plugin \
                 filename='gz-sim-joint-state-publisher-system' name='j'/><plugin \
                 filename='libmy_magic.so' name='magic'/></gazebo></robot>",
            )
            .unwrap(),
        );
        let drive = gz.drive.unwrap();
        assert_eq!(
            (drive.left, drive.right),
            (vec!["l".into()], vec!["r".into()])
        );
        assert_eq!(
            (drive.cmd_vel.as_str(), drive.odometry.as_deref()),
            ("/cmd_vel", Some("/odom"))
        );
        assert_eq!((drive.separation, drive.radius), (0.233, 0.03575));
        // Each axis's own bound over the one for both; an end not given stays open.
        let (x, z) = (drive.limits.linear_x, drive.limits.angular_z);
        assert_eq!((x.acceleration.min, x.acceleration.max), (None, Some(2.0)));
        assert_eq!((x.velocity.min, x.velocity.max), (Some(-0.5), None));
        assert_eq!(
            (z.acceleration.max, z.velocity),
            (Some(1.0), Default::default())
        );
        assert!(
            gz.taken[0].contains(
                "limits linear_x velocity -0.5.., linear_x acceleration ..2, \
                 angular_z acceleration ..1"
            ),
            "{:?}",
            gz.taken
        );
        assert_eq!(gz.taken.len(), 2, "{:?}", gz.taken);
        assert!(
            gz.left_out[0].contains("'magic' (libmy_magic.so"),
            "{:?}",
            gz.left_out
        );
        let classic = super::read(
            &xml::parse(
                "<robot name='r'><gazebo><plugin filename='libgazebo_ros_diff_drive.so' \
                 name='d'><ros><remapping>odom:=odom/unfiltered</remapping></ros>\
                 <left_joint>l</left_joint><right_joint>r</right_joint>\
                 <wheel_separation>0.26</wheel_separation><wheel_diameter>0.09</wheel_diameter>\
                 </plugin></gazebo></robot>",
            )
            .unwrap(),
        );
        let drive = classic.drive.unwrap();
        assert_eq!(drive.odometry.as_deref(), Some("odom/unfiltered"));
        assert_eq!((drive.cmd_vel.as_str(), drive.radius), ("cmd_vel", 0.045));
    }

    #[test]
    fn a_drive_without_its_geometry_is_left_out_naming_the_element() {
        let found = super::read(
            &xml::parse(
                "<robot name='r'><gazebo><plugin filename='gz-sim-diff-drive-system' name='d'>\
                 <left_joint>l</left_joint><right_joint>r</right_joint></plugin></gazebo></robot>",
            )
            .unwrap(),
        );
        assert_eq!(found.drive, None);
        assert!(
            found.left_out[0].contains("no <wheel_separation>"),
            "{:?}",
            found.left_out
        );
    }
}
