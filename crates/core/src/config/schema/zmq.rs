//! `zmq:` and each robot's `zmq:`: the legacy URLab protocol's endpoints and options.
use super::Config;
use super::world::one_u32;
use super::yes;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZmqConfig {
    /// Serve the legacy protocol.
    #[serde(default)]
    pub enabled: bool,
    /// PUB socket of the state rows (URLab: port 5555).
    #[serde(default = "default_state_endpoint")]
    pub state: String,
    /// SUB socket of `control` and `set_gains` (URLab: port 5556).
    #[serde(default = "default_control_endpoint")]
    pub control: String,
    /// PUB socket of the discovery JSON (URLab: port 5557).
    #[serde(default = "default_info_endpoint")]
    pub info: String,
    /// Publish every Nth physics step (1: every step, the legacy behaviour).
    #[serde(default = "one_u32")]
    pub divider: u32,
    /// Keep publishing rows at the step rate while paused, as URLab does.
    #[serde(default = "yes")]
    pub publish_while_paused: bool,
    /// Endpoints may bind every interface (`tcp://*:5555`); off by default.
    #[serde(default)]
    pub allow_all_interfaces: bool,
    /// First port of the camera streams, one per camera on the state endpoint's host (the
    /// next free port each, nine further at most); 0: the state port + 3 (URLab: 5558).
    #[serde(default)]
    pub camera_port: u16,
}

impl Default for ZmqConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            state: default_state_endpoint(),
            control: default_control_endpoint(),
            info: default_info_endpoint(),
            divider: 1,
            publish_while_paused: true,
            allow_all_interfaces: false,
            camera_port: 0,
        }
    }
}

fn default_state_endpoint() -> String {
    "tcp://127.0.0.1:5555".into()
}
fn default_control_endpoint() -> String {
    "tcp://127.0.0.1:5556".into()
}
fn default_info_endpoint() -> String {
    "tcp://127.0.0.1:5557".into()
}

#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RobotZmqConfig {
    pub state: Option<String>,
    pub control: Option<String>,
    pub info: Option<String>,
    /// Action-key bitmask sent on `{robot}/actions` (0: none held); changeable at run time.
    #[serde(default)]
    pub actions: i32,
}

/// The three endpoints one legacy server binds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ZmqEndpoints {
    pub state: String,
    pub control: String,
    pub info: String,
}

impl Config {
    /// The endpoints serving robot `index`: its own, else the top-level ones.
    pub fn zmq_endpoints(&self, index: usize) -> ZmqEndpoints {
        let own = &self.robots[index].zmq;
        ZmqEndpoints {
            state: own.state.clone().unwrap_or_else(|| self.zmq.state.clone()),
            control: own
                .control
                .clone()
                .unwrap_or_else(|| self.zmq.control.clone()),
            info: own.info.clone().unwrap_or_else(|| self.zmq.info.clone()),
        }
    }
}
