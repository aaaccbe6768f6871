//! The bridge's own message: one physics step's full state, as MCAP recordings keep it
//! (`record.every_step`). No ROS topic carries it; docs/recording.md documents it field by
//! field.
pub mod msg {
    use super::super::builtin_interfaces::msg::Time;
    super::super::structs! { "mujoco_bridge", "msg";
        StepState {
            stamp: Time,
            step: u64,
            time: f64,
            qpos: Vec<f64>,
            qvel: Vec<f64>,
            act: Vec<f64>,
            ctrl: Vec<f64>,
            sensordata: Vec<f64>,
        }
    }
}
