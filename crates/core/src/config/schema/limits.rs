//! `limits:` (how far what comes from the network may go), `requests:` (what the network may
//! ask for at all) and `render:` (how long render memory outlives its use).
use serde::Deserialize;

/// Bounds on what requests bring (spawns, entity states, wrenches, model texts, legacy
/// messages) and on what one world may hold. A request beyond them is refused with the
/// bound it broke; a world beyond them does not load.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Metres from the origin: a pose beyond it (spawn, set_entity_state, a wrench's frame)
    /// is refused.
    pub world_bound: f64,
    /// m/s and rad/s: a velocity beyond it (twists, entity velocities) is refused.
    pub speed_bound: f64,
    /// N and N m: a force or torque beyond it (wrenches) is refused.
    pub force_bound: f64,
    /// Bytes of a model text or file a request brings (spawn resource_string, a spawned or
    /// loaded file, a mesh it names).
    pub resource_bytes: u64,
    /// Element nesting of a model text or file a request brings.
    pub xml_depth: usize,
    /// Robots and objects in one world.
    pub robots: usize,
    /// Pixels over every camera of one world (width x height, summed).
    pub camera_pixels: u64,
    /// Texture pixels over every texture of one world.
    pub texture_pixels: u64,
    /// Rays per scan over every lidar of one world.
    pub lidar_rays: u64,
    /// Bytes of one message on the legacy control socket (larger ones are dropped by ZMQ).
    pub zmq_message_bytes: u64,
    /// Steps one request may ask for (step_simulation, simulate_steps).
    pub steps_per_request: u64,
    /// Bytes of MuJoCo arena (`<size memory>`) a request's model may ask for.
    pub arena_bytes: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            world_bound: 10_000.0,
            speed_bound: 1_000.0,
            force_bound: 1e6,
            resource_bytes: 8 << 20,
            xml_depth: 256,
            robots: 64,
            camera_pixels: 4096 * 4096,
            texture_pixels: 8192 * 8192,
            lidar_rays: 1 << 20,
            zmq_message_bytes: 1 << 20,
            steps_per_request: 1_000_000,
            arena_bytes: 1 << 30,
        }
    }
}

impl LimitsConfig {
    /// The first field that is not a usable bound: (field, why).
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let positive = [
            ("world_bound", self.world_bound),
            ("speed_bound", self.speed_bound),
            ("force_bound", self.force_bound),
        ];
        for (field, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Some((field, format!("must be a positive number, got {value}")));
            }
        }
        let counts = [
            ("resource_bytes", self.resource_bytes),
            ("xml_depth", self.xml_depth as u64),
            ("robots", self.robots as u64),
            ("camera_pixels", self.camera_pixels),
            ("texture_pixels", self.texture_pixels),
            ("lidar_rays", self.lidar_rays),
            ("zmq_message_bytes", self.zmq_message_bytes),
            ("steps_per_request", self.steps_per_request),
            ("arena_bytes", self.arena_bytes),
        ];
        counts
            .into_iter()
            .find(|(_, value)| *value == 0)
            .map(|(field, _)| (field, "must be at least 1".to_string()))
    }

    /// Whether every value is finite and within `bound` in magnitude.
    pub fn within(values: &[f64], bound: f64) -> bool {
        values.iter().all(|v| v.is_finite() && v.abs() <= bound)
    }
}

/// What the network may ask for: world changes at all, and which files.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RequestsConfig {
    /// Spawn, delete, load and unload worlds through ROS services and the console; off: they
    /// answer that world changes are turned off.
    pub world_changes: bool,
    /// Folders whose files requests may name (spawn and load_world URIs, the worlds and
    /// spawnables listed), besides the config's own folders, the package's config folder,
    /// `world.search_paths`, the models folder and the ROS package paths.
    pub file_roots: Vec<String>,
}

impl Default for RequestsConfig {
    fn default() -> Self {
        Self {
            world_changes: true,
            file_roots: Vec::new(),
        }
    }
}

/// The render and ray-casting threads.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RenderConfig {
    /// Seconds without a frame or scan asked for, after which the GL context, the render
    /// contexts and the mirrors are released (made again at the next request); 0 keeps
    /// them for good.
    pub idle_release: f64,
    /// Niceness of the render and ray-casting threads and of the rasterizer threads the GL
    /// driver starts from them (0 to 19): above the ROS thread's (`ros.nice`), so that when
    /// the CPUs are busy physics comes first, publishing next and pictures last.
    pub nice: u8,
}

impl Default for RenderConfig {
    fn default() -> Self {
        Self {
            idle_release: 30.0,
            nice: 15,
        }
    }
}
