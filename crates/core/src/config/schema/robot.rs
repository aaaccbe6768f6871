//! `robots[]`: each robot's model, placement, actuators and keyframes, with its `control`,
//! `ros` and `zmq` sections (in their own files).
use super::yes;
use super::{CameraConfig, ControlConfig, LidarConfig, RobotRosConfig, RobotZmqConfig};
use indexmap::IndexMap;
use serde::Deserialize;

/// A YAML scalar (text, number or flag) as the text a command line would carry.
#[derive(Deserialize, serde::Serialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Integer(i64),
    Number(f64),
    Flag(bool),
}

fn scalar_texts<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<IndexMap<String, String>, D::Error> {
    let map = IndexMap::<String, Scalar>::deserialize(deserializer)?;
    Ok(map
        .into_iter()
        .map(|(k, v)| {
            let text = match v {
                Scalar::Text(t) => t,
                Scalar::Integer(i) => i.to_string(),
                Scalar::Number(n) => n.to_string(),
                Scalar::Flag(b) => b.to_string(),
            };
            (k, text)
        })
        .collect())
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RobotConfig {
    /// The robot's name: its element-name prefix (`{name}_`), ROS namespace and legacy
    /// articulation name.
    pub name: String,
    pub mjcf: Option<String>,
    pub urdf: Option<String>,
    /// MJCF text (relative asset paths resolve against `base_dir`).
    pub mjcf_string: Option<String>,
    /// URDF text, such as a `robot_description` parameter.
    pub urdf_string: Option<String>,
    /// Folder for relative asset paths of a `*_string` model; default: the config's folder.
    pub base_dir: Option<String>,
    /// Where the robot's root is placed in the world.
    #[serde(default)]
    pub pose: PoseConfig,
    /// URDF only: whether the root link gets a free joint. Unset: yes when the robot is not
    /// attached to a `world` link and has wheels, legs or propellers.
    #[serde(default)]
    pub floating_base: Option<bool>,
    /// URDF only: refuse a file that needs repairs instead of repairing it.
    #[serde(default)]
    pub strict: bool,
    /// URDF only: arguments of a `.xacro` file (`name: value`), passed as `name:=value`.
    #[serde(default, deserialize_with = "scalar_texts")]
    pub xacro_args: IndexMap<String, String>,
    /// URDF only: `package://NAME` -> folder, checked before AMENT_PREFIX_PATH and
    /// ROS_PACKAGE_PATH.
    #[serde(default)]
    pub packages: IndexMap<String, String>,
    /// URDF only: folders searched for packages like ROS_PACKAGE_PATH entries.
    #[serde(default)]
    pub package_search_paths: Vec<String>,
    /// URDF only: generate actuators from `<ros2_control>` and `<transmission>` elements.
    #[serde(default = "yes")]
    pub urdf_actuators: bool,
    /// URDF only: gains of actuators generated for position / velocity command interfaces.
    #[serde(default)]
    pub urdf_gains: UrdfGains,
    /// Actuators added (or replacing generated ones) by joint-name pattern; `none`: a URDF
    /// that declares none gets none (else a position servo on each moving joint).
    #[serde(default)]
    pub actuators: Actuators,
    /// Named keyframes by joint-name pattern; become MuJoCo keyframes `{name}_{key}`.
    #[serde(default)]
    pub keyframes: IndexMap<String, KeyframeConfig>,
    /// How the robot is driven: control source, controller, mobile base, presets.
    #[serde(default)]
    pub control: ControlConfig,
    /// A ros2_control controllers file (ros2_control_node's parameters: the controller
    /// manager's `update_rate` and controllers with their types, then each controller's
    /// parameters), relative to the config's folder.
    #[serde(default)]
    pub controllers: Option<String>,
    /// A ros_gz_bridge config file (its list of `ros_topic_name`/`gz_topic_name` pairs),
    /// relative to the config's folder: each gz topic of the URDF's `<gazebo>` sensors and
    /// drive that it names goes out on its ROS name.
    #[serde(default)]
    pub gazebo_bridge: Option<String>,
    /// Legacy ZMQ endpoints of this robot (default: the top-level `zmq` ones) and its
    /// action-key bitmask.
    #[serde(default)]
    pub zmq: RobotZmqConfig,
    /// Cameras rendered off the physics thread (ROS image topics, legacy camera streams);
    /// without the key, every camera of the robot's model at the defaults; an empty list
    /// turns them all off.
    #[serde(default)]
    pub cameras: Option<Vec<CameraConfig>>,
    /// Ray-cast lidars mounted on the robot's bodies (3D point clouds, planar scans).
    #[serde(default)]
    pub lidars: Vec<LidarConfig>,
    /// GPS receivers on the robot's bodies (sensor_msgs/NavSatFix on `{name}/fix`, the
    /// velocity in east, north, up on `{name}/vel`).
    #[serde(default)]
    pub gps: Vec<super::PointSensorConfig>,
    /// Barometers on the robot's bodies (sensor_msgs/FluidPressure on `{name}`).
    #[serde(default)]
    pub barometers: Vec<super::PointSensorConfig>,
    /// Altimeters on the robot's bodies (ros_gz_interfaces/Altimeter on `{name}`).
    #[serde(default)]
    pub altimeters: Vec<super::PointSensorConfig>,
    /// Contact sensors on the robot's bodies or geoms (ros_gz_interfaces/Contacts on
    /// `{name}`, a std_msgs/Bool flag on `{name}/in_contact`).
    #[serde(default)]
    pub contacts: Vec<super::ContactSensorConfig>,
    /// ROS 2 sensor topics of this robot; without any, every IMU, force-torque and
    /// rangefinder site of the model is mapped automatically.
    #[serde(default)]
    pub ros: RobotRosConfig,
    /// Noise of its sensors, by sensor name in its model (an IMU's gyro and accelerometer,
    /// a force-torque sensor, a rangefinder, a magnetometer; a lidar's or camera's name).
    #[serde(default)]
    pub noise: IndexMap<String, super::NoiseConfig>,
    /// Seconds of sim time each named sensor's messages go out after the moment they
    /// measure (stamped with that moment): a bus, a driver, a filter.
    #[serde(default)]
    pub latency: IndexMap<String, f64>,
    /// The robot came from a request's text (a spawn's resource_string, a loaded world's
    /// text): its paths are taken as written (no environment substitution) and every file
    /// it names must pass the world's `FileAccess`.
    #[serde(skip)]
    pub from_request: bool,
}

impl RobotConfig {
    /// The point sensors it lists, with their keys.
    pub fn point_sensors(&self) -> [(&'static str, &[super::PointSensorConfig]); 3] {
        [
            ("gps", &self.gps),
            ("barometers", &self.barometers),
            ("altimeters", &self.altimeters),
        ]
    }

    /// The cameras the config lists (none when it lists none, or has no `cameras` key).
    pub fn listed_cameras(&self) -> &[CameraConfig] {
        self.cameras.as_deref().unwrap_or(&[])
    }

    /// Every camera of the robot's model renders at the defaults: the config has no
    /// `cameras` key.
    pub fn all_model_cameras(&self) -> bool {
        self.cameras.is_none()
    }
}

#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PoseConfig {
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Roll, pitch, yaw in radians (fixed axes x, y, z as in URDF).
    #[serde(default)]
    pub rpy: [f64; 3],
}

/// Gains of the servos generated for a URDF's position and velocity command interfaces. A
/// gain left out comes from the rule in `model::gains` (the inertia each joint moves at its
/// initial pose, its effort limit and the timestep).
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct UrdfGains {
    #[serde(default)]
    pub position_kp: Option<f64>,
    #[serde(default)]
    pub position_kv: Option<f64>,
    #[serde(default)]
    pub velocity_kv: Option<f64>,
}

impl UrdfGains {
    /// The first gain given that is not a positive finite number, with its name.
    pub fn invalid(&self) -> Option<(&'static str, f64)> {
        [
            ("position_kp", self.position_kp),
            ("position_kv", self.position_kv),
            ("velocity_kv", self.velocity_kv),
        ]
        .into_iter()
        .find_map(|(name, gain)| {
            gain.filter(|g| !(g.is_finite() && *g > 0.0))
                .map(|g| (name, g))
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActuatorKind {
    /// Force or torque (`ctrl` in N or N m).
    Motor,
    /// Position servo (`ctrl` is a joint position target).
    Position,
    /// Velocity servo (`ctrl` is a joint velocity target).
    Velocity,
}

/// One or several joint-name patterns (regular expressions matching the whole name).
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(untagged)]
pub enum Patterns {
    One(String),
    Many(Vec<String>),
}

impl Patterns {
    pub fn as_slice(&self) -> &[String] {
        match self {
            Patterns::One(p) => std::slice::from_ref(p),
            Patterns::Many(ps) => ps,
        }
    }
}

/// A robot's `actuators`: groups by joint-name pattern, or the word `none`.
#[derive(Debug, Clone, Default)]
pub struct Actuators {
    pub groups: Vec<ActuatorGroup>,
    /// `actuators: none`: no servo is generated for a URDF that declares no actuator.
    pub none: bool,
}

impl std::ops::Deref for Actuators {
    type Target = [ActuatorGroup];

    fn deref(&self) -> &[ActuatorGroup] {
        &self.groups
    }
}

impl<'de> Deserialize<'de> for Actuators {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Given;
        impl<'de> serde::de::Visitor<'de> for Given {
            type Value = Actuators;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of actuator groups, or `none`")
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<Actuators, E> {
                Ok(Actuators::default())
            }

            fn visit_str<E: serde::de::Error>(self, word: &str) -> Result<Actuators, E> {
                if word == "none" {
                    Ok(Actuators {
                        groups: Vec::new(),
                        none: true,
                    })
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(word), &self))
                }
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<Actuators, A::Error> {
                // Through the list's own deserializer: a wrong group keeps its precise error.
                let groups = Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
                Ok(Actuators {
                    groups,
                    none: false,
                })
            }
        }
        deserializer.deserialize_any(Given)
    }
}

impl serde::Serialize for Actuators {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.none {
            serializer.serialize_str("none")
        } else {
            self.groups.serialize(serializer)
        }
    }
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ActuatorGroup {
    /// Joint names (short, without the robot prefix) as whole-name regular expressions.
    pub joints: Patterns,
    #[serde(rename = "type")]
    pub kind: ActuatorKind,
    pub kp: Option<f64>,
    pub kv: Option<f64>,
    pub gear: Option<f64>,
    pub ctrlrange: Option<[f64; 2]>,
    pub forcerange: Option<[f64; 2]>,
    /// Shorthand: motor ctrlrange / servo forcerange of +-effort_limit.
    pub effort_limit: Option<f64>,
    /// Joint properties set together with the actuator.
    pub armature: Option<f64>,
    pub damping: Option<f64>,
    pub frictionloss: Option<f64>,
}

impl ActuatorGroup {
    /// Returns the failing field and a message.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.joints.as_slice().is_empty() {
            return Err(("joints".into(), "needs at least one pattern".into()));
        }
        for pattern in self.joints.as_slice() {
            crate::config::full_match_regex(pattern)
                .map_err(|e| ("joints".to_string(), e.to_string()))?;
        }
        let scalars = [
            ("kp", self.kp),
            ("kv", self.kv),
            ("gear", self.gear),
            ("effort_limit", self.effort_limit),
            ("armature", self.armature),
            ("damping", self.damping),
            ("frictionloss", self.frictionloss),
        ];
        for (field, value) in scalars {
            if let Some(v) = value
                && !(v.is_finite() && v >= 0.0)
            {
                return Err((
                    field.into(),
                    format!("must be a finite number >= 0, got {v}"),
                ));
            }
        }
        for (field, range) in [
            ("ctrlrange", self.ctrlrange),
            ("forcerange", self.forcerange),
        ] {
            if let Some([lo, hi]) = range
                && !(lo.is_finite() && hi.is_finite() && lo < hi)
            {
                return Err((
                    field.into(),
                    format!("must be [low, high] with low < high, got [{lo}, {hi}]"),
                ));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct KeyframeConfig {
    /// Floating base position relative to the robot's placement.
    pub base_xyz: Option<[f64; 3]>,
    pub base_rpy: Option<[f64; 3]>,
    /// Joint-name pattern -> position; later patterns win over earlier ones.
    #[serde(default)]
    pub joints: IndexMap<String, f64>,
}

/// Which format a model file on the command line is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    Mjcf,
    Urdf,
}
