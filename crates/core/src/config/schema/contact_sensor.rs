//! Each robot's `contacts:`: contact sensors on a body or on one geom, as Gazebo's contact
//! sensor (ros_gz_interfaces/Contacts on `{name}`, every MuJoCo contact that geom or that
//! body's geoms are in), with a flag for a bumper or a foot (std_msgs/Bool on
//! `{name}/in_contact`) that turns on when the normal force reaches `threshold` and, with a
//! `debounce`, only once it has stayed on that side for that long.
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSensorConfig {
    /// Topic name (under the robot's namespace).
    pub name: String,
    /// Its topic instead of `{name}` (the flag goes on `{topic}/in_contact`); an absolute one
    /// is outside the robot's namespace. A `<gazebo>` sensor's is the one its users read.
    #[serde(default)]
    pub topic: Option<String>,
    /// The body whose geoms it watches (its name without the robot prefix).
    #[serde(default)]
    pub body: Option<String>,
    /// The one geom it watches instead (its name without the robot prefix).
    #[serde(default)]
    pub geom: Option<String>,
    /// Messages per second of sim time.
    #[serde(default = "default_rate")]
    pub rate: f64,
    /// Newtons of total normal force at which the flag turns on.
    #[serde(default = "default_threshold")]
    pub threshold: f64,
    /// Seconds of sim time the force must stay beyond (or below) the threshold before the
    /// flag follows it; 0 follows every sample.
    #[serde(default)]
    pub debounce: f64,
}

fn default_rate() -> f64 {
    ContactSensorConfig::DEFAULT_RATE
}

fn default_threshold() -> f64 {
    ContactSensorConfig::DEFAULT_THRESHOLD
}

impl ContactSensorConfig {
    pub const DEFAULT_RATE: f64 = 100.0;
    pub const DEFAULT_THRESHOLD: f64 = 1.0;

    /// Where its contacts go: `topic`, else `{name}`.
    pub fn contacts_topic(&self) -> &str {
        self.topic.as_deref().unwrap_or(&self.name)
    }

    /// The first field it cannot take, with why.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if self.name.is_empty() || self.name.contains(' ') || self.name.starts_with('/') {
            return Some(("name", "needs a relative topic name without spaces".into()));
        }
        if self
            .topic
            .as_ref()
            .is_some_and(|t| t.trim().is_empty() || t.contains(' '))
        {
            return Some((
                "topic",
                "needs a topic name without spaces when given".into(),
            ));
        }
        match (&self.body, &self.geom) {
            (None, None) => return Some(("body", "needs a body or a geom".into())),
            (Some(_), Some(_)) => {
                return Some(("geom", "takes a body or a geom, not both".into()));
            }
            _ => {}
        }
        let positive = [("rate", self.rate), ("threshold", self.threshold)];
        if let Some((field, value)) = positive
            .into_iter()
            .find(|(_, v)| !(v.is_finite() && *v > 0.0))
        {
            return Some((field, format!("must be a positive number, got {value}")));
        }
        if !(self.debounce.is_finite() && self.debounce >= 0.0) {
            let got = self.debounce;
            return Some(("debounce", format!("must be 0 or more seconds, got {got}")));
        }
        None
    }
}
