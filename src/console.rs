//! The console (`--console`): one operation per line on standard input, one reply per line
//! on standard output (`ok ...` or `error: ...`). Tests and scripts drive the bridge with it:
//! reset, pause, step N, keyframes, snapshots (named in memory, or files), sources, twists,
//! spawn and delete, `export FILE.xml [ROBOT]` (as `--export-mjcf`), MCAP recording
//! (`mcap FILE.mcap [steps]`, `mcap stop`) and the live counters.
use crate::config::{ControlSource, SimMode};
use crate::sim::{OperationError, SimHandle};
use crate::topics::PublishCounters;
use crate::zmq::LegacyCounters;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A console line that cannot be carried out.
#[derive(Debug, thiserror::Error)]
enum ConsoleError {
    #[error("'{0}' needs an argument")]
    MissingArgument(String),
    #[error("{0}")]
    Usage(&'static str),
    #[error("source ROBOT ros|zmq|player, not '{0}'")]
    Source(String),
    #[error("unknown console command '{0}'")]
    Unknown(String),
    #[error(transparent)]
    Operation(#[from] OperationError),
    /// A spawn or delete that did not happen.
    #[error("{0}")]
    World(String),
    #[error(transparent)]
    Recording(#[from] crate::record::SwitchError),
}

/// What the console's operations reach besides the simulation.
pub struct Reach {
    pub legacy: Vec<Arc<LegacyCounters>>,
    pub publishing: Option<Arc<PublishCounters>>,
    /// The streams, which record MCAP.
    pub recorder: Arc<dyn crate::record::RecordingSwitch>,
}

/// Carries out one console line; returns the reply to print.
fn console_line(
    handle: &SimHandle,
    reach: &Reach,
    stop: &AtomicBool,
    line: &str,
) -> Result<String, ConsoleError> {
    let words = Words(line.split_whitespace().collect());
    let Some(command) = words.0.first().copied() else {
        return Ok(String::new());
    };
    match command {
        "reset" | "pause" | "realtime" | "fast" | "step" | "run" | "speed" => {
            pacing(handle, command, &words)
        }
        "keyframe" | "save" | "restore" | "savefile" | "loadfile" => {
            states(handle, command, &words)
        }
        "actions" | "source" | "twist" => robots(handle, command, &words),
        "spawn" | "delete" | "export" => world(handle, command, &words),
        "mcap" => mcap(reach, &words),
        "stats" => Ok(stats(handle, reach)),
        "arrivals" => Ok(arrivals(&reach.legacy)),
        "quit" => {
            stop.store(true, Ordering::Relaxed);
            Ok("ok".into())
        }
        other => Err(ConsoleError::Unknown(other.to_string())),
    }
}

/// A console line's words: the command, then its arguments.
struct Words<'a>(Vec<&'a str>);

impl<'a> Words<'a> {
    /// Argument `i`, which the command needs.
    fn arg(&self, i: usize) -> Result<&'a str, ConsoleError> {
        self.0
            .get(i)
            .copied()
            .ok_or_else(|| ConsoleError::MissingArgument(self.0[0].to_string()))
    }

    /// Argument `i` as a number (`usage` says what the command needs when it is not).
    fn number<T: std::str::FromStr>(
        &self,
        i: usize,
        usage: &'static str,
    ) -> Result<T, ConsoleError> {
        self.arg(i)?.parse().map_err(|_| ConsoleError::Usage(usage))
    }
}

/// An operation's answer: the step and time it was done at.
fn done(r: Result<crate::sim::OperationDone, OperationError>) -> Result<String, ConsoleError> {
    r.map(|d| format!("ok step {} time {:.6}", d.step, d.time))
        .map_err(ConsoleError::from)
}

/// Reset, pause, the mode, stepping and the speed.
fn pacing(handle: &SimHandle, command: &str, words: &Words) -> Result<String, ConsoleError> {
    match command {
        "reset" => done(handle.reset()),
        "pause" => done(handle.pause()),
        "realtime" => done(handle.set_mode(SimMode::Realtime)),
        "fast" => done(handle.set_mode(SimMode::Fast)),
        "step" => done(handle.step(words.number(1, "step N needs a number")?)),
        "run" => {
            // run N [fast]: N steps paced in realtime (or as fast as possible), then pause.
            let n: u64 = words.number(1, "run N needs a number")?;
            let mode = if words.0.get(2) == Some(&"fast") {
                SimMode::Fast
            } else {
                SimMode::Realtime
            };
            handle.pause_at_step(handle.stats().steps + n);
            done(handle.set_mode(mode))
        }
        "speed" => done(handle.set_speed(words.number(1, "speed F needs a number")?)),
        other => Err(ConsoleError::Unknown(other.to_string())),
    }
}

/// Keyframes and snapshots, in memory or in files.
fn states(handle: &SimHandle, command: &str, words: &Words) -> Result<String, ConsoleError> {
    let robot = handle.lone_robot();
    match command {
        "keyframe" => done(handle.reset_to_keyframe(robot, words.arg(1)?)),
        "save" => handle
            .save_named_snapshot(words.arg(1)?)
            .map(|s| format!("ok step {s}"))
            .map_err(ConsoleError::from),
        "restore" => done(handle.restore_named_snapshot(words.arg(1)?)),
        // A snapshot file, written atomically (the old file or the new one, never half).
        "savefile" => handle
            .save_snapshot_file(std::path::Path::new(words.arg(1)?))
            .map(|s| format!("ok step {}", s.step))
            .map_err(ConsoleError::from),
        "loadfile" => done(handle.load_snapshot_file(std::path::Path::new(words.arg(1)?))),
        other => Err(ConsoleError::Unknown(other.to_string())),
    }
}

/// A robot's action keys, control source and twist.
fn robots(handle: &SimHandle, command: &str, words: &Words) -> Result<String, ConsoleError> {
    match command {
        "actions" => {
            let r = handle
                .robot_index(words.arg(1)?)
                .map_err(ConsoleError::from)?;
            let mask = words.number(2, "actions ROBOT MASK needs a number")?;
            handle
                .set_actions(r, mask)
                .map(|_| "ok".to_string())
                .map_err(ConsoleError::from)
        }
        "source" => {
            let r = handle
                .robot_index(words.arg(1)?)
                .map_err(ConsoleError::from)?;
            let source = match words.arg(2)? {
                "ros" => ControlSource::Ros,
                "zmq" => ControlSource::Zmq,
                "player" => ControlSource::Player,
                other => return Err(ConsoleError::Source(other.to_string())),
            };
            done(handle.set_source(r, source))
        }
        "twist" => {
            let r = handle
                .robot_index(words.arg(1)?)
                .map_err(ConsoleError::from)?;
            let mut v = [0.0; 3];
            for (k, slot) in v.iter_mut().enumerate() {
                *slot = words.number(2 + k, "twist ROBOT VX VY WZ needs numbers")?;
            }
            handle
                .command_twist(ControlSource::Ros, r, v[0], v[1], v[2])
                .map(|_| "ok".to_string())
                .map_err(ConsoleError::from)
        }
        other => Err(ConsoleError::Unknown(other.to_string())),
    }
}

/// Spawning, deleting and exporting the world.
fn world(handle: &SimHandle, command: &str, words: &Words) -> Result<String, ConsoleError> {
    match command {
        "spawn" => {
            // spawn FILE NAME [x y z [yaw]]
            let mut xyzw = [0.0; 4];
            for (k, slot) in xyzw.iter_mut().enumerate() {
                if let Some(word) = words.0.get(3 + k) {
                    *slot = word.parse().map_err(|_| {
                        ConsoleError::Usage("spawn FILE NAME [x y z [yaw]] needs numbers")
                    })?;
                }
            }
            let half = xyzw[3] / 2.0;
            let request = crate::world::SpawnRequest {
                name: words.arg(2)?.to_string(),
                allow_renaming: false,
                source: crate::world::SpawnSource::Uri(words.arg(1)?.to_string()),
                namespace: String::new(),
                frame: String::new(),
                position: [xyzw[0], xyzw[1], xyzw[2]],
                orientation_xyzw: [0.0, 0.0, half.sin(), half.cos()],
            };
            let (name, changed) = crate::world::spawn(handle, &request)
                .map_err(|e| ConsoleError::World(e.to_string()))?;
            Ok(format!(
                "ok spawned {name} generation {} build_ms {:.1} hold_ms {:.3}",
                changed.generation,
                changed.build_time * 1e3,
                changed.hold_time * 1e3
            ))
        }
        "delete" => {
            let changed = crate::world::delete(handle, words.arg(1)?)
                .map_err(|e| ConsoleError::World(e.to_string()))?;
            Ok(format!(
                "ok deleted {} generation {} build_ms {:.1} hold_ms {:.3}",
                words.arg(1)?,
                changed.generation,
                changed.build_time * 1e3,
                changed.hold_time * 1e3
            ))
        }
        "export" => {
            // The running world's config, built and written again on this thread.
            let world = handle.world();
            let out = std::path::Path::new(words.arg(1)?);
            let exported =
                crate::model::export::export(&world.config, out, words.0.get(2).copied())
                    .map_err(|e| ConsoleError::World(e.to_string()))?;
            if !exported.comparison.same(crate::model::export::TOLERANCE) {
                return Err(ConsoleError::World(format!(
                    "MuJoCo's load of {} differs from the bridge's model: {}",
                    out.display(),
                    exported.comparison
                )));
            }
            Ok(format!(
                "ok exported {} assets {}; {}",
                out.display(),
                exported.assets,
                exported.comparison
            ))
        }
        other => Err(ConsoleError::Unknown(other.to_string())),
    }
}

/// `mcap FILE [steps|topics]` starts a recording, `mcap stop` ends it.
fn mcap(reach: &Reach, words: &Words) -> Result<String, ConsoleError> {
    match words.arg(1)? {
        "stop" => {
            let r = reach.recorder.stop()?;
            Ok(format!(
                "ok recorded {}: step records {} written, {} dropped",
                r.path.display(),
                r.steps_written,
                r.steps_dropped
            ))
        }
        path => {
            let every_step = match words.0.get(2).copied() {
                None => reach.recorder.every_step(),
                Some("steps") => true,
                Some("topics") => false,
                Some(_) => return Err(ConsoleError::Usage("mcap FILE.mcap [steps|topics]")),
            };
            reach
                .recorder
                .start(std::path::Path::new(path), every_step)?;
            Ok(format!("ok recording to {path}"))
        }
    }
}

/// The simulation's counters, the legacy servers' and the ROS node's.
fn stats(handle: &SimHandle, reach: &Reach) -> String {
    let (legacy, publishing) = (&reach.legacy, reach.publishing.as_deref());
    let s = handle.stats();
    let mut reply = format!(
        "ok steps {} time {:.6} timestep {} rejected {} ignored {} late {} refused {} \
         generation {} stale {}",
        s.steps,
        s.sim_time,
        handle.world().model.opt().timestep,
        s.rejected_commands,
        s.ignored_commands,
        s.late_commands,
        s.refused_operations,
        handle.generation(),
        s.stale_commands
    );
    for c in legacy {
        let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        reply += &format!(
            " zmq_row_sets {} zmq_received {} zmq_dropped {} zmq_commands {} zmq_skipped {} \
             zmq_gains_skipped {} zmq_steps_lost {}",
            load(&c.row_sets),
            load(&c.messages_received),
            load(&c.messages_dropped),
            load(&c.commands_sent),
            load(&c.pairs_skipped),
            load(&c.gains_skipped),
            load(&c.steps_lost)
        );
    }
    if let Some(p) = publishing {
        reply += &format!(
            " ros_published {} ros_publish_failures {}",
            p.published.load(Ordering::Relaxed),
            p.failed.load(Ordering::Relaxed)
        );
    }
    reply
}

/// Steps done when each recent legacy control batch arrived, oldest first.
fn arrivals(legacy: &[Arc<LegacyCounters>]) -> String {
    // Steps done when each recent legacy control batch arrived, oldest first.
    let steps: Vec<String> = legacy
        .iter()
        .filter_map(|c| {
            c.control_arrivals
                .lock()
                .ok()
                .map(|a| a.iter().map(u64::to_string).collect::<Vec<_>>())
        })
        .flatten()
        .collect();
    format!("ok {}", steps.join(" "))
}

/// Reads operations from standard input until it closes, on a thread of its own; `quit`
/// sets `stop`.
pub fn spawn(handle: SimHandle, reach: Reach, stop: &'static AtomicBool) {
    let spawned = std::thread::Builder::new()
        .name("console".into())
        .spawn(move || {
            use std::io::{BufRead, Write};
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                let reply = match console_line(&handle, &reach, stop, &line) {
                    Ok(text) => text,
                    Err(e) => format!("error: {e}"),
                };
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{reply}");
                let _ = out.flush();
            }
        });
    if let Err(e) = spawned {
        log::warn!("no console: {e}");
    }
}
