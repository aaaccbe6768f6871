//! sensor_msgs/MagneticField from each magnetometer the robot lists (`ros.magnetometers`),
//! then from each other one of the model, found on its site as the IMUs are; framed at that
//! site unless told, at the IMU's rate (`ros.rates.imu`) unless told. MuJoCo gives tesla in
//! the site's frame, as the message wants.
use super::imu::{covariances, read3};
use super::noise::{self, SensorNoise};
use super::sensors::{self, Sensor};
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::Qos;
use crate::config::MagnetometerTopic;
use crate::convert::{given_frame, vector};
use crate::messages::sensor_msgs::msg::MagneticField;
use mujoco_rs::prelude::MjtSensor;

pub struct Magnetometer {
    topic: Topic,
    sensor: Sensor,
    noise: Option<SensorNoise>,
    timing: Timing,
    message: MagneticField,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let mut topics = plan.config.robots[robot].ros.magnetometers.clone();
        let found = sensors::automatic_magnetometers(plan.model, &plan.robots[robot]);
        for (topic, sensor) in found {
            if !topics.iter().any(|t| t.sensor == sensor) {
                topics.push(MagnetometerTopic {
                    topic,
                    sensor,
                    ..MagnetometerTopic::default()
                });
            }
        }
        for listed in &topics {
            add(plan, robot, listed)?;
        }
    }
    Ok(())
}

fn add(plan: &mut Plan, robot: usize, listed: &MagnetometerTopic) -> Result<(), PlanError> {
    let field = format!("robots[{robot}] magnetometer {}", listed.sensor);
    let sensor = sensors::find(
        plan,
        robot,
        field,
        &listed.sensor,
        MjtSensor::mjSENS_MAGNETOMETER,
        "magnetometer",
    )?;
    let mut message = MagneticField::default();
    let map = &plan.robots[robot];
    message.header.frame_id = match (&listed.frame_id, sensors::site(plan.model, sensor.id)) {
        (Some(frame), _) => given_frame(frame, map, plan.prefixed(robot)),
        (None, Some(site)) => sensors::site_frame(plan, robot, site, false),
        (None, None) => String::new(),
    };
    let noise = noise::of_sensor(plan, robot, sensor, 3);
    covariances(&mut message.magnetic_field_covariance, &noise);
    let rate = listed
        .rate
        .or(sensors::interval_rate(plan, &[Some(sensor)]));
    let topic = Topic {
        name: plan.robot_topic(robot, &listed.topic),
        schedule: plan.rate("imu", rate),
        qos: Qos::STATE,
    };
    plan.add(Magnetometer {
        topic,
        sensor,
        noise,
        timing: sensors::timing(plan, robot, &[Some(sensor)]),
        message,
    });
    Ok(())
}

impl Output for Magnetometer {
    type Message = MagneticField;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&MagneticField> {
        let data = &tick.state.sensordata;
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        let values = read3(data, self.sensor.adr, &mut self.noise, tick.state.time);
        m.magnetic_field = vector(&values);
        Some(m)
    }
}
