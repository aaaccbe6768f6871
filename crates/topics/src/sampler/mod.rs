//! The sampler: one thread that follows the world with the outputs planned for it, fills
//! each message once from the simulation state when it is due, encodes it once, and hands
//! the same bytes to every sink's route (the ROS node's publishers, the Foxglove server,
//! MCAP). Camera frames and lidar scans are asked of their workers while some route reads
//! them, and filled and sent on a frames thread of the sampler's (`offload`), so a frame
//! going out never delays the state topics.
mod camera;
mod lidar;
mod requested;
mod sink;
mod state;

pub use sink::{Latched, Route, Routes, Sink, TopicSpec};

use crate::offload::Offload;
use crate::render::{Cameras, LidarSources, Sensors};
use crate::sim::{Following, Observer, StateSnapshot, WorldGeneration};
use crate::{PublishCounters, Tick, TopicOutput, WorldOutputs};
use requested::Requested;
use state::StateOutput;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest the sampler sleeps, so that a stop, a world change or a new rate is seen soon.
const LONGEST_WAIT: Duration = Duration::from_millis(20);

/// Live changes of `ros.rates.<field>` (a parameter set), for the sampler to take.
#[derive(Clone, Default)]
pub struct Retimes(Arc<Mutex<Vec<(String, f64)>>>);

impl Retimes {
    /// Asks for the topics that follow `ros.rates.<field>` to go at `hz` from now.
    pub fn push(&self, field: &str, hz: f64) {
        lock(&self.0).push((field.to_string(), hz));
    }

