//! diagnostic_msgs/DiagnosticArray on `/diagnostics`: the physics figures (real-time factor,
//! step time, overruns, refused / ignored / dropped commands, MuJoCo's instability resets)
//! and the node's own publications and publish failures.
use super::{Output, Plan, PlanError, Tick, Topic};
use crate::Qos;
use crate::messages::diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus, KeyValue};
use std::sync::atomic::Ordering;

pub struct Diagnostics {
    topic: Topic,
    message: DiagnosticArray,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    plan.add(Diagnostics {
        topic: Topic {
            name: "/diagnostics".into(),
            schedule: plan.rate("diagnostics", None).on_wall_clock(),
            qos: Qos::STATE,
        },
        message: DiagnosticArray::default(),
    });
    Ok(())
}

impl Output for Diagnostics {
    type Message = DiagnosticArray;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, tick: &Tick) -> Option<&DiagnosticArray> {
        let stats = tick.stats;
        let value = |key: &str, value: String| KeyValue {
            key: key.into(),
            value,
        };
        let publishing = tick.publishing;
        let values = vec![
            value("real_time_factor", format!("{:.4}", stats.real_time_factor)),
            value("sim_time", format!("{:.6}", stats.sim_time)),
            value("steps", stats.steps.to_string()),
            value("mean_step_us", format!("{:.1}", stats.mean_step_time * 1e6)),
            value("max_step_us", format!("{:.1}", stats.max_step_time * 1e6)),
            value("overruns", stats.overruns.to_string()),
            value("lag_resets", stats.lag_resets.to_string()),
            value("time_let_go_s", format!("{:.3}", stats.time_let_go)),
            value("rejected_commands", stats.rejected_commands.to_string()),
            value("ignored_commands", stats.ignored_commands.to_string()),
            value("dropped_commands", stats.dropped_commands.to_string()),
            value("refused_operations", stats.refused_operations.to_string()),
            value("instabilities", stats.instabilities.to_string()),
            value(
                "ros_published",
                publishing.published.load(Ordering::Relaxed).to_string(),
            ),
            value(
                "ros_publish_failures",
                publishing.failed.load(Ordering::Relaxed).to_string(),
            ),
            value(
                "samples_lost",
                publishing.samples_lost.load(Ordering::Relaxed).to_string(),
            ),
        ];
        let mut values = values;
        // What a leak would pile up, so that one shows in the field.
        for kind in crate::census::Kind::ALL {
            values.push(value(kind.name(), crate::census::live(kind).to_string()));
        }
        if let Some(bytes) = crate::census::resident_bytes() {
            values.push(value(
                "resident_memory_mb",
                format!("{:.1}", bytes as f64 / (1 << 20) as f64),
            ));
        }
        if let Some(cameras) = tick.cameras {
            let (rendered, skipped) = cameras.counts();
            values.push(value("camera_frames_rendered", rendered.to_string()));
            values.push(value("camera_requests_skipped", skipped.to_string()));
        }
        let warn = stats.instabilities > 0;
        self.message.header.stamp = tick.stamp.clone();
        self.message.status = vec![DiagnosticStatus {
            level: if warn {
                DiagnosticStatus::WARN
            } else {
                DiagnosticStatus::OK
            },
            name: "mujoco_bridge: physics".into(),
            message: if warn {
                "a step diverged (sim.on_divergence answered it; the log says where)".into()
            } else {
                "running".into()
            },
            hardware_id: "mujoco".into(),
            values,
        }];
        Some(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, fill};
    use crate::convert::time;
    use std::time::Instant;

    #[test]
    fn counts_the_node_publications() {
        let mut f = Fixture::new("");
        let state = f.state(0);
        f.counters.count(true);
        f.counters.count(true);
        f.counters.count(false);
        let mut plan = f.plan().unwrap();
        let stamp = time(state.time);
        let m = fill(
            &mut plan,
            "/diagnostics",
            &f.tick(&state, &stamp, Instant::now()),
        )
        .unwrap();
        let values = m["status"][0]["values"].as_array().unwrap();
        let value = |key: &str| {
            values.iter().find(|v| v["key"] == key).unwrap()["value"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert_eq!(value("ros_published"), "2");
        assert_eq!(value("ros_publish_failures"), "1");
        assert_eq!(value("real_time_factor"), "1.0000");
        // The live counts are there (their values depend on what other tests hold).
        assert!(value("live_worlds").parse::<usize>().is_ok());
        assert!(value("live_gl_contexts").parse::<usize>().is_ok());
        assert!(value("resident_memory_mb").parse::<f64>().unwrap() > 0.0);
        assert_eq!(
            m["status"][0]["level"], 0,
            "OK while MuJoCo found no instability"
        );
    }
}
