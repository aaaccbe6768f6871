//! The rpaths this crate's tests load MuJoCo (and the ROS 2 libraries) through (see
//! `mujoco_bridge_build`).
fn main() {
    mujoco_bridge_build::link();
}
