//! The benchmarks' reference: MuJoCo stepping alone.
use mujoco_bridge::model::World;
use mujoco_rs::prelude::*;
use std::time::Instant;

/// Seconds for `steps` raw mj_step calls from the model's initial state, on a fresh thread
/// like the physics thread's.
pub fn raw_loop(world: &World, steps: u64) -> f64 {
    let model = world.model.clone();
    std::thread::spawn(move || {
        let mut data = MjData::new(model);
        data.forward();
        let start = Instant::now();
        for _ in 0..steps {
            data.step();
        }
        start.elapsed().as_secs_f64()
    })
    .join()
    .unwrap()
}
