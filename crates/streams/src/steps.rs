//! Every physics step's full state into the recording (`record.every_step`): the physics
//! thread pushes a row per step into a ring (no wait, no allocation), this thread serializes
//! each row as a `mujoco_bridge/msg/StepState` and logs it. Rows the ring could not hold are
//! counted, never silently lost.
use super::{STEPS_TOPIC, log_time};
use crate::messages::cdr;
use crate::messages::mujoco_bridge_msgs::msg::StepState;
use crate::record::RecordRing;
use crate::sim::{Operation, SimHandle, TapLayout, WorldGeneration};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Rows the ring holds before this thread must have logged them (16 s at 1 kHz).
const RING_ROWS: usize = 16384;
/// How long the thread sleeps when the ring is empty.
const IDLE: Duration = Duration::from_millis(2);

/// What the step recorder did, for the run report.
#[derive(Debug, Default)]
pub struct StepCounts {
    pub written: AtomicU64,
    /// Rows the ring dropped because this thread fell behind.
    pub dropped: AtomicU64,
    /// Rows that could not be serialized.
    pub failed: AtomicU64,
}

/// The recorder's thread; `finish` drains what the physics thread pushed and stops it.
pub struct StepRecorder {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
    /// Its channel, which closes with it.
    channel: Arc<foxglove::RawChannel>,
    pub counts: Arc<StepCounts>,
}

/// The ring of one world and where its row's parts lie.
struct Tapped {
    generation: u64,
    ring: Arc<RecordRing>,
    /// Lengths of qpos, qvel, act, ctrl, sensordata.
    sizes: [usize; 5],
}

impl StepRecorder {
    /// Taps the current world and starts the thread that logs its rows on a channel of
    /// `context`.
    pub fn start(
        handle: SimHandle,
        context: &Arc<foxglove::Context>,
    ) -> Result<Self, super::StreamError> {
        let channel = context
            .channel_builder(STEPS_TOPIC)
            .message_encoding("cdr")
            .schema(super::schema::<StepState>())
            .build_raw()
            .map_err(|e| super::StreamError::Channel(STEPS_TOPIC.into(), e.to_string()))?;
        let first = tap(&handle, &handle.world()).inspect_err(|_| channel.close())?;
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(StepCounts::default());
        let (stopping, counting, logging) = (stop.clone(), counts.clone(), channel.clone());
        let thread = std::thread::Builder::new()
            .name("mcap-steps".into())
            .spawn(move || run(handle, first, &logging, &stopping, &counting))
            .map_err(super::StreamError::Thread)?;
        Ok(Self {
            stop,
            thread,
            channel,
            counts,
        })
    }

    /// Logs every row pushed so far, then stops the thread.
    pub fn finish(self) {
        self.stop.store(true, Ordering::Release);
        if self.thread.join().is_err() {
            log::error!("the MCAP step recorder panicked");
        }
        self.channel.close();
    }
}

fn tap(handle: &SimHandle, world: &WorldGeneration) -> Result<Tapped, super::StreamError> {
    let model = world.model.ffi();
    let size = |n: i64| n.max(0) as usize;
    let ring = Arc::new(RecordRing::new(TapLayout::Steps.row_len(model), RING_ROWS));
    handle
        .request_in(
            world.number,
            Operation::Tap {
                ring: ring.clone(),
                layout: TapLayout::Steps,
            },
        )
        .map_err(|e| super::StreamError::Tap(e.to_string()))?;
    Ok(Tapped {
        generation: world.number,
        ring,
        sizes: [
            size(model.nq),
            size(model.nv),
            size(model.na),
            size(model.nu),
            size(model.nsensordata),
        ],
    })
}

fn run(
    handle: SimHandle,
    mut tapped: Tapped,
    channel: &foxglove::RawChannel,
    stop: &AtomicBool,
    counts: &StepCounts,
) {
    let mut writer = RowWriter {
        row: vec![0.0; tapped.ring.row_len()],
        message: StepState::default(),
        bytes: Vec::new(),
    };
    // Rows the rings of earlier worlds dropped.
    let mut dropped_earlier = 0;
    loop {
        let finishing = stop.load(Ordering::Acquire);
        let drained = writer.drain(&tapped, channel, counts);
        counts
            .dropped
            .store(dropped_earlier + tapped.ring.dropped(), Ordering::Relaxed);
        if finishing {
            break;
        }
        // A world change ended this world's tap: the new world is tapped from here on, after
        // the last rows of the old one.
        if handle.generation() != tapped.generation {
            let world = handle.world();
            let next = match tap(&handle, &world) {
                Ok(next) => next,
                Err(e) => {
                    log::error!("MCAP step records: world {}: {e}", world.number);
                    return;
                }
            };
            writer.drain(&tapped, channel, counts);
            let _ = handle.request(Operation::Untap(tapped.ring.clone()));
            dropped_earlier += tapped.ring.dropped();
            tapped = next;
            writer.row = vec![0.0; tapped.ring.row_len()];
        } else if drained == 0 {
            std::thread::sleep(IDLE);
        }
    }
    let _ = handle.request(Operation::Untap(tapped.ring.clone()));
}

/// The buffers rows pass through on their way to the channel.
struct RowWriter {
    row: Vec<f64>,
    message: StepState,
    bytes: Vec<u8>,
}

impl RowWriter {
    /// Logs every row in the ring; returns how many.
    fn drain(
        &mut self,
        tapped: &Tapped,
        channel: &foxglove::RawChannel,
        counts: &StepCounts,
    ) -> u64 {
        let mut rows = 0;
        while tapped.ring.pop(&mut self.row) {
            fill(&mut self.message, &self.row, tapped.sizes);
            match cdr::encode_into(&self.message, &mut self.bytes) {
                Ok(()) => {
                    channel.log_with_meta(&self.bytes, log_time(self.message.time));
                    counts.written.fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => {
                    counts.failed.fetch_add(1, Ordering::Relaxed);
                }
            }
            rows += 1;
        }
        rows
    }
}

/// `row` (step, time, qpos, qvel, act, ctrl, sensordata) into `message`, reusing its arrays.
fn fill(message: &mut StepState, row: &[f64], sizes: [usize; 5]) {
    message.step = row[0] as u64;
    message.time = row[1];
    message.stamp = crate::topics::convert::time(row[1]);
    let mut at = 2;
    for (values, len) in [
        &mut message.qpos,
        &mut message.qvel,
        &mut message.act,
        &mut message.ctrl,
        &mut message.sensordata,
    ]
    .into_iter()
    .zip(sizes)
    {
        values.clear();
        values.extend_from_slice(&row[at..at + len]);
        at += len;
    }
}
