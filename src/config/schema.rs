//! The YAML schema. Every struct denies unknown fields, so a typo is an error that names it.
use indexmap::IndexMap;
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub world: WorldConfig,
    #[serde(default)]
    pub sim: SimConfig,
    #[serde(default)]
    pub robots: Vec<RobotConfig>,
    /// The legacy URLab ZMQ protocol.
    #[serde(default)]
    pub zmq: ZmqConfig,
    /// The ROS 2 node: publisher rates and the wrench topic.
    #[serde(default)]
    pub ros: RosConfig,
    /// Where the config came from (file path or `<embedded>/...`); set by the loader.
    #[serde(skip)]
    pub origin: String,
    /// Folder that relative paths in the config resolve against; set by the loader.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldConfig {
    /// Physics timestep in seconds; default: the first robot's model value.
    pub timestep: Option<f64>,
    pub gravity: Option<[f64; 3]>,
    /// Adds a ground plane named `floor` at z = 0.
    #[serde(default)]
    pub floor: bool,
    /// Adds a directional light above the origin.
    #[serde(default)]
    pub light: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimMode {
    /// Paced against the wall clock, times `speed`.
    Realtime,
    /// As fast as possible.
    Fast,
    /// Not stepping until unpaused or asked to step.
    Paused,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    #[serde(default = "default_mode")]
    pub mode: SimMode,
    /// Real-time factor target in realtime mode.
    #[serde(default = "one")]
    pub speed: f64,
    /// Physics steps per pacing tick (each runs all phases).
    #[serde(default = "one_u32")]
    pub substeps: u32,
    /// How long before a deadline the physics thread stops sleeping and spins (microseconds).
    #[serde(default = "default_spin_us")]
    pub spin_us: u32,
    /// SCHED_FIFO priority of the physics thread (1-99); 0 keeps the normal scheduler.
    #[serde(default)]
    pub realtime_priority: u8,
    /// Seconds between two log lines with the live figures; 0 turns them off.
    #[serde(default = "default_stats_period")]
    pub stats_period: f64,
    /// Contacts copied into the latest-state snapshot each step, for the ROS contact
    /// markers (`~/contacts`); 0 exports none.
    #[serde(default)]
    pub export_contacts: u32,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            mode: default_mode(),
            speed: 1.0,
            substeps: 1,
            spin_us: default_spin_us(),
            realtime_priority: 0,
            stats_period: default_stats_period(),
            export_contacts: 0,
        }
    }
}

fn default_mode() -> SimMode {
    SimMode::Realtime
}
fn one() -> f64 {
    1.0
}
fn one_u32() -> u32 {
    1
}
fn default_spin_us() -> u32 {
    150
}
fn default_stats_period() -> f64 {
    5.0
}

/// A YAML scalar (text, number or flag) as the text a command line would carry.
#[derive(Deserialize)]
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

#[derive(Debug, Clone, Deserialize)]
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
    /// Actuators added (or replacing generated ones) by joint-name pattern.
    #[serde(default)]
    pub actuators: Vec<ActuatorGroup>,
    /// Named keyframes by joint-name pattern; become MuJoCo keyframes `{name}_{key}`.
    #[serde(default)]
    pub keyframes: IndexMap<String, KeyframeConfig>,
    /// How the robot is driven: control source, controller, mobile base, presets.
    #[serde(default)]
    pub control: ControlConfig,
    /// Legacy ZMQ endpoints of this robot (default: the top-level `zmq` ones) and its
    /// action-key bitmask.
    #[serde(default)]
    pub zmq: RobotZmqConfig,
    /// ROS 2 sensor topics of this robot; without any, every IMU, force-torque and
    /// rangefinder site of the model is mapped automatically.
    #[serde(default)]
    pub ros: RobotRosConfig,
}

/// Publisher rates in Hz (0 turns a publisher off). Publishers run on the ROS thread from
/// the latest state, so no rate can slow the physics thread.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RosRates {
    /// `/clock`, sent when the sim time changed (and at 10 Hz while paused).
    pub clock: f64,
    pub joint_states: f64,
    /// `/tf` (moving frames); `/tf_static` goes out once.
    pub tf: f64,
    pub imu: f64,
    pub force_torque: f64,
    pub range: f64,
    /// `~/contacts` markers (needs `sim.export_contacts`).
    pub contacts: f64,
    /// sensor_msgs/LaserScan from a fan of rangefinders.
    pub scan: f64,
    /// nav_msgs/Odometry (its tf odom -> base goes out with /tf).
    pub odom: f64,
    pub diagnostics: f64,
}

