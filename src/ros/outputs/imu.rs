//! sensor_msgs/Imu from a framequat (orientation), a gyro (angular velocity) and an
//! accelerometer (linear acceleration), any of which may be missing; framed at their site.
use super::sensors::{self, Sensor};
use super::{Output, Plan, PlanError, Schedule, Tick, Topic};
use crate::ros::Qos;
use crate::ros::convert::{frame_name, quaternion_wxyz, vector};
use crate::ros::interfaces::sensor_msgs::msg::Imu as ImuMsg;
use mujoco_rs::prelude::MjtSensor;

pub struct Imu {
    topic: Topic,
    orientation: Option<Sensor>,
    angular_velocity: Option<Sensor>,
    linear_acceleration: Option<Sensor>,
    message: ImuMsg,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let listed = &plan.config.robots[robot].ros.imu;
        let imus = if listed.is_empty() {
            sensors::automatic_imus(plan.model, &plan.robots[robot])
        } else {
            listed.clone()
        };
        for (k, imu) in imus.iter().enumerate() {
            let field = format!("robots[{robot}].ros.imu[{k}]");
            let find = |key, name, kind, what| {
                sensors::find_optional(plan, robot, &field, key, name, kind, what)
            };
            let orientation = find(
                "orientation",
                &imu.orientation,
                MjtSensor::mjSENS_FRAMEQUAT,
                "framequat",
            )?;
            let angular_velocity = find(
                "angular_velocity",
                &imu.angular_velocity,
                MjtSensor::mjSENS_GYRO,
                "gyro",
            )?;
            let linear_acceleration = find(
                "linear_acceleration",
                &imu.linear_acceleration,
                MjtSensor::mjSENS_ACCELEROMETER,
                "accelerometer",
            )?;
            let given = [orientation, angular_velocity, linear_acceleration];
            let site = given
                .iter()
                .flatten()
                .find_map(|s| sensors::site(plan.model, s.id));
            if given.iter().all(Option::is_none) {
                return Err(PlanError::NothingNamed {
                    field,
                    wanted: "at least one of orientation, angular_velocity, linear_acceleration",
                });
            }
            let frame_id = match (&imu.frame_id, site) {
                (Some(frame), _) => frame.clone(),
                (None, Some(site)) => sensors::site_frame(plan, robot, site, false),
                (None, None) => {
                    let map = &plan.robots[robot];
                    frame_name("world", map, map.root_body.unwrap_or(0), plan.prefixed())
                }
            };
            let mut message = ImuMsg::default();
            message.header.frame_id = frame_id;
            message.orientation.w = 1.0;
            // sensor_msgs/Imu: -1 in a covariance's first element marks a quantity not given.
            for (sensor, covariance) in given.iter().zip([
                &mut message.orientation_covariance,
                &mut message.angular_velocity_covariance,
                &mut message.linear_acceleration_covariance,
            ]) {
                *covariance = [0.0; 9];
                if sensor.is_none() {
                    covariance[0] = -1.0;
                }
            }
            let topic = Topic {
                name: plan.robot_topic(robot, &imu.topic),
                schedule: Schedule::Rate(imu.rate.unwrap_or(plan.config.ros.rates.imu)),
                qos: Qos::STATE,
            };
            plan.add(Imu {
                topic,
                orientation,
                angular_velocity,
                linear_acceleration,
                message,
            });
        }
    }
    Ok(())
}

impl Output for Imu {
    type Message = ImuMsg;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&ImuMsg> {
        let data = &tick.state.sensordata;
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        if let Some(s) = self.orientation {
            m.orientation = quaternion_wxyz(&data[s.adr..s.adr + 4]);
        }
        if let Some(s) = self.angular_velocity {
            m.angular_velocity = vector(&data[s.adr..s.adr + 3]);
        }
        if let Some(s) = self.linear_acceleration {
            m.linear_acceleration = vector(&data[s.adr..s.adr + 3]);
        }
        Some(m)
    }
}
