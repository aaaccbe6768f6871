//! sensor_msgs/LaserScan from a planar fan of rangefinders (one origin on one body, rays in
//! its xy plane at even angles), framed at the fan's origin.
use super::sensors;
use super::{Output, Plan, PlanError, Schedule, Tick, Topic};
use crate::config::full_match_regex;
use crate::ros::Qos;
use crate::ros::interfaces::sensor_msgs::msg::LaserScan;
use mujoco_rs::prelude::MjtSensor;

pub struct Scan {
    topic: Topic,
    /// `sensordata` addresses of the rays, by increasing angle.
    rays: Vec<usize>,
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
                schedule: Schedule::Rate(rate),
                qos: Qos::STATE,
            };
            plan.add(Scan {
                topic,
                rays,
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

    fn fill(&mut self, tick: &Tick) -> Option<&LaserScan> {
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        for (out, adr) in m.ranges.iter_mut().zip(&self.rays) {
            *out = sensors::ray(tick.state.sensordata[*adr], m.range_max);
        }
        Some(m)
    }
}
