//! Each robot's `barometers:`: sensor_msgs/FluidPressure on `{name}` in pascals, from the
//! height of the barometer's site above the ellipsoid (the world origin's `altitude` plus the
//! site's world z) through the standard atmosphere Gazebo's air pressure sensor uses (its
//! constants, from RotorS). Gazebo starts every world at sea level (it ignores the origin's
//! elevation); here the origin's altitude counts. A robot's `noise:` entry for the name is
//! the noise in pascals, and the message's variance is its white noise's.
use super::gps::point;
use super::noise::{self, SensorNoise};
use super::sensors::Sensor;
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::Qos;
use crate::messages::sensor_msgs::msg::FluidPressure;

/// Sea-level pressure (Pa) and temperature (K), the lapse rate (K/m), gravity (m/s²), the
/// molar mass of air (kg/kmol), the gas constant (J/(kmol K)) and the earth's radius (m).
const P0: f64 = 101_325.0;
const T0: f64 = 288.15;
const LAPSE: f64 = 0.0065;
const G: f64 = 9.80665;
const MOLAR_MASS: f64 = 28.9644;
const GAS_CONSTANT: f64 = 8314.32;
const EARTH_RADIUS: f64 = 6_356_766.0;

/// The standard atmosphere's pressure in pascals at `height` metres above sea level.
pub fn pressure(height: f64) -> f64 {
    let geopotential = EARTH_RADIUS * height / (EARTH_RADIUS + height);
    let temperature = T0 - LAPSE * geopotential;
    P0 * (temperature / T0).powf(G * MOLAR_MASS / (GAS_CONSTANT * LAPSE))
}

pub struct Barometer {
    topic: Topic,
    position: Sensor,
    altitude: f64,
    noise: Option<SensorNoise>,
    timing: Timing,
    message: FluidPressure,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    let altitude = plan.config.world.origin.altitude;
    for robot in 0..plan.robots.len() {
        for (k, config) in plan.config.robots[robot].barometers.clone().iter().enumerate() {
            let point = point(plan, robot, "barometers", k, config)?;
            let noise = noise::named(plan, robot, &config.name, 1, 0.0);
            let mut message = FluidPressure::default();
            message.header.frame_id = point.frame_id;
            message.variance = noise.as_ref().map_or(0.0, |n| n.variance(0));
            let topic = Topic {
                name: plan.robot_topic(robot, &config.topic_or(config.name.clone())),
                schedule: plan.rate("barometer", Some(config.rate)),
                qos: Qos::STATE,
            };
            plan.add(Barometer {
                topic,
                position: point.position,
                altitude,
                noise,
                timing: point.timing,
                message,
            });
        }
    }
    Ok(())
}

impl Output for Barometer {
    type Message = FluidPressure;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&FluidPressure> {
        let z = tick.state.sensordata[self.position.adr + 2];
        let mut value = [pressure(self.altitude + z)];
        if let Some(noise) = &mut self.noise {
            noise.apply(&mut value, tick.state.time);
        }
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        m.fluid_pressure = value[0];
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_standard_atmosphere_at_known_heights() {
        // Gazebo's own figures for these constants (and the 1976 standard atmosphere's, to a
        // few pascals).
        for (height, pascals) in [(0.0, 101_325.0), (100.0, 100_129.46), (1000.0, 89_876.29)] {
            let p = super::pressure(height);
            assert!((p - pascals).abs() < 0.05, "{height} m: {p} Pa");
        }
    }
}
