//! `--replay FILE.mcap`: the step records of an MCAP recording (`record.every_step`) played
//! back kinematically, one record per physics step, so a recording of a deterministic run
//! replays to the same qpos and qvel, bit for bit.
use super::STEPS_TOPIC;
use crate::messages::cdr;
use crate::messages::mujoco_bridge_msgs::msg::StepState;
use crate::record::Playback;
use mujoco_rs::prelude::MjModel;

/// A recording that cannot be played on this world.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{0}")]
    Read(String),
    #[error("no step records on {STEPS_TOPIC}: record with record.every_step (--every-step)")]
    NoSteps,
    #[error("step record {index} has {what} {found} values, this world's model {wanted}")]
    Size {
        index: usize,
        what: &'static str,
        found: usize,
        wanted: usize,
    },
    #[error("step record {index}: {why}")]
    Decode { index: usize, why: String },
}

/// The step records of the MCAP file `bytes` as a playback of `model`'s qpos and qvel.
pub fn load(bytes: &[u8], model: &MjModel) -> Result<Playback, ReplayError> {
    let (nq, nv) = (model.ffi().nq as usize, model.ffi().nv as usize);
    let mut playback = Playback {
        times: Vec::new(),
        qpos_index: (0..nq).collect(),
        qpos: Vec::new(),
        qvel_index: (0..nv).collect(),
        qvel: Vec::new(),
        per_step: true,
    };
    let stream = mcap::MessageStream::new(bytes).map_err(|e| ReplayError::Read(e.to_string()))?;
    for message in stream {
        // A file cut short (its writer killed) plays up to its last whole chunk.
        let message = match message {
            Ok(message) => message,
            Err(e) if !playback.times.is_empty() => {
                log::warn!(
                    "the recording ends early ({e}): playing its first {} step records",
                    playback.times.len()
                );
                break;
            }
            Err(e) => return Err(ReplayError::Read(e.to_string())),
        };
        if message.channel.topic != STEPS_TOPIC {
            continue;
        }
        let index = playback.times.len();
        let step: StepState = cdr::decode(&message.data).map_err(|e| ReplayError::Decode {
            index,
            why: e.to_string(),
        })?;
        for (what, found, wanted) in [("qpos", step.qpos.len(), nq), ("qvel", step.qvel.len(), nv)]
        {
            if found != wanted {
                return Err(ReplayError::Size {
                    index,
                    what,
                    found,
                    wanted,
                });
            }
        }
        playback.times.push(step.time);
        playback.qpos.extend_from_slice(&step.qpos);
        playback.qvel.extend_from_slice(&step.qvel);
    }
    if playback.times.is_empty() {
        return Err(ReplayError::NoSteps);
    }
    Ok(playback)
}
