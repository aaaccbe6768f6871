//! `foxglove:` and `record:`: the Foxglove live view and MCAP recording (see `stream`).
use serde::Deserialize;

/// Where the Foxglove WebSocket server listens unless `foxglove.address` says otherwise.
pub const FOXGLOVE_ADDRESS: &str = "127.0.0.1:8765";

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct FoxgloveConfig {
    /// Serve the Foxglove WebSocket protocol.
    #[serde(default)]
    pub enabled: bool,
    /// `IP:PORT` to listen on (port 0: any free port, logged at start).
    #[serde(default = "default_address")]
    pub address: String,
}

impl Default for FoxgloveConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            address: default_address(),
        }
    }
}

fn default_address() -> String {
    FOXGLOVE_ADDRESS.into()
}

#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RecordConfig {
    /// Record the topics to this MCAP file (relative to the config's folder).
    #[serde(default)]
    pub mcap: Option<std::path::PathBuf>,
    /// Record the full state of every physics step as well (`/mujoco_bridge/steps`).
    #[serde(default)]
    pub every_step: bool,
    /// Where a recording the ROS service `~/record` starts is written, as
    /// `mujoco_bridge-<unix milliseconds>.mcap` (relative to the config's folder; the working
    /// directory when not given).
    #[serde(default)]
    pub folder: Option<std::path::PathBuf>,
}

impl FoxgloveConfig {
    /// The address to listen on, when the server is on; the error names the field.
    pub fn socket(&self) -> Result<Option<std::net::SocketAddr>, String> {
        if !self.enabled {
            return Ok(None);
        }
        self.address.parse().map(Some).map_err(|_| {
            format!(
                "'{}' is not IP:PORT (e.g. {FOXGLOVE_ADDRESS})",
                self.address
            )
        })
    }
}
