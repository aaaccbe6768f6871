//! sensor_msgs/Range from one rangefinder, framed so that x points along its ray.
use super::noise::{self, SensorNoise};
use super::sensors::{self, Sensor};
use super::{Output, Plan, PlanError, Tick, Timing, Topic};
use crate::Qos;
use crate::messages::sensor_msgs::msg::Range as RangeMsg;
use mujoco_rs::prelude::MjtSensor;

pub struct Range {
    topic: Topic,
    rangefinder: Sensor,
    noise: Option<SensorNoise>,
    timing: Timing,
    message: RangeMsg,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    for robot in 0..plan.robots.len() {
        let ros = &plan.config.robots[robot].ros;
        let listed = &ros.range;
        let ranges = sensors::listed_or_automatic(listed, |t| t.controller.is_some(), || {
            sensors::automatic_ranges(plan.model, &plan.robots[robot], &ros.laser_scans)
        });
        for (k, range) in ranges.iter().enumerate() {
            let field = format!("robots[{robot}].ros.range[{k}]");
            let rangefinder = sensors::find(
                plan,
                robot,
                format!("{field}.sensor"),
                &range.sensor,
                MjtSensor::mjSENS_RANGEFINDER,
                "rangefinder",
            )?;
            let max_range = range
                .max_range
                .unwrap_or(sensors::reach(plan.model, rangefinder.id));
            if !(range.min_range >= 0.0
                && max_range > range.min_range
                && range.field_of_view >= 0.0)
            {
                return Err(PlanError::RangeLimits { field });
            }
            let frame_id = match (&range.frame_id, sensors::site(plan.model, rangefinder.id)) {
                (Some(frame), _) => frame.clone(),
                (None, Some(site)) => sensors::site_frame(plan, robot, site, true),
                (None, None) => String::new(),
            };
            let mut message = RangeMsg {
                radiation_type: RangeMsg::INFRARED,
                field_of_view: range.field_of_view as f32,
                min_range: range.min_range as f32,
                max_range: max_range as f32,
                ..Default::default()
            };
            message.header.frame_id = frame_id;
            let topic = Topic {
                name: plan.robot_topic(robot, &range.topic),
                schedule: plan.rate(
                    "range",
                    range.rate.or(sensors::interval_rate(plan, &[Some(rangefinder)])),
                ),
                qos: Qos::STATE,
            };
            plan.add_for(
                Range {
                topic,
                rangefinder,
                noise: noise::of_sensor(plan, robot, rangefinder, 1),
                timing: sensors::timing(plan, robot, &[Some(rangefinder)]),
                message,
            },
                range.controller.as_deref(),
            );
        }
    }
    Ok(())
}

impl Output for Range {
    type Message = RangeMsg;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn timing(&self) -> Timing {
        self.timing
    }

    fn fill(&mut self, tick: &Tick) -> Option<&RangeMsg> {
        let m = &mut self.message;
        m.header.stamp = tick.stamp.clone();
        let value = tick.state.sensordata[self.rangefinder.adr];
        let value = noise::range(value, &mut self.noise, 0, tick.state.time);
        m.range = sensors::ray(value, m.max_range);
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, fill, number};
    use crate::convert::time;
    use std::time::Instant;

    #[test]
    fn measures_to_the_floor_and_reports_no_return_as_infinity() {
        let ros =
            "    ros:\n      range: [{topic: down, sensor: down}, {topic: side, sensor: ray_0}]\n";
        let mut f = Fixture::new(ros);
        let state = f.state(0);
        let mut plan = f.plan().unwrap();
        let stamp = time(state.time);
        let tick = f.tick(&state, &stamp, Instant::now());
        let down = fill(&mut plan, "down", &tick).unwrap();
        assert!((number(&down["range"]) - 0.94).abs() < 1e-6, "{down}");
        assert_eq!(number(&down["max_range"]), 5.0, "the cutoff");
        assert_eq!(down["header"]["frame_id"], "down");
        // Nothing to the side within the cutoff: +Inf (JSON has no infinity: null).
        let side = fill(&mut plan, "side", &tick).unwrap();
        assert!(side["range"].is_null(), "{side}");
        // The frame turns x onto the ray (straight down).
        let frame = plan
            .static_frames
            .iter()
            .find(|t| t.child_frame_id == "down")
            .unwrap();
        let q = crate::model::pose::quaternion(&[
            frame.transform.rotation.w,
            frame.transform.rotation.x,
            frame.transform.rotation.y,
            frame.transform.rotation.z,
        ]);
        let x = q * nalgebra::Vector3::x();
        assert!((x.z + 1.0).abs() < 1e-9, "{x}");
        assert_eq!(frame.header.frame_id, "base");
    }
}
