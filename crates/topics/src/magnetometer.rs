//! sensor_msgs/MagneticField from each magnetometer of the model, found on its site as the
//! IMUs are, framed at that site, at the IMU's rate (`ros.rates.imu`). MuJoCo gives tesla
//! in the site's frame, as the message wants.
use super::imu::{covariances, read3};
use super::noise::{self, SensorNoise};
use super::sensors::{self, Sensor};
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::Qos;
use crate::convert::vector;
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
        let found = sensors::automatic_magnetometers(plan.model, &plan.robots[robot]);
        for (topic, name) in found {
            let field = format!("robots[{robot}] magnetometer {name}");
            let sensor = sensors::find(
                plan,
                robot,
                field,
                &name,
                MjtSensor::mjSENS_MAGNETOMETER,
                "magnetometer",
            )?;
            let mut message = MagneticField::default();
            if let Some(site) = sensors::site(plan.model, sensor.id) {
                message.header.frame_id = sensors::site_frame(plan, robot, site, false);
            }
            let noise = noise::of_sensor(plan, robot, sensor, 3);
            covariances(&mut message.magnetic_field_covariance, &noise);
            let topic = Topic {
                name: plan.robot_topic(robot, &topic),
                schedule: plan.rate("imu", sensors::interval_rate(plan, &[Some(sensor)])),
                qos: Qos::STATE,
            };
            plan.add(Magnetometer {
                topic,
                sensor,
                noise,
                timing: sensors::timing(plan, robot, &[Some(sensor)]),
                message,
            });
        }
    }
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
