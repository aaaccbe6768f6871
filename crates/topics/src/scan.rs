//! sensor_msgs/LaserScan from a planar fan of rangefinders (one origin on one body, rays in
//! its xy plane at even angles), framed at the fan's origin.
use super::noise::{self, SensorNoise};
use super::sensors;
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::config::full_match_regex;
use crate::Qos;
use crate::messages::sensor_msgs::msg::LaserScan;
use mujoco_rs::prelude::MjtSensor;

pub struct Scan {
    topic: Topic,
    /// `sensordata` addresses of the rays, by increasing angle.
    rays: Vec<usize>,
    /// Each ray's noise (its rangefinder's), in the same order.
    noise: Vec<Option<SensorNoise>>,
    timing: Timing,
    message: LaserScan,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let listed = &plan.config.robots[robot].ros.laser_scans;
        let scans = if listed.is_empty() {
            sensors::automatic_scans(plan.model, &plan.robots[robot])
        } else {
            listed.clone()
        };
        for (k, scan) in scans.iter().enumerate() {
            let field = format!("robots[{robot}].ros.laser_scans[{k}].sensors");
            let (model, map) = (plan.model, &plan.robots[robot]);
            let mut ids = Vec::new();
            for pattern in scan.sensors.as_slice() {
                let regex = full_match_regex(pattern).map_err(|reason| PlanError::Pattern {
                    field: field.clone(),
                    reason,
                })?;
                let before = ids.len();
                ids.extend(
                    map.sensors
                        .iter()
                        .filter(|s| {
                            regex.is_match(&s.name)
                                && model.sensor_type()[s.id] == MjtSensor::mjSENS_RANGEFINDER
                        })
                        .map(|s| s.id),
                );
                if ids.len() == before {
                    return Err(PlanError::NoRangefinder {
                        field,
                        pattern: pattern.clone(),
                    });
                }
            }
            if ids.len() < 2 {
                return Err(PlanError::TooFewRays { field });
            }
            let fan = sensors::fan(model, &ids).map_err(|reason| PlanError::NotAFan {
                field: field.clone(),
                reason,
            })?;
            let range_max = ids
                .iter()
                .map(|&id| sensors::reach(model, id))
                .fold(f64::INFINITY, f64::min);
            let rays: Vec<usize> = fan
                .rays
                .iter()
                .map(|(_, id)| model.sensor_adr()[*id] as usize)
                .collect();
            let rate = scan.rate.unwrap_or(plan.config.ros.rates.scan);
            let (first, last) = (fan.rays[0].0, fan.rays[fan.rays.len() - 1].0);
            let mut message = LaserScan {
                angle_min: first as f32,
                angle_max: last as f32,
                angle_increment: ((last - first) / (rays.len() - 1) as f64) as f32,
                time_increment: 0.0,
                scan_time: if rate > 0.0 { (1.0 / rate) as f32 } else { 0.0 },
                range_min: scan.range_min as f32,
                range_max: range_max as f32,
                ranges: vec![0.0; rays.len()],
                ..Default::default()
            };
            message.header.frame_id = sensors::point_frame(plan, robot, fan.body, fan.origin);
            let topic = Topic {
                name: plan.robot_topic(robot, &scan.topic),
                schedule: plan.rate("scan", scan.rate),
                qos: Qos::STATE,
            };
            let noise = fan
                .rays
                .iter()
                .map(|&(_, id)| {
                    let sensor = sensors::Sensor { id, adr: 0 };
                    noise::of_sensor(plan, robot, sensor, 1)
                })
                .collect();
            let ray_sensors: Vec<_> = fan
                .rays
                .iter()
                .map(|&(_, id)| Some(sensors::Sensor { id, adr: 0 }))
                .collect();
            plan.add(Scan {
                topic,
                rays,
                noise,
                timing: sensors::timing(plan, robot, &ray_sensors),
                message,
            });
        }
    }
    Ok(())
}

impl Output for Scan {
    type Message = LaserScan;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&LaserScan> {
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        let time = tick.state.time;
        for ((out, adr), noise) in m.ranges.iter_mut().zip(&self.rays).zip(&mut self.noise) {
            let value = noise::range(tick.state.sensordata[*adr], noise, 0, time);
            *out = sensors::ray(value, m.range_max);
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, fill, number};
    use crate::convert::time;
    use std::f64::consts::FRAC_PI_2;
    use std::time::Instant;

    #[test]
    fn orders_the_rays_by_angle_and_frames_the_fan_origin() {
        let mut f = Fixture::new("");
        let state = f.state(0);
        let mut plan = f.plan().unwrap();
        let stamp = time(state.time);
        let m = fill(&mut plan, "scan", &f.tick(&state, &stamp, Instant::now())).unwrap();
        assert!((number(&m["angle_min"]) + FRAC_PI_2).abs() < 1e-6, "{m}");
        assert!(
            (number(&m["angle_increment"]) - FRAC_PI_2).abs() < 1e-6,
            "{m}"
        );
        let ranges = m["ranges"].as_array().unwrap();
        assert_eq!(ranges.len(), 3);
        assert!(
            ranges[0].is_null() && ranges[2].is_null(),
            "nothing to the sides"
        );
        // Ahead (angle 0): the wall's face at x = 1.9, from the fan's origin at x = 0.05.
        assert!((number(&ranges[1]) - 1.85).abs() < 1e-5, "{m}");
        assert_eq!(m["header"]["frame_id"], "lidar_scan");
        assert!(
            plan.static_frames
                .iter()
                .any(|t| t.header.frame_id == "lidar"
                    && t.child_frame_id == "lidar_scan"
                    && (t.transform.translation.x - 0.05).abs() < 1e-12)
        );
    }
}
