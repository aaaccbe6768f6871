//! Sensors at a point of a robot's body that read where that point is and how it moves:
//! each robot's `gps:` (sensor_msgs/NavSatFix and its velocity) and `barometers:`
//! (sensor_msgs/FluidPressure), placed on the earth by the world's `origin`. Each becomes a
//! MuJoCo site with a `framepos` and a `framelinvel` sensor on it, so the physics thread
//! samples them with the rest of the state.
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PointSensorConfig {
    /// Topic namespace, and the name of its frame (fixed to the body on /tf_static).
    pub name: String,
    /// The body it sits on (its name without the robot prefix; a URDF link's name).
    pub body: String,
    /// Where on the body.
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Messages per second of sim time.
    #[serde(default = "default_rate")]
    pub rate: f64,
    /// Its topic (a GPS's fix; its velocity stays on `{name}/vel`); default `{name}/fix` for a
    /// GPS, `{name}` for the others. A `<gazebo>` sensor's is the one its users read.
    #[serde(default)]
    pub topic: Option<String>,
    /// Its messages' frame instead of `{name}` (a link's name: that frame's pose comes from
    /// the link, and no fixed frame is added).
    #[serde(default)]
    pub frame_id: Option<String>,
}

fn default_rate() -> f64 {
    10.0
}

impl PointSensorConfig {
    /// The topic the config gives, else `default`.
    pub fn topic_or(&self, default: String) -> String {
        self.topic.clone().unwrap_or(default)
    }

    /// The first field it cannot take, with why.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if self.name.is_empty() || self.name.contains(['/', ' ']) {
            return Some(("name", "needs a name without '/' or spaces".into()));
        }
        if self.body.is_empty() {
            return Some(("body", "needs a body name".into()));
        }
        for (field, given) in [("topic", &self.topic), ("frame_id", &self.frame_id)] {
            if given.as_ref().is_some_and(|g| g.trim().is_empty()) {
                return Some((field, "must not be empty when given".into()));
            }
        }
        if self.xyz.iter().any(|v| !v.is_finite()) {
            return Some(("xyz", "must be finite".into()));
        }
        if !(self.rate.is_finite() && self.rate > 0.0) {
            return Some((
                "rate",
                format!("must be a positive number, got {}", self.rate),
            ));
        }
        None
    }
}

/// Where the world's origin lies on the earth (Gazebo's `<spherical_coordinates>`).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct GeoOrigin {
    /// Degrees north.
    pub latitude: f64,
    /// Degrees east.
    pub longitude: f64,
    /// Metres above the WGS84 ellipsoid.
    #[serde(default)]
    pub altitude: f64,
    /// Degrees from east to the world's +x, counterclockwise (90: +x points north).
    #[serde(default)]
    pub heading: f64,
}

impl Default for GeoOrigin {
    /// Where Gazebo's worlds without spherical coordinates are taken to lie: 0 N 0 E.
    fn default() -> Self {
        Self {
            latitude: 0.0,
            longitude: 0.0,
            altitude: 0.0,
            heading: 0.0,
        }
    }
}

impl GeoOrigin {
    /// The first field it cannot take, with why.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let fields = [
            ("latitude", self.latitude, 90.0),
            ("longitude", self.longitude, 180.0),
            ("altitude", self.altitude, 1e6),
            ("heading", self.heading, 360.0),
        ];
        fields
            .into_iter()
            .find(|(_, value, bound)| !(value.is_finite() && value.abs() <= *bound))
            .map(|(field, value, bound)| {
                (
                    field,
                    format!("must be between -{bound} and {bound}, got {value}"),
                )
            })
    }
}
