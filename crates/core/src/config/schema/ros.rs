//! `ros:` (the node's rates, DDS options) and each robot's `ros:` (its sensor topics,
//! odometry, action servers).
use super::Patterns;
use super::yes;
use serde::Deserialize;

/// Publisher rates in Hz (0 turns a publisher off). Publishers run on the ROS thread from
/// the latest state, so no rate can slow the physics thread.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
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
    /// A publisher rate: 0 (off), or from 1 mHz (longer periods overflow the scheduler's
    /// arithmetic) to 100 kHz.
    pub fn valid(hz: f64) -> bool {
        hz == 0.0 || (1e-3..=100_000.0).contains(&hz)
    }

    /// The rate of field `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.fields()
            .into_iter()
            .find(|(field, _)| *field == name)
            .map(|(_, hz)| hz)
    }

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

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RosConfig {
    pub rates: RosRates,
    /// Seconds of sim time that one message on `~/wrench` acts for (publish again to hold it).
    pub wrench_duration: f64,
    /// Length of a contact marker's force arrow per newton (meters).
    pub contact_force_scale: f64,
    /// Niceness (0-19) of the node's thread and of the threads it starts (middleware, world
    /// builds), and of the sampler that publishes the topics, where the physics thread runs
    /// at the normal weight: when the CPUs are busy physics comes first and the publishers
    /// give way. Where physics got SCHED_FIFO or a
    /// raised niceness, they keep the normal weight.
    pub nice: u8,
    /// The network of the pure-Rust DDS backend (feature `dds`); with rcl, the RMW and its
    /// environment variables decide these.
    pub dds: DdsConfig,
}

/// The highest ROS domain id on Linux.
pub const MAX_DOMAIN_ID: u16 = 232;

/// Which DDS participant the `dds` backend makes and how its services look on the wire.
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
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
    /// Remote readers and writers the `/clock` participant sees come and go (a participant
    /// that leaves takes its own with it) before a new one takes over: RustDDS keeps the
    /// topic data of each for as long as its topic lives elsewhere; unset:
    /// `CLOCK_RENEW_AFTER`, 0: never.
    pub clock_renew_after: Option<u32>,
}

/// See `DdsConfig::clock_renew_after`: some hundred bytes each, about 1 MB held at most.
pub const CLOCK_RENEW_AFTER: u32 = 2000;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
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
            nice: 10,
            dds: DdsConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RobotRosConfig {
    /// The namespace of the robot's topics and actions when several robots share the world
    /// (default: its name).
    pub namespace: Option<String>,
    /// sensor_msgs/Imu topics, each from MuJoCo sensors on one site.
    pub imu: Vec<ImuTopic>,
    /// geometry_msgs/WrenchStamped topics from a force and a torque sensor.
    pub force_torque: Vec<ForceTorqueTopic>,
    /// sensor_msgs/Range topics, one rangefinder each.
    pub range: Vec<RangeTopic>,
    /// sensor_msgs/MagneticField topics, one magnetometer each; every magnetometer of the
    /// model not listed is still found on its site.
    pub magnetometers: Vec<MagnetometerTopic>,
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

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
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
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OdometryConfig {
    pub enabled: bool,
    pub frame_id: String,
    /// Publish `world -> odom` on /tf_static; turn off when a localizer (AMCL, SLAM)
    /// publishes `map -> odom`.
    pub world_to_odom: bool,
    pub source: OdometrySource,
    /// The topic, under the robot's namespace: `odom`, or `<controller>/odom` for a base
    /// that a diff_drive_controller gives.
    pub topic: String,
    /// Send `odom -> <root link>` on /tf (a diff_drive_controller's `enable_odom_tf`, a
    /// Gazebo drive's `publish_odom_tf`); turn off when a filter (robot_localization's EKF)
    /// publishes it. `world -> <root link>` is not sent either way.
    pub tf: bool,
    /// The frame odometry describes (`child_frame_id`, the tf's child; a diff_drive_controller's
    /// `base_frame_id`): a link of the robot, its pose and twist; another name, the root
    /// link's under that name. None: the root link.
    pub base_frame: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
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
            topic: "odom".into(),
            tf: true,
            base_frame: None,
        }
    }
}

/// A gripper driven through one GripperCommand action: the joint whose position the command
/// gives, and the actuator that moves it.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
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
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
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
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
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
    /// The sensor broadcaster of the robot's controllers file this topic stands for.
    #[serde(skip)]
    pub controller: Option<String>,
}

/// One magnetometer: a MuJoCo `magnetometer` sensor's name (without the robot prefix).
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MagnetometerTopic {
    pub topic: String,
    pub sensor: String,
    /// Default: the sensor's site frame.
    pub frame_id: Option<String>,
    /// Hz; default `ros.rates.imu`.
    pub rate: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ForceTorqueTopic {
    pub topic: String,
    /// A `force` sensor.
    pub force: Option<String>,
    /// A `torque` sensor.
    pub torque: Option<String>,
    pub frame_id: Option<String>,
    pub rate: Option<f64>,
    /// Whose wrench it is: the parent body's on the site's (MuJoCo's) or the site's on its
    /// parent (Gazebo's default: the same wrench negated).
    #[serde(default)]
    pub measure_direction: MeasureDirection,
    /// The sensor broadcaster of the robot's controllers file this topic stands for.
    #[serde(skip)]
    pub controller: Option<String>,
}

/// SDF's `<measure_direction>` words for the two wrenches across a joint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MeasureDirection {
    /// The wrench the parent exerts on the child: MuJoCo's force and torque sensors.
    #[default]
    ParentToChild,
    /// The wrench the child exerts on the parent.
    ChildToParent,
}

#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
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
    /// The sensor broadcaster of the robot's controllers file this topic stands for.
    #[serde(skip)]
    pub controller: Option<String>,
}
