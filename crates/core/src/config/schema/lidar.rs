//! Each robot's `lidars:`: ray-cast lidars (MuJoCo's `mj_multiRay` on a copy of the state, off
//! the physics thread). One channel makes a planar lidar (sensor_msgs/LaserScan on
//! `{name}/scan`), more a 3D one (sensor_msgs/PointCloud2 on `{name}/points`).
use serde::Deserialize;

/// The most rays one lidar casts per scan.
pub const MAX_RAYS: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LidarConfig {
    /// Its name: the topic namespace and frame unless `topic` and `frame_id` say otherwise,
    /// and the key of its `noise:` entry.
    pub name: String,
    /// The body it sits on (its name without the robot prefix; a URDF link's name).
    pub body: String,
    /// Where on the body, and turned by roll, pitch, yaw (radians, fixed axes as in URDF);
    /// unturned, ray 0 of the middle channel points along the body's +x, channels spread up.
    #[serde(default)]
    pub xyz: [f64; 3],
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Rows of rays (1: a planar lidar).
    #[serde(default = "default_channels")]
    pub channels: u32,
    /// Rays per row, over the horizontal field of view.
    #[serde(default = "default_samples")]
    pub samples: u32,
    /// Lowest and highest elevation in degrees (a planar lidar scans at elevation 0).
    #[serde(default = "default_vertical")]
    pub vertical_fov: [f64; 2],
    /// First and last azimuth in degrees, counterclockwise from +x; a full turn leaves out
    /// the last ray (it would repeat the first).
    #[serde(default = "default_horizontal")]
    pub horizontal_fov: [f64; 2],
    #[serde(default = "default_range_min")]
    pub range_min: f64,
    #[serde(default = "default_range_max")]
    pub range_max: f64,
    /// Each range is read in steps of this many metres (0: as cast), as Gazebo's
    /// `<range><resolution>` states it.
    #[serde(default)]
    pub resolution: f64,
    /// Scans per second at most (while someone subscribes).
    #[serde(default = "default_rate")]
    pub rate: f64,
    /// The topic, as written (default `{name}/scan` or `{name}/points`).
    #[serde(default)]
    pub topic: Option<String>,
    /// The frame its messages name (default `{name}_frame`, which /tf_static places on the
    /// body). A frame given is taken as one that exists (its link's, as a Gazebo sensor names
    /// its data): no transform is published for it.
    #[serde(default)]
    pub frame_id: Option<String>,
}

fn default_channels() -> u32 {
    16
}
fn default_samples() -> u32 {
    1800
}
fn default_vertical() -> [f64; 2] {
    [-15.0, 15.0]
}
fn default_horizontal() -> [f64; 2] {
    [-180.0, 180.0]
}
fn default_range_min() -> f64 {
    0.1
}
fn default_range_max() -> f64 {
    30.0
}
fn default_rate() -> f64 {
    10.0
}

impl LidarConfig {
    /// Why the settings cannot be used, naming the field under `lidars[i]`.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if self.name.is_empty() {
            return Some(("name", "needs a name".into()));
        }
        if self.body.is_empty() {
            return Some(("body", "needs a body name".into()));
        }
        if self.channels == 0 || self.samples == 0 {
            return Some(("channels", "channels and samples must be at least 1".into()));
        }
        let rays = self.channels as u64 * self.samples as u64;
        if rays > MAX_RAYS {
            return Some((
                "samples",
                format!("{rays} rays per scan; at most {MAX_RAYS}"),
            ));
        }
        let all = self
            .xyz
            .iter()
            .chain(&self.rpy)
            .chain(&self.vertical_fov)
            .chain(&self.horizontal_fov);
        if all.into_iter().any(|v| !v.is_finite()) {
            return Some((
                "xyz",
                "xyz, rpy and the fields of view must be finite".into(),
            ));
        }
        let [low, high] = self.vertical_fov;
        if !(-90.0..=90.0).contains(&low) || !(-90.0..=90.0).contains(&high) || low > high {
            return Some((
                "vertical_fov",
                format!("must be [low, high] within -90..90 degrees, got [{low}, {high}]"),
            ));
        }
        let [first, last] = self.horizontal_fov;
        if first >= last || last - first > 360.0 {
            return Some((
                "horizontal_fov",
                format!(
                    "must be [first, last] spanning at most 360 degrees, got [{first}, {last}]"
                ),
            ));
        }
        if !(self.range_min.is_finite()
            && self.range_max.is_finite()
            && self.range_min >= 0.0
            && self.range_min < self.range_max)
        {
            return Some((
                "range_max",
                format!(
                    "needs 0 <= range_min < range_max (metres), got {} and {}",
                    self.range_min, self.range_max
                ),
            ));
        }
        if !(self.resolution.is_finite() && self.resolution >= 0.0) {
            return Some((
                "resolution",
                format!("must be 0 or more metres, got {}", self.resolution),
            ));
        }
        if !(self.rate.is_finite() && self.rate > 0.0 && self.rate <= 1000.0) {
            return Some((
                "rate",
                format!(
                    "must be more than 0 and at most 1000 scans per second, got {}",
                    self.rate
                ),
            ));
        }
        None
    }
}
