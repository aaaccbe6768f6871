//! Which lidars cast, and their rays: each robot's `lidars:` list, planned once at load (a
//! lidar on a body the robot does not have is refused there, by every build). The index in
//! the plan is the lidar's index at the caster.
use super::lidar::LidarSpec;
use crate::config::{Config, LidarConfig};
use crate::model::{RobotMap, pose};
use mujoco_rs::prelude::*;
use nalgebra::UnitQuaternion;

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
pub fn directions(lidar: &LidarConfig) -> (Vec<[f64; 3]>, (f64, f64)) {
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

pub fn plan_lidars(
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
            rate: 10.0,
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
