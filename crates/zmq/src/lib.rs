//! The legacy URLab ZMQ protocol: a pure codec (`codec`), the row plan of each articulation
//! (`rows`), and the server thread that binds the sockets (`server`). Robots that share
//! endpoints share one server.
// The layers below under the names this crate's files use.
use mujoco_bridge_core::{config, model, rate_limit, record, sim, supervise};
use mujoco_bridge_render as render;
pub mod cameras;
pub mod codec;
pub mod rows;
mod server;

pub use cameras::{CameraList, CameraStreamError, CameraStreams};
pub use server::{LegacyCounters, LegacyServer, ServerError};

use crate::config::Config;
use crate::sim::SimHandle;
use std::collections::BTreeSet;

/// Starts one server per distinct set of endpoints, when the config enables the protocol;
/// `cameras` are the scene's camera streams their discovery JSON lists.
pub fn start_servers(
    config: &Config,
    handle: &SimHandle,
    cameras: &std::sync::Arc<CameraList>,
) -> Result<Vec<LegacyServer>, ServerError> {
    if !config.zmq.enabled {
        return Ok(Vec::new());
    }
    // Robots that share endpoints share a server; it plans their rows from the world.
    let endpoints: BTreeSet<_> = (0..config.robots.len())
        .map(|index| config.zmq_endpoints(index))
        .collect();
    endpoints
        .into_iter()
        .map(|endpoints| {
            LegacyServer::start(
                handle.clone(),
                endpoints,
                &config.zmq,
                config.limits.zmq_message_bytes,
                cameras,
            )
        })
        .collect()
}
