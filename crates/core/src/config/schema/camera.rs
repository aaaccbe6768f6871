//! Each robot's `cameras:`: which MuJoCo cameras are rendered (or mounted first), at what
//! size, rate and quality. Rendering runs on its own thread (`crates/render/`), and only while
//! someone watches.
use super::yes;
use serde::Deserialize;

/// The largest image side rendered, in pixels (MuJoCo's offscreen buffer grows to fit).
pub const MAX_IMAGE_SIDE: u32 = 8192;

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct CameraConfig {
    /// The MuJoCo camera (its name without the robot prefix); with `mount`, the name of the
    /// camera that is added.
    pub camera: String,
    /// Topic namespace and frame-name stem (`{name}/image_raw`, `{name}_optical_frame`);
    /// default: the camera's name.
    #[serde(default)]
    pub name: Option<String>,
    /// Adds the camera to the model, fixed to a body, when the model has none there.
    #[serde(default)]
    pub mount: Option<CameraMount>,
    #[serde(default = "default_width")]
    pub width: u32,
    #[serde(default = "default_height")]
    pub height: u32,
    /// Frames per second at most (while someone subscribes).
    #[serde(default = "default_rate")]
    pub rate: f64,
    #[serde(default)]
    pub quality: RenderQuality,
    /// Publish `{name}/image_raw` (rgb8); a depth camera's colour image may be left out.
    #[serde(default = "yes")]
    pub image: bool,
    /// Also publish `{name}/depth/image_raw` (32FC1, metres along the optical axis).
    #[serde(default = "yes")]
    pub depth: bool,
    /// Also publish `{name}/points`: sensor_msgs/PointCloud2 from the depth image, one point
    /// per pixel (x, y, z and packed rgb in the optical frame; NaN where nothing is seen).
    #[serde(default)]
    pub points: bool,
    /// Near and far clip planes in metres; default: the model's `znear` and `zfar` (times
    /// its extent), as MuJoCo renders.
    #[serde(default)]
    pub near: Option<f64>,
    #[serde(default)]
    pub far: Option<f64>,
    /// Also render what each pixel sees (a second pass of the same frame) and publish
    /// Gazebo's segmentation maps under `{name}/semantic/` and `{name}/instance/`, with
    /// vision_msgs/Detection2DArray boxes on `{name}/detections`.
    #[serde(default)]
    pub segmentation: bool,
    /// What one instance is in the instance map and the boxes.
    #[serde(default)]
    pub instances: InstanceUnit,
    /// The lens: plumb-bob distortion applied to every image and written in CameraInfo.
    #[serde(default)]
    pub distortion: Option<LensDistortion>,
    /// Topic names in place of the `{name}/..` ones (a Gazebo sensor's, as its users read them).
    #[serde(default)]
    pub topics: CameraTopics,
    /// The frame its images name (default `{name}_optical_frame`, which /tf_static places on
    /// the body). A frame given is taken as one that exists (a URDF's optical-frame link, as a
    /// Gazebo camera names its images): no transform is published for it.
    #[serde(default)]
    pub frame_id: Option<String>,
}

/// Topic names that replace a camera's defaults; each one left out keeps its default.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct CameraTopics {
    #[serde(default)]
    pub image: Option<String>,
    #[serde(default)]
    pub depth: Option<String>,
    #[serde(default)]
    pub camera_info: Option<String>,
    #[serde(default)]
    pub points: Option<String>,
    /// The folder of the semantic maps and labels (default `{name}/semantic`).
    #[serde(default)]
    pub semantic: Option<String>,
    /// The folder of the instance maps and labels (default `{name}/instance`).
    #[serde(default)]
    pub instance: Option<String>,
    #[serde(default)]
    pub detections: Option<String>,
}

/// Brown-Conrady ("plumb bob") coefficients, as Gazebo's `<distortion>` and OpenCV take
/// them: radial k1, k2, k3 and tangential p1, p2, about the principal point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LensDistortion {
    #[serde(default)]
    pub k1: f64,
    #[serde(default)]
    pub k2: f64,
    #[serde(default)]
    pub k3: f64,
    #[serde(default)]
    pub p1: f64,
    #[serde(default)]
    pub p2: f64,
}

impl LensDistortion {
    /// CameraInfo's `d` for the plumb_bob model: k1, k2, p1, p2, k3.
    pub fn coefficients(&self) -> [f64; 5] {
        [self.k1, self.k2, self.p1, self.p2, self.k3]
    }

