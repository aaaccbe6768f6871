//! `world:` (what surrounds the robots) and `sim:` (how the physics thread runs).
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
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
    /// Folders searched, besides the package's `config/`, for world configs (`LoadWorld`,
    /// `GetAvailableWorlds`) and spawnable models (`GetSpawnables`).
    #[serde(default)]
    pub search_paths: Vec<String>,
    /// MB of decoded meshes and textures MuJoCo keeps between builds of the world while it
    /// changes (a spawn, a delete or a load builds it again), let go of 30 s after the last
    /// change. 0 keeps none.
    #[serde(default = "default_asset_cache_mb")]
    pub asset_cache_mb: u32,
    /// Where the world's origin lies on the earth, for the GPS receivers and barometers.
    #[serde(default)]
    pub origin: super::GeoOrigin,
    /// The semantic classes segmentation cameras label with.
    #[serde(default)]
    pub classes: Vec<super::SemanticClass>,
}

/// The real-time factors `sim.speed` may take: beyond them a paced tick would sleep for
/// hours or be shorter than a step can take.
pub const SPEED_RANGE: std::ops::RangeInclusive<f64> = 1e-3..=1e3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SimMode {
    /// Paced against the wall clock, times `speed`.
    Realtime,
    /// As fast as possible.
    Fast,
    /// Not stepping until unpaused or asked to step.
    Paused,
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
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
    /// SCHED_FIFO priority of the physics thread while it steps in real time (1-99; the
    /// thread that sends /clock gets one less), where the process may take it; else both
    /// ask for a raised niceness. 0 asks for no SCHED_FIFO.
    #[serde(default = "default_realtime_priority")]
    pub realtime_priority: u8,
    /// Seconds a realtime run may fall behind the wall clock and still catch up by stepping
    /// back to back; later than that, its schedule restarts from then and the time lost
    /// lowers the real-time factor instead of coming back as a burst of steps.
    #[serde(default = "default_catch_up")]
    pub catch_up: f64,
    /// Seconds between two log lines with the live figures; 0 turns them off.
    #[serde(default = "default_stats_period")]
    pub stats_period: f64,
    /// Contacts copied into the latest-state snapshot each step, for the ROS contact
    /// markers (`~/contacts`) and the robots' contact sensors; 0 exports none, unless a
    /// robot has contact sensors (then `CONTACT_SENSOR_CAPACITY`).
    #[serde(default)]
    pub export_contacts: u32,
    /// What a step that diverges (a NaN, infinite or huge position, velocity or
    /// acceleration) leads to; sim time goes on in every case.
    #[serde(default)]
    pub on_divergence: OnDivergence,
    /// Seeds the sensors' noise: with the sensor's name it fixes each sensor's stream of
    /// draws, so a rerun is identical and another seed differs. It never touches physics.
    #[serde(default)]
    pub seed: u64,
}

/// `sim.on_divergence`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDivergence {
    /// Put back the last good state (kept every 50 steps) and pause.
    #[default]
    Restore,
    /// Reset the world to its initial state and run on.
    Reset,
    /// Pause where it is, for a look at what went wrong.
    Pause,
}

impl OnDivergence {
    /// As the config writes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Restore => "restore",
            Self::Reset => "reset",
            Self::Pause => "pause",
        }
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            mode: default_mode(),
            speed: 1.0,
            substeps: 1,
            spin_us: default_spin_us(),
            realtime_priority: default_realtime_priority(),
            catch_up: default_catch_up(),
            stats_period: default_stats_period(),
            export_contacts: 0,
            on_divergence: OnDivergence::default(),
            seed: 0,
        }
    }
}

fn default_mode() -> SimMode {
    SimMode::Realtime
}
fn one() -> f64 {
    1.0
}
pub(super) fn one_u32() -> u32 {
    1
}
fn default_spin_us() -> u32 {
    150
}
fn default_realtime_priority() -> u8 {
    50
}
fn default_catch_up() -> f64 {
    0.005
}
fn default_stats_period() -> f64 {
    5.0
}

fn default_asset_cache_mb() -> u32 {
    256
}

impl Default for WorldConfig {
    fn default() -> Self {
        Self {
            timestep: None,
            gravity: None,
            floor: false,
            light: false,
            search_paths: Vec::new(),
            asset_cache_mb: default_asset_cache_mb(),
            origin: super::GeoOrigin::default(),
            classes: Vec::new(),
        }
    }
}

/// Contacts exported each step when a robot has contact sensors and `sim.export_contacts`
/// asks for fewer.
pub const CONTACT_SENSOR_CAPACITY: u32 = 200;

impl super::Config {
    /// The fewest contacts each state must carry for the robots' contact sensors:
    /// `CONTACT_SENSOR_CAPACITY` when a robot has one, else 0.
    pub fn contact_sensor_capacity(&self) -> u32 {
        let sensors = self.robots.iter().any(|r| !r.contacts.is_empty());
        if sensors { CONTACT_SENSOR_CAPACITY } else { 0 }
    }
}
