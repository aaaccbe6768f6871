//! sensor_msgs/Imu from a framequat (orientation), a gyro (angular velocity) and an
//! accelerometer (linear acceleration), any of which may be missing; framed at their site.
use super::noise::{self, SensorNoise};
use super::sensors::{self, Sensor};
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::Qos;
use crate::convert::{frame_name, given_frame, quaternion_wxyz, vector};
use crate::messages::sensor_msgs::msg::Imu as ImuMsg;
use mujoco_rs::prelude::MjtSensor;

pub struct Imu {
    topic: Topic,
    orientation: Option<Sensor>,
    angular_velocity: Option<Sensor>,
    linear_acceleration: Option<Sensor>,
    /// The gyro's and the accelerometer's noise (the orientation is left exact, as Gazebo
    /// leaves it).
    gyro_noise: Option<SensorNoise>,
    accelerometer_noise: Option<SensorNoise>,
    timing: Timing,
    message: ImuMsg,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let listed = &plan.config.robots[robot].ros.imu;
        let imus = sensors::listed_or_automatic(listed, |t| t.controller.is_some(), || {
            sensors::automatic_imus(plan.model, &plan.robots[robot])
        });
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
                (Some(frame), _) => given_frame(frame, &plan.robots[robot], plan.prefixed(robot)),
                (None, Some(site)) => sensors::site_frame(plan, robot, site, false),
                (None, None) => {
                    let map = &plan.robots[robot];
                    frame_name("world", map, map.root_body.unwrap_or(0), plan.prefixed(robot))
                }
            };
            let gyro_noise = angular_velocity.and_then(|s| noise::of_sensor(plan, robot, s, 3));
            let accelerometer_noise =
                linear_acceleration.and_then(|s| noise::of_sensor(plan, robot, s, 3));
            let mut message = template(frame_id, given.map(|g| g.is_some()));
            covariances(&mut message.angular_velocity_covariance, &gyro_noise);
            covariances(&mut message.linear_acceleration_covariance, &accelerometer_noise);
            let topic = Topic {
                name: plan.robot_topic(robot, &imu.topic),
                schedule: plan.rate("imu", imu.rate.or(sensors::interval_rate(plan, &given))),
                qos: Qos::STATE,
            };
            plan.add_for(
                Imu {
                topic,
                orientation,
                angular_velocity,
                linear_acceleration,
                gyro_noise,
                accelerometer_noise,
                timing: sensors::timing(plan, robot, &given),
                message,
            },
                imu.controller.as_deref(),
            );
        }
    }
    Ok(())
}

/// The message an IMU fills, in `frame_id`; `given` says which of orientation, angular
/// velocity and linear acceleration it measures.
fn template(frame_id: String, given: [bool; 3]) -> ImuMsg {
    let mut message = ImuMsg::default();
    message.header.frame_id = frame_id;
    message.orientation.w = 1.0;
    // sensor_msgs/Imu: -1 in a covariance's first element marks a quantity not given.
    for (given, covariance) in given.iter().zip([
        &mut message.orientation_covariance,
        &mut message.angular_velocity_covariance,
        &mut message.linear_acceleration_covariance,
    ]) {
        *covariance = [0.0; 9];
        if !given {
            covariance[0] = -1.0;
        }
    }
    message
}

/// A covariance's diagonal from the noise's variances (it stays 0 without noise).
pub(crate) fn covariances(covariance: &mut [f64; 9], noise: &Option<SensorNoise>) {
    if let Some(noise) = noise {
        for k in 0..3 {
            covariance[4 * k] = noise.variance(k);
        }
    }
}

/// Three values of `data` from `adr`, with their noise at sim time `time`.
pub(crate) fn read3(data: &[f64], adr: usize, noise: &mut Option<SensorNoise>, time: f64) -> [f64; 3] {
    let mut values = [data[adr], data[adr + 1], data[adr + 2]];
    if let Some(noise) = noise {
        noise.apply(&mut values, time);
    }
    values
}

impl Output for Imu {
    type Message = ImuMsg;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&ImuMsg> {
        let data = &tick.state.sensordata;
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        if let Some(s) = self.orientation {
            m.orientation = quaternion_wxyz(&data[s.adr..s.adr + 4]);
        }
        let time = tick.state.time;
        if let Some(s) = self.angular_velocity {
            m.angular_velocity = vector(&read3(data, s.adr, &mut self.gyro_noise, time));
        }
        if let Some(s) = self.linear_acceleration {
            let values = read3(data, s.adr, &mut self.accelerometer_noise, time);
            m.linear_acceleration = vector(&values);
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, fill, number};
    use crate::convert::time;
    use std::time::Instant;

    #[test]
    fn fills_orientation_in_ros_order_and_the_site_frame() {
        let mut f = Fixture::new("");
        let (m, state) = f.message(3, "imu");
        // The site is turned 45 degrees about z: MuJoCo (w, x, y, z) = (0.924, 0, 0, 0.383).
        let q = &m["orientation"];
        assert!((number(&q["z"]) - 0.3826834).abs() < 1e-4, "{q}");
        assert!((number(&q["w"]) - 0.9238795).abs() < 1e-4, "{q}");
        assert_eq!(m["header"]["frame_id"], "imu_site");
        assert_eq!(m["header"]["stamp"]["nanosec"], 6_000_000);
        let model = &f.world.model;
        let gyro = f.world.robots[0].sensor("imu_gyro").unwrap().id;
        let adr = model.sensor_adr()[gyro] as usize;
        assert_eq!(
            number(&m["angular_velocity"]["y"]),
            state.sensordata[adr + 1]
        );
        for covariance in ["orientation", "angular_velocity", "linear_acceleration"] {
            assert_eq!(number(&m[format!("{covariance}_covariance")][0]), 0.0);
        }
    }

    #[test]
    fn a_quantity_not_given_is_marked_in_its_covariance() {
        let mut f =
            Fixture::new("    ros:\n      imu: [{topic: gyro_only, angular_velocity: imu_gyro}]\n");
        let state = f.state(0);
        let mut plan = f.plan().unwrap();
        let stamp = time(state.time);
        let m = fill(
            &mut plan,
            "gyro_only",
            &f.tick(&state, &stamp, Instant::now()),
        )
        .unwrap();
        assert_eq!(number(&m["orientation_covariance"][0]), -1.0);
        assert_eq!(number(&m["angular_velocity_covariance"][0]), 0.0);
        assert_eq!(number(&m["linear_acceleration_covariance"][0]), -1.0);
        assert_eq!(
            number(&m["orientation"]["w"]),
            1.0,
            "identity when not given"
        );
    }
}
