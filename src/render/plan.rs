//! Which cameras render: each robot's `cameras:` list (an empty one: none), or every camera
//! of its model when the config has no such key. Planned once at load (a camera naming
//! nothing is refused there, by every build); the index in the plan is the camera's index at
//! the renderer.
use super::CameraSpec;
use crate::config::{CameraConfig, Config};
use crate::model::RobotMap;

/// One camera of one robot.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCamera {
    pub robot: usize,
    /// Topic namespace and frame stem (`name` of the config, else the camera's name).
    pub name: String,
    /// Frames per second at most.
    pub rate: f64,
    /// Topics wanted besides the image: the depth image, the point cloud.
    pub depth_topic: bool,
    pub points_topic: bool,
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

pub fn plan(robots: &[RobotMap], config: &Config) -> Result<Vec<PlannedCamera>, NoCamera> {
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
                depth_topic: camera.depth,
                points_topic: camera.points,
                spec: CameraSpec {
                    camera: id,
                    width: camera.width as usize,
                    height: camera.height as usize,
                    quality: camera.quality,
                    // The point cloud is made from depth.
                    depth: camera.depth || camera.points,
                    near: camera.near,
                    far: camera.far,
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
        plan(&world.robots, &config).unwrap()
    }

    #[test]
    fn no_key_renders_the_models_cameras_and_an_empty_list_none() {
        let all = planned(&[]);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].name, "eye");
        assert!(planned(&["robots.0.cameras=[]".to_string()]).is_empty());
    }
}