impl Default for RosRates {
    fn default() -> Self {
        Self {
            clock: 1000.0,
            joint_states: 100.0,
            tf: 100.0,
            imu: 200.0,
            force_torque: 200.0,
            range: 20.0,
            contacts: 10.0,
            scan: 10.0,
            odom: 50.0,
            diagnostics: 1.0,
        }
    }
}

impl RosRates {
    /// (field, value) pairs, for validation.
    pub fn fields(&self) -> [(&'static str, f64); 10] {
        [
            ("clock", self.clock),
            ("joint_states", self.joint_states),
            ("tf", self.tf),
            ("imu", self.imu),
            ("force_torque", self.force_torque),
            ("range", self.range),
            ("contacts", self.contacts),
            ("scan", self.scan),
            ("odom", self.odom),
            ("diagnostics", self.diagnostics),
        ]
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RosConfig {
    pub rates: RosRates,
    /// Seconds of sim time that one message on `~/wrench` acts for (publish again to hold it).
    pub wrench_duration: f64,
    /// Length of a contact marker's force arrow per newton (meters).
    pub contact_force_scale: f64,
    /// The network of the pure-Rust DDS backend (feature `dds`); with rcl, the RMW and its
    /// environment variables decide these.
    pub dds: DdsConfig,
}

/// The highest ROS domain id on Linux.
pub const MAX_DOMAIN_ID: u16 = 232;

/// Which DDS participant the `dds` backend makes and how its services look on the wire.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DdsConfig {
    /// The ROS domain; unset: `ROS_DOMAIN_ID`, else 0.
    pub domain_id: Option<u16>,
    /// IPv4 addresses of the interfaces DDS may use; unset: 127.0.0.1 when
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE` is LOCALHOST or OFF (or `ROS_LOCALHOST_ONLY=1`),
    /// else every interface.
    pub interfaces: Option<Vec<String>>,
    /// How requests and replies of services are matched, which differs between the RMWs of
    /// the peers: `fastrtps` (rmw_fastrtps, the ROS 2 default), `cyclonedds`
    /// (rmw_cyclonedds), or `auto` (from `RMW_IMPLEMENTATION`, else fastrtps).
    pub service_mapping: ServiceMapping,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceMapping {
    #[default]
    Auto,
    Fastrtps,
    Cyclonedds,
}

impl Default for RosConfig {
    fn default() -> Self {
        Self {
            rates: RosRates::default(),
            wrench_duration: 0.1,
            contact_force_scale: 0.002,
            dds: DdsConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RobotRosConfig {
    /// sensor_msgs/Imu topics, each from MuJoCo sensors on one site.
    pub imu: Vec<ImuTopic>,
    /// geometry_msgs/WrenchStamped topics from a force and a torque sensor.
    pub force_torque: Vec<ForceTorqueTopic>,
    /// sensor_msgs/Range topics, one rangefinder each.
    pub range: Vec<RangeTopic>,
    /// sensor_msgs/LaserScan topics, each from a planar fan of rangefinders; without any
    /// listed, a fan found on one body becomes `scan`.
    pub laser_scans: Vec<LaserScanTopic>,
    /// nav_msgs/Odometry of a floating base.
    pub odometry: OdometryConfig,
    /// control_msgs/GripperCommand servers `{name}/gripper_cmd` (MoveIt's gripper
    /// controller).
    pub grippers: Vec<GripperController>,
    /// control_msgs/FollowJointTrajectory servers `{name}/follow_joint_trajectory` (what
    /// MoveIt drives); default: one `joint_trajectory_controller` with every joint that an
    /// actuator holds at a position.
    pub trajectory_controllers: Vec<TrajectoryController>,
}

impl RobotRosConfig {
    /// No sensor topic is listed (so they are found in the model).
    pub fn lists_no_sensors(&self) -> bool {
        self.imu.is_empty()
            && self.force_torque.is_empty()
            && self.range.is_empty()
            && self.laser_scans.is_empty()
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaserScanTopic {
    pub topic: String,
    /// Rangefinder-name patterns (full-match regular expressions); the rays must lie in
    /// their body's xy plane at even angles.
    pub sensors: Patterns,
    #[serde(default)]
    pub range_min: f64,
    pub rate: Option<f64>,
}

/// Odometry of a robot with a floating base: `odom` (nav_msgs/Odometry, ground truth) and
/// the tf `odom -> <root link>`. The odom frame lies where the robot starts (x, y, yaw).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OdometryConfig {
    pub enabled: bool,
    pub frame_id: String,
    /// Publish `world -> odom` on /tf_static; turn off when a localizer (AMCL, SLAM)
    /// publishes `map -> odom`.
    pub world_to_odom: bool,
    pub source: OdometrySource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OdometrySource {
    /// The floating base's true pose and velocity.
    #[default]
    GroundTruth,
    /// Dead reckoning from the diff-drive base's wheel angles (it drifts when wheels slip,
    /// as a real robot's does).
    Wheels,
}

impl Default for OdometryConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            frame_id: "odom".into(),
            world_to_odom: true,
            source: OdometrySource::GroundTruth,
        }
    }
}

/// A gripper driven through one GripperCommand action: the joint whose position the command
/// gives, and the actuator that moves it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GripperController {
    pub name: String,
    pub joint: String,
    /// Default: the position actuator on `joint`.
    pub actuator: Option<String>,
    /// With `actuator`: the joint positions at the two ends of its ctrlrange (the command
    /// maps linearly between them), e.g. Panda's tendon actuator, ctrl 0..255 for 0..0.04 m.
    pub position_range: Option<[f64; 2]>,
    /// How close counts as reached (meters or radians).
    #[serde(default = "default_gripper_tolerance")]
    pub tolerance: f64,
    /// A gripper that stops short of the goal (it grasped something) succeeds, with
    /// `stalled` set; otherwise it is aborted.
    #[serde(default = "yes")]
    pub allow_stalling: bool,
}

fn default_gripper_tolerance() -> f64 {
    0.002
}

/// A joint group driven through one FollowJointTrajectory action.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryController {
    pub name: String,
    /// Joint-name patterns (full-match regular expressions).
    pub joints: Patterns,
    /// Position error allowed at the end when a goal sets none (radians or meters).
    #[serde(default = "default_goal_tolerance")]
    pub goal_tolerance: f64,
    /// Seconds after the trajectory's end to get within the goal tolerance, when a goal sets
    /// no goal_time_tolerance.
    #[serde(default = "default_goal_time")]
    pub goal_time: f64,
}

fn default_goal_tolerance() -> f64 {
    0.02
}
fn default_goal_time() -> f64 {
    1.0
}

/// One IMU: MuJoCo sensor names (without the robot prefix); at least one is required.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImuTopic {
    pub topic: String,
    /// A `framequat` sensor.
    pub orientation: Option<String>,
    /// A `gyro` sensor.
    pub angular_velocity: Option<String>,
    /// An `accelerometer` sensor.
    pub linear_acceleration: Option<String>,
    /// Default: the sensors' site frame.
    pub frame_id: Option<String>,
    /// Hz; default `ros.rates.imu`.
    pub rate: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForceTorqueTopic {
    pub topic: String,
    /// A `force` sensor.
    pub force: Option<String>,
    /// A `torque` sensor.
    pub torque: Option<String>,
    pub frame_id: Option<String>,
    pub rate: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeTopic {
    pub topic: String,
    /// A `rangefinder` sensor.
    pub sensor: String,
    /// Radians; MuJoCo's rangefinder is a single ray, so 0 unless told.
    #[serde(default)]
    pub field_of_view: f64,
    #[serde(default)]
    pub min_range: f64,
    /// Default: the sensor's cutoff, else infinity.
    pub max_range: Option<f64>,
    pub frame_id: Option<String>,
    pub rate: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZmqConfig {
    /// Serve the legacy protocol.
    #[serde(default)]
    pub enabled: bool,
    /// PUB socket of the state rows (URLab: port 5555).
    #[serde(default = "default_state_endpoint")]
    pub state: String,
    /// SUB socket of `control` and `set_gains` (URLab: port 5556).
    #[serde(default = "default_control_endpoint")]
    pub control: String,
    /// PUB socket of the discovery JSON (URLab: port 5557).
    #[serde(default = "default_info_endpoint")]
    pub info: String,
    /// Publish every Nth physics step (1: every step, the legacy behaviour).
    #[serde(default = "one_u32")]
    pub divider: u32,
    /// Keep publishing rows at the step rate while paused, as URLab does.
    #[serde(default = "yes")]
    pub publish_while_paused: bool,
    /// Endpoints may bind every interface (`tcp://*:5555`); off by default.
    #[serde(default)]
    pub allow_all_interfaces: bool,
}

impl Default for ZmqConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            state: default_state_endpoint(),
            control: default_control_endpoint(),
            info: default_info_endpoint(),
            divider: 1,
            publish_while_paused: true,
            allow_all_interfaces: false,
        }
    }
}

