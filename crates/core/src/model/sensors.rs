//! Which cameras render and which lidars cast in a world, planned once when the world is
//! built and kept with it (a camera or a lidar body naming nothing is refused there, by every
//! build). A camera's or a lidar's index in the plan is its slot everywhere: at the render and
//! lidar threads, in the ROS outputs and in the legacy camera streams.
use crate::config::{CameraConfig, Config, LidarConfig, RenderQuality};
use crate::model::{RobotMap, pose};
use mujoco_rs::prelude::*;
use nalgebra::UnitQuaternion;

/// The cameras and lidars of one world.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SensorPlan {
    pub cameras: Vec<PlannedCamera>,
    pub lidars: Vec<PlannedLidar>,
}

/// Why a world's sensors cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SensorError {
    #[error(transparent)]
    Camera(#[from] NoCamera),
    #[error(transparent)]
    Lidar(#[from] LidarError),
}

impl SensorPlan {
    pub fn of(model: &MjModel, robots: &[RobotMap], config: &Config) -> Result<Self, SensorError> {
        Ok(Self {
            cameras: plan_cameras(robots, config)?,
            lidars: plan_lidars(model, robots, config)?,
        })
    }

    /// Pixels over every camera, rays over every lidar: what `limits` caps.
    pub fn camera_pixels(&self) -> u64 {
        self.cameras
            .iter()
            .map(|c| c.spec.width as u64 * c.spec.height as u64)
            .sum()
    }

    pub fn lidar_rays(&self) -> u64 {
        self.lidars.iter().map(|l| l.spec.rays.len() as u64).sum()
    }
}

/// What to render of one camera.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraSpec {
    /// MuJoCo camera id.
    pub camera: usize,
    pub width: usize,
    pub height: usize,
    pub quality: RenderQuality,
    pub depth: bool,
    /// Clip planes in metres; None: the model's.
    pub near: Option<f64>,
    pub far: Option<f64>,
    /// Also draw which geom each pixel sees.
    pub segmentation: bool,
}

/// One camera of one robot.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCamera {
    pub robot: usize,
    /// Topic namespace and frame stem (`name` of the config, else the camera's name).
    pub name: String,
    /// Frames per second at most.
    pub rate: f64,
    /// Topics wanted: the colour image, the depth image, the point cloud.
    pub image_topic: bool,
    pub depth_topic: bool,
    pub points_topic: bool,
    /// What one instance of its segmentation is.
    pub instances: crate::config::InstanceUnit,
    /// Its lens, when it distorts.
    pub distortion: Option<crate::config::LensDistortion>,
    /// Topic names that replace the `{name}/..` ones, and the frame its images name.
    pub topics: crate::config::CameraTopics,
    pub frame_id: Option<String>,
    pub spec: CameraSpec,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: robot '{robot}' has no camera '{camera}' (it has: {known})")]
pub struct NoCamera {
    pub field: String,
    pub robot: String,
    pub camera: String,
    pub known: String,
}

