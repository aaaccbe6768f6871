//! What Foxglove clients do that reaches the simulation: a subscription to a latched topic
//! (answered with its message on the streams thread) and messages they publish on a robot's
//! `cmd_vel`, `joint_commands` or `joint_trajectory`, which go through the same command path
//! as ROS clients' (`topics::inputs`): counted, and NaN, unknown names or out-of-bounds values
//! refused by the simulation handle.
use super::StreamCounters;
use super::sink::Joined;
use crate::messages::cdr;
use crate::messages::geometry_msgs::msg::TwistStamped;
use crate::messages::sensor_msgs::msg::JointState;
use crate::messages::trajectory_msgs::msg::JointTrajectory;
use crate::sim::{SimHandle, WorldGeneration};
use crate::topics::inputs;
use crate::topics::names::Names;
use crate::topics::{robot_prefixed, robot_topic};
use foxglove::websocket::{ChannelView, Client, ClientChannel, ServerListener};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The command topics of each robot a client may publish on.
const COMMANDS: [&str; 3] = ["cmd_vel", "joint_commands", "joint_trajectory"];

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

    /// The robot and command topic (`cmd_vel`, `joint_commands`, `joint_trajectory`) that
    /// the resolved topic `topic` is.
    fn command_topic(&self, world: &WorldGeneration, topic: &str) -> Option<(usize, &'static str)> {
        (0..world.robots.len()).find_map(|robot| {
            let prefixed = robot_prefixed(&world.config, &world.robots, robot);
            COMMANDS.into_iter().find_map(|command| {
                let name = robot_topic(&world.config, &world.robots[robot].name, prefixed, command);
                (self.names.resolve(&name) == topic).then_some((robot, command))
            })
        })
    }

    fn command(&self, channel: &ClientChannel, payload: &[u8]) -> Result<(), String> {
        if channel.encoding != "cdr" {
            return Err(format!("encoding '{}' (cdr only)", channel.encoding));
        }
        let world = self.handle.world();
        let topic = self.names.resolve(&channel.topic);
        let (robot, command) = self
            .command_topic(&world, &topic)
            .ok_or_else(|| format!("no robot takes commands on {topic}"))?;
        let schema = channel.schema_name.replace("/msg/", "/");
        let decode_error = |e: cdr::CdrError| format!("{topic}: {e}");
        let sent = match (command, schema.as_str()) {
            ("cmd_vel", "geometry_msgs/Twist") => inputs::twist(
                &self.handle,
                robot,
                &cdr::decode(payload).map_err(decode_error)?,
            ),
            ("cmd_vel", "geometry_msgs/TwistStamped") => {
                let stamped: TwistStamped = cdr::decode(payload).map_err(decode_error)?;
                inputs::twist(&self.handle, robot, &stamped.twist)
            }
            ("joint_commands", "sensor_msgs/JointState") => {
                let plan = inputs::JointCommandPlan::of(&world, robot);
                let message: JointState = cdr::decode(payload).map_err(decode_error)?;
                inputs::joint_commands(&self.handle, robot, &plan, &message)
            }
            ("joint_trajectory", "trajectory_msgs/JointTrajectory") => {
                let message: JointTrajectory = cdr::decode(payload).map_err(decode_error)?;
                inputs::follow(&self.handle, robot, &message, &topic, false)
            }
            (_, other) => {
                return Err(format!(
                    "{topic} takes {}, not '{other}'",
                    match command {
                        "cmd_vel" => "geometry_msgs/msg/Twist or TwistStamped",
                        "joint_commands" => "sensor_msgs/msg/JointState",
                        _ => "trajectory_msgs/msg/JointTrajectory",
                    }
                ));
            }
        };
        sent.map_err(|e| e.to_string())
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