fn default_state_endpoint() -> String {
    "tcp://127.0.0.1:5555".into()
}
fn default_control_endpoint() -> String {
    "tcp://127.0.0.1:5556".into()
}
fn default_info_endpoint() -> String {
    "tcp://127.0.0.1:5557".into()
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotZmqConfig {
    pub state: Option<String>,
    pub control: Option<String>,
    pub info: Option<String>,
    /// Action-key bitmask sent on `{robot}/actions` (0: none held); changeable at run time.
    #[serde(default)]
    pub actions: i32,
}

/// The three endpoints one legacy server binds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ZmqEndpoints {
    pub state: String,
    pub control: String,
    pub info: String,
}

impl Config {
    /// The endpoints serving robot `index`: its own, else the top-level ones.
    pub fn zmq_endpoints(&self, index: usize) -> ZmqEndpoints {
        let own = &self.robots[index].zmq;
        ZmqEndpoints {
            state: own.state.clone().unwrap_or_else(|| self.zmq.state.clone()),
            control: own
                .control
                .clone()
                .unwrap_or_else(|| self.zmq.control.clone()),
            info: own.info.clone().unwrap_or_else(|| self.zmq.info.clone()),
        }
    }
}

/// Who drives a robot. Commands from the other sources are ignored (and counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlSource {
    /// ROS 2 topics, services and actions.
    #[default]
    Ros,
    /// Legacy ZMQ clients.
    Zmq,
    /// The internal player: keyframe sequencer and CSV playback.
    Player,
}

