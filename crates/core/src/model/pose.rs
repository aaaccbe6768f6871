//! MuJoCo's poses as nalgebra values and back: positions are (x, y, z), quaternions
//! (w, x, y, z) as in `xquat`, `site_quat` and a free joint's `qpos`. Every crossing of that
//! boundary goes through here.
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion};

/// A MuJoCo quaternion (w, x, y, z), normalized.
pub fn quaternion(wxyz: &[f64]) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(wxyz[0], wxyz[1], wxyz[2], wxyz[3]))
}

/// A MuJoCo position and quaternion as one pose.
pub fn isometry(xyz: &[f64], wxyz: &[f64]) -> Isometry3<f64> {
    Isometry3::from_parts(Translation3::new(xyz[0], xyz[1], xyz[2]), quaternion(wxyz))
}

/// A rotation in MuJoCo's order (w, x, y, z).
pub fn wxyz(q: &UnitQuaternion<f64>) -> [f64; 4] {
    [q.w, q.i, q.j, q.k]
}

/// The pose of body `body` in a state's `xpos` / `xquat_wxyz` arrays.
pub fn body_pose(xpos: &[f64], xquat_wxyz: &[f64], body: usize) -> Isometry3<f64> {
    isometry(
        &xpos[3 * body..3 * body + 3],
        &xquat_wxyz[4 * body..4 * body + 4],
    )
}