/// Each robot's `cameras:` list (an empty one: none), or every camera of its model when the
/// config has no such key.
fn plan_cameras(robots: &[RobotMap], config: &Config) -> Result<Vec<PlannedCamera>, NoCamera> {
    let mut planned = Vec::new();
    for (index, robot) in robots.iter().enumerate() {
        let configured = &config.robots[index];
        let cameras: Vec<CameraConfig> = if configured.all_model_cameras() {
            robot
                .cameras
                .iter()
                .map(|c| CameraConfig::found(&c.name))
                .collect()
        } else {
            configured.listed_cameras().to_vec()
        };
        for (k, camera) in cameras.iter().enumerate() {
            let id = robot
                .cameras
                .iter()
                .find(|c| c.name == camera.camera)
                .map(|c| c.id)
                .ok_or_else(|| NoCamera {
                    field: format!("robots[{index}].cameras[{k}].camera"),
                    robot: robot.name.clone(),
                    camera: camera.camera.clone(),
                    known: if robot.cameras.is_empty() {
                        "none".into()
                    } else {
                        robot
                            .cameras
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                })?;
            planned.push(PlannedCamera {
                robot: index,
                name: camera.name().to_string(),
                rate: camera.rate,
                image_topic: camera.image,
                depth_topic: camera.depth,
                points_topic: camera.points,
                instances: camera.instances,
                distortion: camera.distortion,
                topics: camera.topics.clone(),
                frame_id: camera.frame_id.clone(),
                spec: CameraSpec {
                    camera: id,
                    width: camera.width as usize,
                    height: camera.height as usize,
                    quality: camera.quality,
                    // The point cloud is made from depth.
                    depth: camera.depth || camera.points,
                    near: camera.near,
                    far: camera.far,
                    segmentation: camera.segmentation,
                },
            });
        }
    }
    Ok(planned)
}

/// One lidar as the caster takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct LidarSpec {
    pub body: usize,
    pub xyz: [f64; 3],
    pub quat_wxyz: [f64; 4],
    /// Unit directions in the lidar's frame.
    pub rays: Vec<[f64; 3]>,
    pub range_min: f64,
    pub range_max: f64,
    /// Per geom: it belongs to the lidar's robot.
    pub own: Vec<bool>,
}

/// One lidar of one robot.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedLidar {
    pub robot: usize,
    pub name: String,
    pub rate: f64,
    /// Rows and rays per row (1 row: a planar scan).
    pub channels: usize,
    pub samples: usize,
    /// First azimuth and the step between rays, radians.
    pub azimuth: (f64, f64),
    /// The step its ranges are read in, metres (0: as cast).
    pub resolution: f64,
    /// Its topic and frame as the config gives them (None: named after it).
    pub topic: Option<String>,
    pub frame_id: Option<String>,
    /// Where it sits, its rays and range limits, as the caster takes them.
    pub spec: LidarSpec,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: robot '{robot}' has no body '{body}'")]
pub struct LidarError {
    pub field: String,
    pub robot: String,
    pub body: String,
}

/// Unit ray directions in the lidar's frame, row by row (lowest elevation first), each row
/// by increasing azimuth; and the first azimuth with its step.
fn directions(lidar: &LidarConfig) -> (Vec<[f64; 3]>, (f64, f64)) {
    let (channels, samples) = (lidar.channels as usize, lidar.samples as usize);
    let [low, high] = lidar.vertical_fov.map(f64::to_radians);
    let [first, last] = lidar.horizontal_fov.map(f64::to_radians);
    let full_turn = (last - first) >= std::f64::consts::TAU - 1e-9;
    // A full turn leaves out the ray that would repeat the first.
    let gaps = if full_turn || samples == 1 {
        samples
    } else {
        samples - 1
    };
    let step = (last - first) / gaps.max(1) as f64;
    let mut rays = Vec::with_capacity(channels * samples);
    for row in 0..channels {
        let elevation = if channels == 1 {
            0.5 * (low + high)
        } else {
            low + (high - low) * row as f64 / (channels - 1) as f64
        };
        for ray in 0..samples {
            let azimuth = first + step * ray as f64;
            rays.push([
                elevation.cos() * azimuth.cos(),
                elevation.cos() * azimuth.sin(),
                elevation.sin(),
            ]);
        }
    }
    (rays, (first, step))
}