impl ControlSource {
    /// The source whose `as u8` is `value` (ROS for anything else).
    pub fn from_u8(value: u8) -> Self {
        match value {
            x if x == Self::Zmq as u8 => Self::Zmq,
            x if x == Self::Player as u8 => Self::Player,
            _ => Self::Ros,
        }
    }
}

/// What an actuator command means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlMode {
    /// The value is written to `ctrl` (a position servo's target, a motor's torque, ...).
    #[default]
    Passthrough,
    /// The value is a joint position target for a PD law computed every step (motors).
    Pd,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GainsConfig {
    #[serde(default = "default_pd_kp")]
    pub kp: f64,
    #[serde(default = "default_pd_kv")]
    pub kv: f64,
    #[serde(default = "default_torque_limit")]
    pub torque_limit: f64,
}

impl Default for GainsConfig {
    fn default() -> Self {
        Self {
            kp: default_pd_kp(),
            kv: default_pd_kv(),
            torque_limit: default_torque_limit(),
        }
    }
}

fn default_pd_kp() -> f64 {
    100.0
}
fn default_pd_kv() -> f64 {
    5.0
}
fn default_torque_limit() -> f64 {
    200.0
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlConfig {
    #[serde(default)]
    pub source: ControlSource,
    #[serde(default)]
    pub mode: ControlMode,
    /// PD gains of every actuator (the legacy defaults: kp 100, kv 5, torque limit 200).
    #[serde(default)]
    pub gains: GainsConfig,
    /// Adds the bias force (gravity, Coriolis) of each motor's joint to its ctrl.
    #[serde(default)]
    pub gravity_compensation: bool,
    pub base: Option<BaseConfig>,
    /// User keyframe presets, in the shape of the built-in ones.
    #[serde(default)]
    pub presets: Vec<crate::control::Preset>,
    /// A preset (built-in or user) loaded at start.
    pub preset: Option<String>,
    /// Play the loaded preset from the start (after a 0.5 s delay), as the original plugin
    /// does by default. Only matters when `preset` is set.
    #[serde(default = "yes")]
    pub autoplay: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseKind {
    /// Two wheel joints driven from the twist's vx and wz.
    DiffDrive,
    /// The floating base's planar velocity (vx, vy, wz) is set from the twist every step.
    Planar,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaseConfig {
    #[serde(rename = "type")]
    pub kind: BaseKind,
    pub left_wheel: Option<String>,
    pub right_wheel: Option<String>,
    pub wheel_radius: Option<f64>,
    pub wheel_separation: Option<f64>,
    /// Seconds (sim time) after the last twist at which the base stops; 0 keeps it forever.
    #[serde(default = "default_twist_timeout")]
    pub cmd_vel_timeout: f64,
}

fn default_twist_timeout() -> f64 {
    0.5
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseConfig {
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Roll, pitch, yaw in radians (fixed axes x, y, z as in URDF).
    #[serde(default)]
    pub rpy: [f64; 3],
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrdfGains {
    #[serde(default = "default_kp")]
    pub position_kp: f64,
    #[serde(default = "default_kv")]
    pub position_kv: f64,
    #[serde(default = "default_velocity_kv")]
    pub velocity_kv: f64,
}

impl Default for UrdfGains {
    fn default() -> Self {
        Self {
            position_kp: default_kp(),
            position_kv: default_kv(),
            velocity_kv: default_velocity_kv(),
        }
    }
}

fn default_kp() -> f64 {
    100.0
}
fn default_kv() -> f64 {
    10.0
}
fn default_velocity_kv() -> f64 {
    10.0
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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
#[derive(Debug, Clone, Deserialize)]
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

#[derive(Debug, Clone, Deserialize)]
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
            super::full_match_regex(pattern).map_err(|e| ("joints".to_string(), e))?;
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

#[derive(Debug, Clone, Default, Deserialize)]
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
