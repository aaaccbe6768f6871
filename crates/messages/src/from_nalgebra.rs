//! Poses, rotations and vectors as nalgebra holds them, as their ROS messages. ROS orders a
//! quaternion x, y, z, w.
use crate::geometry_msgs::msg::{Point, Pose, Quaternion, Transform, Vector3};
use nalgebra::{Isometry3, UnitQuaternion};

impl From<&UnitQuaternion<f64>> for Quaternion {
    fn from(q: &UnitQuaternion<f64>) -> Self {
        Quaternion {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        }
    }
}

impl From<&nalgebra::Vector3<f64>> for Vector3 {
    fn from(v: &nalgebra::Vector3<f64>) -> Self {
        Vector3 {
            x: v.x,
            y: v.y,
            z: v.z,
        }
    }
}

impl From<&Isometry3<f64>> for Transform {
    fn from(at: &Isometry3<f64>) -> Self {
        Transform {
            translation: (&at.translation.vector).into(),
            rotation: (&at.rotation).into(),
        }
    }
}

impl From<&Isometry3<f64>> for Pose {
    fn from(at: &Isometry3<f64>) -> Self {
        let t = at.translation.vector;
        Pose {
            position: Point {
                x: t.x,
                y: t.y,
                z: t.z,
            },
            orientation: (&at.rotation).into(),
        }
    }
}
