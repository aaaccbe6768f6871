//! Each robot's `altimeters:`: ros_gz_interfaces/Altimeter on `{name}`, as Gazebo's
//! altimeter gives it: the vertical reference is the site's world height where the world
//! starts (the model's qpos0, each robot at its initial keyframe if it has one; Gazebo takes
//! the sensor's height when it loads), the vertical position is
//! the height above it and the vertical velocity the world z velocity. Their noise is the
//! config's `{name}/vertical_position` and `{name}/vertical_velocity`, Gazebo's channels.
use super::gps::point;
use super::noise::{self, SensorNoise};
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::Qos;
use crate::messages::ros_gz_interfaces::msg::Altimeter as AltimeterMessage;
use crate::sim::start_data;

pub struct Altimeter {
    topic: Topic,
    /// The sensordata addresses of the site's world z and z velocity.
    height_adr: usize,
    climb_adr: usize,
    position_noise: Option<SensorNoise>,
    velocity_noise: Option<SensorNoise>,
    timing: Timing,
    message: AltimeterMessage,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    // The model's sensors where the world starts, computed once for every altimeter.
    let (model, robots) = (plan.model, plan.robots);
    let mut initial = None;
    for robot in 0..plan.robots.len() {
        for (k, config) in plan.config.robots[robot].altimeters.clone().iter().enumerate() {
            let point = point(plan, robot, "altimeters", k, config)?;
            let height_adr = point.position.adr + 2;
            let channel = |what: &str| {
                let key = format!("{}/vertical_{what}", config.name);
                noise::named(plan, robot, &key, 1, 0.0)
            };
            let mut message = AltimeterMessage::default();
            message.header.frame_id = point.frame_id;
            let initial = initial.get_or_insert_with(|| start_data(model, robots));
            message.vertical_reference = initial.sensordata()[height_adr];
            plan.add(Altimeter {
                topic: Topic {
                    name: plan.robot_topic(robot, &config.topic_or(config.name.clone())),
                    schedule: plan.rate("altimeter", Some(config.rate)),
                    qos: Qos::STATE,
                },
                height_adr,
                climb_adr: point.velocity.adr + 2,
                position_noise: channel("position"),
                velocity_noise: channel("velocity"),
                timing: point.timing,
                message,
            });
        }
    }
    Ok(())
}

impl Output for Altimeter {
    type Message = AltimeterMessage;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&AltimeterMessage> {
        let (data, time) = (&tick.state.sensordata, tick.state.time);
        let m = &mut self.message;
        let mut position = [data[self.height_adr] - m.vertical_reference];
        let mut velocity = [data[self.climb_adr]];
        if let Some(noise) = &mut self.position_noise {
            noise.apply(&mut position, time);
        }
        if let Some(noise) = &mut self.velocity_noise {
            noise.apply(&mut velocity, time);
        }
        m.header.stamp = tick.stamp.clone();
        (m.vertical_position, m.vertical_velocity) = (position[0], velocity[0]);
        Some(m)
    }
}
