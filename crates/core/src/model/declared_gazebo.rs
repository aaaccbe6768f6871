//! The sensors a robot's URDF declares in `<gazebo>` blocks, added to the world's config
//! where the robot's own config does not name a sensor of the same name (the config wins).
use super::notes;
use super::urdf::GazeboSensors;
use crate::config::RobotConfig;

/// Adds `found`'s lidars (and their noise) to `robot`, noting each sensor taken and warning
/// of each left out, with the file `origin` that declares it.
pub fn apply(robot: &mut RobotConfig, found: &GazeboSensors, origin: &str) {
    for taken in &found.taken {
        notes::note(&format!("{origin}: <gazebo> {taken}"));
    }
    for left_out in &found.left_out {
        notes::warn(&format!("{origin}: <gazebo> {left_out}: left out"));
    }
    for gazebo in &found.lidars {
        let lidar = &gazebo.lidar;
        if robot.lidars.iter().any(|l| l.name == lidar.name) {
            continue;
        }
        if let Some((field, why)) = lidar.problem() {
            notes::warn(&format!(
                "{origin}: <gazebo> sensor '{}': {field} {why}: left out",
                lidar.name
            ));
            continue;
        }
        if let Some(noise) = &gazebo.noise {
            robot
                .noise
                .entry(lidar.name.clone())
                .or_insert_with(|| noise.clone());
        }
        robot.lidars.push(lidar.clone());
    }
}
