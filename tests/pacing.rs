//! Realtime pacing through the handle, in a test binary of its own so that no other test
//! competes for the two cores while it measures.
mod common;

use common::*;
use mujoco_bridge::config::SimConfig;
use mujoco_bridge::sim::{SimHandle, Simulation};
use std::time::{Duration, Instant};

#[test]
fn realtime_pacing_and_speed_factor() {
    let world = world_from_config_file("default.yaml");
    let sim = Simulation::start(&world, &SimConfig::default()).unwrap();
    let handle = sim.handle();
    let measure = |handle: &SimHandle| {
        let t0 = (Instant::now(), handle.stats().sim_time);
        std::thread::sleep(Duration::from_millis(800));
        (handle.stats().sim_time - t0.1) / t0.0.elapsed().as_secs_f64()
    };
    let rtf = measure(&handle);
    assert!((0.8..1.2).contains(&rtf), "realtime: {rtf}");
    handle.set_speed(2.0).unwrap();
    let rtf = measure(&handle);
    assert!((1.6..2.4).contains(&rtf), "speed 2: {rtf}");
    assert!(handle.set_speed(f64::NAN).is_err(), "NaN speed rejected");
    assert!(handle.set_speed(-1.0).is_err());
    assert_eq!(handle.speed(), 2.0);
}