/// Each robot's `lidars:` list.
fn plan_lidars(
    model: &MjModel,
    robots: &[RobotMap],
    config: &Config,
) -> Result<Vec<PlannedLidar>, LidarError> {
    let mut planned = Vec::new();
    for (index, robot) in robots.iter().enumerate() {
        for (k, lidar) in config.robots[index].lidars.iter().enumerate() {
            let body = robot
                .bodies
                .iter()
                .find(|b| b.name == lidar.body)
                .map(|b| b.id)
                .ok_or_else(|| LidarError {
                    field: format!("robots[{index}].lidars[{k}].body"),
                    robot: robot.name.clone(),
                    body: lidar.body.clone(),
                })?;
            let [roll, pitch, yaw] = lidar.rpy;
            let quat_wxyz = pose::wxyz(&UnitQuaternion::from_euler_angles(roll, pitch, yaw));
            let (rays, azimuth) = directions(lidar);
            // The robot's own geoms: rays pass through them (a lidar does not see its mount).
            let own: Vec<bool> = (0..model.ffi().ngeom as usize)
                .map(|g| {
                    let owner = model.geom_bodyid()[g] as usize;
                    robot.bodies.iter().any(|b| b.id == owner)
                })
                .collect();
            planned.push(PlannedLidar {
                robot: index,
                name: lidar.name.clone(),
                rate: lidar.rate,
                channels: lidar.channels as usize,
                samples: lidar.samples as usize,
                azimuth,
                resolution: lidar.resolution,
                topic: lidar.topic.clone(),
                frame_id: lidar.frame_id.clone(),
                spec: LidarSpec {
                    body,
                    xyz: lidar.xyz,
                    quat_wxyz,
                    rays,
                    range_min: lidar.range_min,
                    range_max: lidar.range_max,
                    own,
                },
            });
        }
    }
    Ok(planned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build_world;

    const RIG: &str = "robots:\n  - name: rig\n    mjcf_string: \"<mujoco><worldbody><body name='b'>\
        <camera name='eye'/><geom size='.1'/></body></worldbody></mujoco>\"\n";

    fn planned(overrides: &[String]) -> Vec<PlannedCamera> {
        let config =
            Config::from_yaml(RIG, "rig.yaml", std::path::Path::new("."), overrides).unwrap();
        let world = build_world(&config).unwrap();
        world.sensors.cameras.clone()
    }

    #[test]
    fn no_key_renders_the_models_cameras_and_an_empty_list_none() {
        let all = planned(&[]);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].name, "eye");
        assert!(planned(&["robots.0.cameras=[]".to_string()]).is_empty());
    }

    fn lidar(channels: u32, samples: u32, vertical: [f64; 2], horizontal: [f64; 2]) -> LidarConfig {
        LidarConfig {
            name: "l".into(),
            body: "b".into(),
            xyz: [0.0; 3],
            rpy: [0.0; 3],
            channels,
            samples,
            vertical_fov: vertical,
            horizontal_fov: horizontal,
            range_min: 0.1,
            range_max: 10.0,
            resolution: 0.0,
            rate: 10.0,
            topic: None,
            frame_id: None,
        }
    }

    #[test]
    fn a_full_turn_does_not_repeat_its_first_ray() {
        let (rays, (first, step)) = directions(&lidar(1, 4, [0.0, 0.0], [-180.0, 180.0]));
        assert_eq!(rays.len(), 4);
        assert!((first + std::f64::consts::PI).abs() < 1e-12);
        assert!((step - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        // -180, -90, 0, 90 degrees
        assert!((rays[2][0] - 1.0).abs() < 1e-12 && rays[2][1].abs() < 1e-12);
        assert!((rays[3][1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_fan_ends_on_its_last_azimuth_and_rows_rise() {
        let (rays, (_, step)) = directions(&lidar(3, 3, [-30.0, 30.0], [-45.0, 45.0]));
        assert_eq!(rays.len(), 9);
        assert!((step - 45f64.to_radians()).abs() < 1e-12);
        assert!(
            (rays[0][2] + 0.5).abs() < 1e-12,
            "the first row looks 30 degrees down"
        );
        assert!(rays[4][2].abs() < 1e-12 && (rays[4][0] - 1.0).abs() < 1e-12);
        assert!((rays[8][2] - 0.5).abs() < 1e-12);
        for ray in &rays {
            let norm = (ray[0] * ray[0] + ray[1] * ray[1] + ray[2] * ray[2]).sqrt();
            assert!((norm - 1.0).abs() < 1e-12);
        }
    }
}