    /// Where the lens puts the undistorted normalized image point (x, y).
    pub fn distort(&self, x: f64, y: f64) -> (f64, f64) {
        let r2 = x * x + y * y;
        let radial = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3));
        let dx = 2.0 * self.p1 * x * y + self.p2 * (r2 + 2.0 * x * x);
        let dy = self.p1 * (r2 + 2.0 * y * y) + 2.0 * self.p2 * x * y;
        (x * radial + dx, y * radial + dy)
    }
}

/// What a segmentation camera counts as one instance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstanceUnit {
    /// A body with its geoms (a link, an object).
    #[default]
    Body,
    /// Each geom.
    Geom,
}

/// Where a camera is added: on `body` at `xyz`, turned by `rpy` (roll, pitch, yaw in radians,
/// fixed axes as in URDF) from the body's frame. Unturned it looks along the body's +x with
/// +z up, as a ROS camera link does.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct CameraMount {
    /// The body (its name without the robot prefix; a URDF link's name).
    pub body: String,
    #[serde(default)]
    pub xyz: [f64; 3],
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Vertical field of view in degrees.
    #[serde(default = "default_fovy")]
    pub fovy: f64,
}

/// How much of MuJoCo's renderer a frame uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RenderQuality {
    /// No shadows, reflections or multisampling: an order of magnitude faster on a CPU.
    #[default]
    Fast,
    /// MuJoCo's defaults (shadows, reflections, the model's multisampling).
    Full,
}

fn default_width() -> u32 {
    640
}
fn default_height() -> u32 {
    480
}
fn default_rate() -> f64 {
    15.0
}
fn default_fovy() -> f64 {
    60.0
}

impl CameraConfig {
    /// A camera found in the model, at the defaults.
    pub fn found(camera: &str) -> Self {
        Self {
            camera: camera.to_string(),
            name: None,
            mount: None,
            width: default_width(),
            height: default_height(),
            rate: default_rate(),
            quality: RenderQuality::default(),
            image: true,
            depth: true,
            points: false,
            near: None,
            far: None,
            segmentation: false,
            instances: InstanceUnit::default(),
            distortion: None,
            topics: CameraTopics::default(),
            frame_id: None,
        }
    }

    /// The topic namespace and frame-name stem.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.camera)
    }

    /// Why the settings cannot be used, naming the field under `cameras[i]`.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if self.camera.is_empty() {
            return Some(("camera", "needs a camera name".into()));
        }
        for (field, side) in [("width", self.width), ("height", self.height)] {
            if side == 0 || side > MAX_IMAGE_SIDE {
                return Some((
                    field,
                    format!("must be 1 to {MAX_IMAGE_SIDE} pixels, got {side}"),
                ));
            }
        }
        if !(self.rate.is_finite() && self.rate > 0.0 && self.rate <= 1000.0) {
            return Some((
                "rate",
                format!(
                    "must be more than 0 and at most 1000 frames per second, got {}",
                    self.rate
                ),
            ));
        }
        for (field, clip) in [("near", self.near), ("far", self.far)] {
            if let Some(v) = clip
                && !(v.is_finite() && v > 0.0)
            {
                return Some((
                    field,
                    format!("must be a positive distance in metres, got {v}"),
                ));
            }
        }
        if let (Some(near), Some(far)) = (self.near, self.far)
            && near >= far
        {
            return Some(("far", format!("must be beyond near ({near} m), got {far}")));
        }
        if let Some(lens) = &self.distortion
            && lens.coefficients().iter().any(|c| !c.is_finite())
        {
            return Some(("distortion", "k1, k2, k3, p1 and p2 must be finite".into()));
        }
        if let Some(mount) = &self.mount {
            if mount.body.is_empty() {
                return Some(("mount.body", "needs a body name".into()));
            }
            if mount.xyz.iter().chain(&mount.rpy).any(|v| !v.is_finite()) {
                return Some(("mount", "xyz and rpy must be finite".into()));
            }
            if !(mount.fovy.is_finite() && mount.fovy > 0.0 && mount.fovy < 180.0) {
                return Some((
                    "mount.fovy",
                    format!("must be between 0 and 180 degrees, got {}", mount.fovy),
                ));
            }
        }
        None
    }
}