    fn take(&self) -> Vec<(String, f64)> {
        match self.0.try_lock() {
            Ok(mut queued) if !queued.is_empty() => std::mem::take(&mut *queued),
            _ => Vec::new(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the sampler starts from besides the world it follows.
pub struct SamplerSettings {
    pub sinks: Vec<Box<dyn Sink>>,
    /// The render and ray-casting threads the cameras and lidars ask.
    pub sensors: Sensors,
    /// The ROS node's publish counts (what `/diagnostics` shows); a new one without a node.
    pub publishing: Arc<PublishCounters>,
    pub retimes: Retimes,
    /// The niceness of its thread (the ROS node's: it publishes the node's topics).
    pub nice: u8,
}

/// The sampler's thread; dropping it stops it (and its frames thread, its queued frames
/// sent) and lets go of every route.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    pub fn start(
        handle: Observer,
        following: Following<WorldOutputs>,
        settings: SamplerSettings,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("topics".into())
            .spawn(move || {
                give_way(&handle, settings.nice);
                let mut run = Run::new(handle, following, settings);
                crate::supervise::essential("topics", || run.run(&stopping));
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            log::error!("the topics thread panicked");
        }
    }
}

/// Lowers the thread to niceness `nice` unless the kernel raised the physics thread above
/// the normal weight (then a niced sampler would only lose to the user's processes).
fn give_way(handle: &Observer, nice: u8) {
    let asked = Instant::now();
    let granted = loop {
        let granted = handle.granted_priority();
        if granted.is_some() || asked.elapsed() > Duration::from_secs(2) {
            break granted;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    if crate::sim::raised_above_normal(&granted) {
        return;
    }
    if let Err(e) = crate::sim::give_way(nice) {
        log::warn!("could not lower the topics thread to niceness {nice}: {e}");
    }
}

/// The outputs of the world in effect, with their routes.
struct WorldRun {
    world: Arc<WorldGeneration>,
    routes: Routes,
    states: Vec<StateOutput>,
    requested: Vec<Box<dyn Requested>>,
    cameras: Option<Arc<Cameras>>,
    lidars: Option<Arc<LidarSources>>,
}

struct Run {
    handle: Observer,
    following: Following<WorldOutputs>,
    settings: SamplerSettings,
    /// Fills and sends frames and scans; it ends (its queued work done) before the routes.
    offload: Option<Offload>,
    current: Option<WorldRun>,
}

impl Run {
    fn new(
        handle: Observer,
        following: Following<WorldOutputs>,
        settings: SamplerSettings,
    ) -> Self {
        let offload = Offload::start()
            .map_err(|e| log::warn!("camera and lidar messages go out on the topics thread: {e}"))
            .ok();
        Self {
            handle,
            following,
            settings,
            offload,
            current: None,
        }
    }

    fn run(&mut self, stop: &AtomicBool) {
        let mut state = self.handle.latest_state_buffer();
        while !stop.load(Ordering::Acquire) {
            if let Some((world, planned)) = self.following.changed() {
                state = StateSnapshot::with_layout(&world.layout());
                self.follow_world(world, planned);
            }
            self.tend();
            self.retime();
            let Some(current) = &self.current else {
                std::thread::sleep(LONGEST_WAIT);
                continue;
            };
            // Nothing reads anything (no node, no client, no recording): nothing to make.
            if !self.settings.sinks.iter().any(|sink| sink.active()) {
                std::thread::sleep(LONGEST_WAIT);
                continue;
            }
            let wait = next_deadline(current).map_or(LONGEST_WAIT, |d| {
                d.saturating_duration_since(Instant::now())
            });
            let wait = wait.min(LONGEST_WAIT);
            if !wait.is_zero() {
                std::thread::sleep(wait);
                continue;
            }
            if !current.world.latest_state(&mut state) {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            self.sample(&state);
        }
        // The frames thread goes before the routes whose publishers its work uses.
        self.offload = None;
        self.current = None;
    }

    /// Sends what is due of `state`.
    fn sample(&mut self, state: &StateSnapshot) {
        let Some(current) = self.current.as_mut() else {
            return;
        };
        let stamp = crate::convert::time(state.time);
        let stats = self.handle.stats();
        let tick = Tick {
            state,
            stamp: &stamp,
            now: Instant::now(),
            stats: &stats,
            publishing: &self.settings.publishing,
            cameras: current.cameras.as_ref(),
            lidars: current.lidars.as_ref(),
            offload: self.offload.as_ref(),
        };
        for output in current.states.iter_mut() {
            output.observe(&tick);
        }
        for output in current.states.iter_mut() {
            output.run(&tick, &current.routes);
        }
        for output in current.requested.iter_mut() {
            output.run(&tick, &current.routes);
        }
    }

    /// Each sink's own work, with the latched messages it may resend.
    fn tend(&mut self) {
        let states = self
            .current
            .as_ref()
            .map(|c| c.states.as_slice())
            .unwrap_or_default();
        let latched = |topic: usize| {
            states
                .iter()
                .find(|s| s.topic() == topic)
                .and_then(|s| s.latched())
        };
        for sink in self.settings.sinks.iter_mut() {
            sink.tend(&latched);
        }
    }

    /// Applies the rates that parameter sets changed.
    fn retime(&mut self) {
        let retimes = self.settings.retimes.take();
        let Some(current) = self.current.as_mut() else {
            return;
        };
        for (field, hz) in retimes {
            for output in current.states.iter_mut() {
                output.retime(&field, hz);
            }
        }
    }

    /// Takes the outputs planned for the world now in effect: each sink opens the world's
    /// topics (a topic it had keeps its publisher or channel), then the old world's routes go.
    fn follow_world(&mut self, world: Arc<WorldGeneration>, planned: WorldOutputs) {
        let epoch = Instant::now();
        let mut topics = Vec::new();
        let mut states = Vec::new();
        let mut requested = Vec::new();
        for output in planned.0 {
            match output.into_output() {
                TopicOutput::State(output) => {
                    states.push(StateOutput::new(output, &mut topics, epoch))
                }
                TopicOutput::Camera(planned) => {
                    requested.push(camera::start(*planned, &mut topics))
                }
                TopicOutput::Lidar(planned) => requested.push(lidar::start(*planned, &mut topics)),
            }
        }
        let topics: Arc<[TopicSpec]> = topics.into();
        let routes: Vec<Arc<dyn Route>> = self
            .settings
            .sinks
            .iter_mut()
            .map(|sink| sink.open(world.number, &topics))
            .collect();
        // The old world's sources go first: nothing of it is kept for a reader.
        self.current = None;
        let (cameras, lidars) = self.settings.sensors.sources(&world);
        log::debug!(
            "world {}: {} topics on {} sinks",
            world.number,
            topics.len(),
            routes.len()
        );
        self.current = Some(WorldRun {
            world,
            routes: Routes(routes.into()),
            states,
            requested,
            cameras,
            lidars,
        });
    }
}

/// The earliest moment an output of the world is due.
fn next_deadline(current: &WorldRun) -> Option<Instant> {
    let states = current.states.iter().filter_map(|o| o.deadline());
    let requested = current.requested.iter().filter_map(|o| o.deadline());
    states.chain(requested).min()
}
