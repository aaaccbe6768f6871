//! geometry_msgs/WrenchStamped from a force and a torque sensor (either may be missing),
//! framed at their site.
use super::sensors::{self, Sensor};
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::Qos;
use crate::config::MeasureDirection;
use super::imu::read3;
use super::noise::{self, SensorNoise};
use crate::convert::vector;
use crate::messages::geometry_msgs::msg::WrenchStamped;
use mujoco_rs::prelude::MjtSensor;

pub struct Wrench {
    topic: Topic,
    force: Option<Sensor>,
    torque: Option<Sensor>,
    force_noise: Option<SensorNoise>,
    torque_noise: Option<SensorNoise>,
    timing: Timing,
    /// 1 for MuJoCo's wrench (the parent's on the child), -1 for the child's on the parent.
    sign: f64,
    message: WrenchStamped,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let listed = &plan.config.robots[robot].ros.force_torque;
        let wrenches = sensors::listed_or_automatic(listed, |t| t.controller.is_some(), || {
            sensors::automatic_wrenches(plan.model, &plan.robots[robot])
        });
        for (k, ft) in wrenches.iter().enumerate() {
            let field = format!("robots[{robot}].ros.force_torque[{k}]");
            let force = sensors::find_optional(
                plan,
                robot,
                &field,
                "force",
                &ft.force,
                MjtSensor::mjSENS_FORCE,
                "force",
            )?;
            let torque = sensors::find_optional(
                plan,
                robot,
                &field,
                "torque",
                &ft.torque,
                MjtSensor::mjSENS_TORQUE,
                "torque",
            )?;
            if force.is_none() && torque.is_none() {
                return Err(PlanError::NothingNamed {
                    field,
                    wanted: "a force sensor, a torque sensor or both",
                });
            }
            let site = [force, torque]
                .iter()
                .flatten()
                .find_map(|s| sensors::site(plan.model, s.id));
            let mut message = WrenchStamped::default();
            message.header.frame_id = match (&ft.frame_id, site) {
                (Some(frame), _) => frame.clone(),
                (None, Some(site)) => sensors::site_frame(plan, robot, site, false),
                (None, None) => String::new(),
            };
            let topic = Topic {
                name: plan.robot_topic(robot, &ft.topic),
                schedule: plan.rate(
                    "force_torque",
                    ft.rate.or(sensors::interval_rate(plan, &[force, torque])),
                ),
                qos: Qos::STATE,
            };
            plan.add_for(
                Wrench {
                topic,
                force,
                torque,
                force_noise: force.and_then(|s| noise::of_sensor(plan, robot, s, 3)),
                torque_noise: torque.and_then(|s| noise::of_sensor(plan, robot, s, 3)),
                timing: sensors::timing(plan, robot, &[force, torque]),
                sign: match ft.measure_direction {
                    MeasureDirection::ParentToChild => 1.0,
                    MeasureDirection::ChildToParent => -1.0,
                },
                message,
            },
                ft.controller.as_deref(),
            );
        }
    }
    Ok(())
}

impl Output for Wrench {
    type Message = WrenchStamped;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&WrenchStamped> {
        let data = &tick.state.sensordata;
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        let time = tick.state.time;
        if let Some(s) = self.force {
            let force = read3(data, s.adr, &mut self.force_noise, time);
            m.wrench.force = vector(&force.map(|f| self.sign * f));
        }
        if let Some(s) = self.torque {
            let torque = read3(data, s.adr, &mut self.torque_noise, time);
            m.wrench.torque = vector(&torque.map(|t| self.sign * t));
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, number};

    #[test]
    fn fills_force_and_torque_in_the_site_frame() {
        let mut f = Fixture::new("");
        let (m, state) = f.message(5, "force_torque");
        assert_eq!(m["header"]["frame_id"], "ft_site");
        let model = &f.world.model;
        let robot = &f.world.robots[0];
        let force = model.sensor_adr()[robot.sensor("ft_force").unwrap().id] as usize;
        let torque = model.sensor_adr()[robot.sensor("ft_torque").unwrap().id] as usize;
        let (w, data) = (&m["wrench"], &state.sensordata);
        assert_eq!(number(&w["force"]["z"]), data[force + 2]);
        assert_eq!(number(&w["torque"]["y"]), data[torque + 1]);
        assert!(
            data[torque + 1].abs() > 0.0,
            "the arm's weight twists the hinge site"
        );
    }
}
