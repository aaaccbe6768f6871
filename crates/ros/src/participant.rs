//! A DDS participant of the bridge's own on RustDDS (pure Rust, UDP only): the DDS
//! backend's node runs on one, and in every build `/clock` goes out on another (see
//! `clock`). Which domain and which interfaces come from the config's `ros.dds`, else from
//! the environment as rcl reads it.
use super::Error;
use crate::config::{DdsConfig, MAX_DOMAIN_ID};
use ros2_client::dds::rustdds::{DomainParticipant, DomainParticipantBuilder};
use std::net::Ipv4Addr;

/// The domain: the config's, else `ROS_DOMAIN_ID`, else 0.
pub fn domain_id(options: &DdsConfig) -> Result<u16, Error> {
    if let Some(domain) = options.domain_id {
        return Ok(domain);
    }
    match std::env::var("ROS_DOMAIN_ID") {
        Ok(value) if !value.trim().is_empty() => value
            .trim()
            .parse::<u16>()
            .ok()
            .filter(|d| *d <= MAX_DOMAIN_ID)
            .ok_or_else(|| {
                Error::from(format!(
                    "ROS_DOMAIN_ID={value}: expected 0..={MAX_DOMAIN_ID}"
                ))
            }),
        _ => Ok(0),
    }
}

/// The interfaces DDS may use: the config's, else loopback when the environment keeps ROS
/// on this host, else all (None).
pub fn interfaces(options: &DdsConfig) -> Option<Vec<Ipv4Addr>> {
    if let Some(list) = &options.interfaces {
        // Validated with the config.
        return Some(list.iter().filter_map(|a| a.parse().ok()).collect());
    }
    let range = std::env::var("ROS_AUTOMATIC_DISCOVERY_RANGE").unwrap_or_default();
    let localhost_only = std::env::var("ROS_LOCALHOST_ONLY").is_ok_and(|v| v == "1");
    (matches!(range.as_str(), "LOCALHOST" | "OFF") || localhost_only)
        .then(|| vec![Ipv4Addr::LOCALHOST])
}

/// A participant on `domain`, limited to `addresses` when given.
pub fn build(domain: u16, addresses: Option<Vec<Ipv4Addr>>) -> Result<DomainParticipant, Error> {
    let mut participant = DomainParticipantBuilder::new(domain);
    if let Some(addresses) = addresses {
        participant = participant.with_only_networks(addresses);
    }
    participant
        .build()
        .map_err(|e| Error::from(format!("DDS participant: {e}")))
}
