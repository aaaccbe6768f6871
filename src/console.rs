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
    let (legacy, publishing) = (&reach.legacy, reach.publishing.as_deref());
    let words: Vec<&str> = line.split_whitespace().collect();
    let robot = handle.lone_robot();
    let arg = |i: usize| {
        words
            .get(i)
            .copied()
            .ok_or_else(|| ConsoleError::MissingArgument(words[0].to_string()))
    };
    let done = |r: Result<crate::sim::OperationDone, OperationError>| {
        r.map(|d| format!("ok step {} time {:.6}", d.step, d.time))
            .map_err(ConsoleError::from)
    };
    match words.first().copied() {
        None => Ok(String::new()),
        Some("reset") => done(handle.reset()),
        Some("pause") => done(handle.pause()),
        Some("realtime") => done(handle.set_mode(SimMode::Realtime)),
        Some("fast") => done(handle.set_mode(SimMode::Fast)),
        Some("step") => done(
            handle.step(
                arg(1)?
                    .parse()
                    .map_err(|_| ConsoleError::Usage("step N needs a number"))?,
            ),
        ),
        Some("run") => {
            // run N [fast]: N steps paced in realtime (or as fast as possible), then pause.
            let n: u64 = arg(1)?
                .parse()
                .map_err(|_| ConsoleError::Usage("run N needs a number"))?;
            let mode = if words.get(2) == Some(&"fast") {
                SimMode::Fast
            } else {
                SimMode::Realtime
            };
            handle.pause_at_step(handle.stats().steps + n);
            done(handle.set_mode(mode))
        }
        Some("speed") => done(
            handle.set_speed(
                arg(1)?
                    .parse()
                    .map_err(|_| ConsoleError::Usage("speed F needs a number"))?,
            ),
        ),
        Some("keyframe") => done(handle.reset_to_keyframe(robot, arg(1)?)),
        Some("save") => handle
            .save_named_snapshot(arg(1)?)
            .map(|s| format!("ok step {s}"))
            .map_err(ConsoleError::from),
        Some("restore") => done(handle.restore_named_snapshot(arg(1)?)),
        // A snapshot file, written atomically (the old file or the new one, never half).
        Some("savefile") => handle
            .save_snapshot_file(std::path::Path::new(arg(1)?))
            .map(|s| format!("ok step {}", s.step))
            .map_err(ConsoleError::from),
        Some("loadfile") => done(handle.load_snapshot_file(std::path::Path::new(arg(1)?))),
        Some("actions") => {
            let r = handle.robot_index(arg(1)?).map_err(ConsoleError::from)?;
            let mask = arg(2)?
                .parse()
                .map_err(|_| ConsoleError::Usage("actions ROBOT MASK needs a number"))?;
            handle
                .set_actions(r, mask)
                .map(|_| "ok".to_string())
                .map_err(ConsoleError::from)
        }
        Some("source") => {
            let r = handle.robot_index(arg(1)?).map_err(ConsoleError::from)?;
            let source = match arg(2)? {
                "ros" => ControlSource::Ros,
                "zmq" => ControlSource::Zmq,
                "player" => ControlSource::Player,
                other => return Err(ConsoleError::Source(other.to_string())),
            };
            done(handle.set_source(r, source))
        }
        Some("twist") => {
            let r = handle.robot_index(arg(1)?).map_err(ConsoleError::from)?;
            let mut v = [0.0; 3];
            for (k, slot) in v.iter_mut().enumerate() {
                *slot = arg(2 + k)?
                    .parse()
                    .map_err(|_| ConsoleError::Usage("twist ROBOT VX VY WZ needs numbers"))?;
            }
            handle
                .command_twist(ControlSource::Ros, r, v[0], v[1], v[2])
                .map(|_| "ok".to_string())
                .map_err(ConsoleError::from)
        }
        Some("spawn") => {
            // spawn FILE NAME [x y z [yaw]]
            let mut xyzw = [0.0; 4];
            for (k, slot) in xyzw.iter_mut().enumerate() {
                if let Some(word) = words.get(3 + k) {
                    *slot = word.parse().map_err(|_| {
                        ConsoleError::Usage("spawn FILE NAME [x y z [yaw]] needs numbers")
                    })?;
                }
            }
            let half = xyzw[3] / 2.0;
            let request = crate::world::SpawnRequest {
                name: arg(2)?.to_string(),
                allow_renaming: false,
                source: crate::world::SpawnSource::Uri(arg(1)?.to_string()),
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
        Some("delete") => {
            let changed = crate::world::delete(handle, arg(1)?)
                .map_err(|e| ConsoleError::World(e.to_string()))?;
            Ok(format!(
                "ok deleted {} generation {} build_ms {:.1} hold_ms {:.3}",
                arg(1)?,
                changed.generation,
                changed.build_time * 1e3,
                changed.hold_time * 1e3
            ))
        }
        Some("mcap") => match arg(1)? {
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
                let every_step = match words.get(2).copied() {
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
        },
        Some("export") => {
            // The running world's config, built and written again on this thread.
            let world = handle.world();
            let out = std::path::Path::new(arg(1)?);
            let exported = crate::model::export::export(&world.config, out, words.get(2).copied())
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
        Some("stats") => {
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
            Ok(reply)
        }
        Some("arrivals") => {
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
            Ok(format!("ok {}", steps.join(" ")))
        }
        Some("quit") => {
            stop.store(true, Ordering::Relaxed);
            Ok("ok".into())
        }
        Some(other) => Err(ConsoleError::Unknown(other.to_string())),
    }
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
