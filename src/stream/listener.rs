//! What Foxglove clients do that reaches the simulation: a subscription to a latched topic
//! (answered with its message on the streams thread) and messages they publish. A published
//! `cmd_vel` goes through the same command path as ROS and legacy clients: counted, and a
//! NaN or an out-of-bounds speed refused by the simulation handle.
use super::StreamCounters;
use super::topics::Joined;
use crate::config::ControlSource;
use crate::ros::interfaces::cdr;
use crate::ros::interfaces::geometry_msgs::msg::{Twist, TwistStamped};
use crate::ros::names::Names;
use crate::ros::outputs::{robot_prefixed, robot_topic};
use crate::sim::SimHandle;
use foxglove::websocket::{ChannelView, Client, ClientChannel, ServerListener};
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub struct Listener {
    handle: SimHandle,
    names: Names,
    joined: Joined,
    counters: Arc<StreamCounters>,
}

impl Listener {
    pub fn new(
        handle: SimHandle,
        names: Names,
        joined: Joined,
        counters: Arc<StreamCounters>,
    ) -> Self {
        Self {
            handle,
            names,
            joined,
            counters,
        }
    }

    /// The robot whose `cmd_vel` the resolved topic `topic` is.
    fn twist_robot(&self, topic: &str) -> Option<usize> {
        let world = self.handle.world();
        (0..world.robots.len()).find(|&robot| {
            let prefixed = robot_prefixed(&world.config, &world.robots, robot);
            let name = robot_topic(
                &world.config,
                &world.robots[robot].name,
                prefixed,
                "cmd_vel",
            );
            self.names.resolve(&name) == topic
        })
    }

    fn command(&self, channel: &ClientChannel, payload: &[u8]) -> Result<(), String> {
        if channel.encoding != "cdr" {
            return Err(format!("encoding '{}' (cdr only)", channel.encoding));
        }
        let topic = self.names.resolve(&channel.topic);
        let robot = self
            .twist_robot(&topic)
            .ok_or_else(|| format!("no robot takes commands on {topic}"))?;
        let twist = match channel.schema_name.as_str() {
            "geometry_msgs/msg/Twist" | "geometry_msgs/Twist" => {
                cdr::decode::<Twist>(payload).map_err(|e| e.to_string())?
            }
            "geometry_msgs/msg/TwistStamped" | "geometry_msgs/TwistStamped" => {
                cdr::decode::<TwistStamped>(payload)
                    .map_err(|e| e.to_string())?
                    .twist
            }
            other => {
                return Err(format!(
                    "{topic} takes geometry_msgs/msg/Twist, not '{other}'"
                ));
            }
        };
        self.handle
            .command_twist(
                ControlSource::Ros,
                robot,
                twist.linear.x,
                twist.linear.y,
                twist.angular.z,
            )
            .map_err(|e| e.to_string())
    }
}

impl ServerListener for Listener {
    fn on_subscribe(&self, client: Client, channel: ChannelView) {
        if let Some(sink) = client.sink_id() {
            let mut joined = match self.joined.lock() {
                Ok(joined) => joined,
                Err(poisoned) => poisoned.into_inner(),
            };
            joined.push((channel.id(), sink));
        }
    }

    fn on_message_data(&self, _client: Client, channel: &ClientChannel, payload: &[u8]) {
        match self.command(channel, payload) {
            Ok(()) => {
                self.counters.received.fetch_add(1, Ordering::Relaxed);
            }
            Err(why) => {
                // Counted each time; logged once per hundred so a flood cannot fill the log.
                let refused = self.counters.refused.fetch_add(1, Ordering::Relaxed);
                if refused.is_multiple_of(100) {
                    log::warn!("foxglove client message on {}: {why}", channel.topic);
                }
            }
        }
    }
}
