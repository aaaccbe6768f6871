//! Cameras that the config mounts on a robot's body (`robots[i].cameras[k].mount`), added to
//! the robot's spec before it joins the world.
use super::pose::wxyz;
use crate::config::{CameraConfig, CameraMount};
use crate::error::{InputError, InputResult};
use mujoco_rs::prelude::*;
use nalgebra::{Matrix3, Rotation3, UnitQuaternion};

/// A MuJoCo camera's orientation in the frame of a ROS camera link (x forward, y left, z up):
/// it looks down its own -z with +y up and +x to the right.
fn camera_in_link() -> UnitQuaternion<f64> {
    let axes = Matrix3::from_columns(&[
        nalgebra::Vector3::new(0.0, -1.0, 0.0),
        nalgebra::Vector3::new(0.0, 0.0, 1.0),
        nalgebra::Vector3::new(-1.0, 0.0, 0.0),
    ]);
    UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(axes))
}

/// The camera's quaternion (w, x, y, z) in its body's frame for a mount's roll, pitch, yaw.
pub fn mount_quaternion(mount: &CameraMount) -> [f64; 4] {
    let [roll, pitch, yaw] = mount.rpy;
    wxyz(&(UnitQuaternion::from_euler_angles(roll, pitch, yaw) * camera_in_link()))
}

/// Adds robot `index`'s mounted cameras to its spec (names without the robot prefix, which
/// attaching adds).
pub fn mount(
    cameras: &[CameraConfig],
    spec: &mut MjSpec,
    origin: &str,
    index: usize,
) -> InputResult<()> {
    for (k, camera) in cameras.iter().enumerate() {
        let Some(mount) = &camera.mount else {
            continue;
        };
        let field = format!("robots[{index}].cameras[{k}]");
        if spec.camera(&camera.camera).is_some() {
            return Err(InputError::new(
                origin,
                format!(
                    "the model already has a camera '{}': leave out `mount` to use it",
                    camera.camera
                ),
            )
            .at(format!("{field}.camera")));
        }
        let body = spec.body_mut(&mount.body).ok_or_else(|| {
            InputError::new(origin, format!("the model has no body '{}'", mount.body))
                .at(format!("{field}.mount.body"))
        })?;
        let added = body
            .add_camera()
            .with_pos(mount.xyz)
            .with_quat(mount_quaternion(mount));
        added.set_fovy(mount.fovy);
        added.set_name(&camera.camera).map_err(|e| {
            InputError::new(origin, format!("cannot name the camera: {e}"))
                .at(format!("{field}.camera"))
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pose::quaternion;
    use nalgebra::Vector3;

    fn mount(rpy: [f64; 3]) -> CameraMount {
        CameraMount {
            body: "b".into(),
            xyz: [0.0; 3],
            rpy,
            fovy: 60.0,
        }
    }

    #[test]
    fn an_unturned_mount_looks_along_the_body_x_with_z_up() {
        let q = quaternion(&mount_quaternion(&mount([0.0; 3])));
        // MuJoCo cameras look down their -z, with +y up.
        assert!((q * -Vector3::z() - Vector3::x()).norm() < 1e-12);
        assert!((q * Vector3::y() - Vector3::z()).norm() < 1e-12);
    }

    #[test]
    fn a_yawed_mount_looks_to_the_side() {
        let q = quaternion(&mount_quaternion(&mount([
            0.0,
            0.0,
            std::f64::consts::FRAC_PI_2,
        ])));
        assert!((q * -Vector3::z() - Vector3::y()).norm() < 1e-12);
        let pitched = quaternion(&mount_quaternion(&mount([
            0.0,
            std::f64::consts::FRAC_PI_2,
            0.0,
        ])));
        // Pitching down by 90 degrees (positive pitch turns x towards -z) looks at the floor.
        assert!((pitched * -Vector3::z() + Vector3::z()).norm() < 1e-12);
    }
}
