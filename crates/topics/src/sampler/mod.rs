//! The sampler: one thread that follows the world with the outputs planned for it, takes
//! the samples the physics thread marks on the sim clock (`sim::SampleRing`), fills each
//! message they are due for once, stamped with the sample's sim time, encodes it once, and
//! hands the same bytes to every sink's route (the ROS node's publishers, the Foxglove
//! server, MCAP). While the run is paused, the held state goes out on the wall clock, so a
//! late subscriber (RViz, MoveIt) still sees the robot. Camera frames and lidar scans are
//! samples too: asked of their workers with the sample's state while some route reads them,
//! and filled and sent on a frames thread of the sampler's (`offload`), so a frame going out
//! never delays the state topics of a real-time run.
mod camera;
mod lidar;
mod requested;
mod schedules;
mod segmentation;
mod sink;
mod state;

pub use sink::{Latched, Route, Routes, Sink, TopicSpec};

use crate::offload::Offload;
use crate::render::{Cameras, LidarSources, Sensors};
use crate::sim::{Attachment, Following, Observer, PauseCause, StateSnapshot, WorldGeneration};
use crate::{PublishCounters, Tick, TopicOutput, WorldOutputs};
use requested::Requested;
use schedules::{Sampled, Schedules};
use state::StateOutput;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest the sampler sleeps, so that a stop, a world change or a new rate is seen soon.
const LONGEST_WAIT: Duration = Duration::from_millis(20);

/// Samples taken in one go before the wall-clock outputs get their turn.
const BATCH: usize = 64;

/// How long `Sampler::start` waits for its thread to attach to the world's samples.
const READY_WAIT: Duration = Duration::from_secs(5);

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
    /// The run was asked to start paused: the held state goes out from the start. Otherwise
    /// the pause before the run mode is set is not the user's, and nothing is held until the
    /// run has gone once.
    pub hold_at_start: bool,
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
        let (ready, attached) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("topics".into())
            .spawn(move || {
                give_way(&handle, settings.nice);
                let mut run = Run::new(handle, following, settings);
                crate::supervise::essential("topics", || run.run(&stopping, ready));
            })?;
        // The first samples are the world's start: they must have a reader before it runs.
        if attached.recv_timeout(READY_WAIT).is_err() {
            log::warn!("the topics thread was not ready in {READY_WAIT:?}; it starts late");
        }
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
    schedules: Schedules,
    /// The sampler's hold on the world's samples while some sink is active.
    attachment: Option<Attachment>,
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
    /// The run has gone (or was asked to start paused): from then on every pause holds.
    started: bool,
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
            started: settings.hold_at_start,
            handle,
            following,
            settings,
            offload,
            current: None,
        }
    }

    fn run(&mut self, stop: &AtomicBool, ready: std::sync::mpsc::Sender<()>) {
        let mut state = self.handle.latest_state_buffer();
        let mut ready = Some(ready);
        while !stop.load(Ordering::Acquire) {
            if let Some((world, planned)) = self.following.changed() {
                self.follow_world(world, planned);
            }
            self.tend();
            self.retime();
            let active = self.settings.sinks.iter().any(|sink| sink.active());
            let records = self.settings.sinks.iter().any(|sink| sink.records());
            let Some(current) = self.current.as_mut() else {
                std::thread::sleep(LONGEST_WAIT);
                continue;
            };
            current.attach(active, records);
            if let Some(ready) = ready.take() {
                let _ = ready.send(());
            }
            // Nothing reads anything (no node, no client, no recording): nothing to make.
            if !active {
                std::thread::sleep(LONGEST_WAIT);
                continue;
            }
            let lossless = records || self.handle.mode().0 != crate::config::SimMode::Realtime;
            let took = self.take_samples(&mut state, lossless);
            let wait = self.run_wall(&mut state, took < BATCH);
            if took == 0 && !wait.is_zero() {
                // While the run goes, it looks for samples every `READER_POLL`; the physics
                // thread wakes it sooner when they pile up.
                let running = self.handle.mode().0 != crate::config::SimMode::Paused;
                let wait = if running {
                    wait.min(crate::sim::READER_POLL)
                } else {
                    wait
                };
                std::thread::park_timeout(wait);
            }
        }
        // What the run sampled before it stopped still goes out (a batch run's last steps).
        while self.take_samples(&mut state, true) > 0 {}
        self.finish_requested(&state);
        self.report_lost();
        // The frames thread goes before the routes whose publishers its work uses.
        self.offload = None;
        self.current = None;
    }

    /// Sends what the next samples are due for; how many it took. `lossless`: a camera or
    /// lidar due again waits for its last frame.
    fn take_samples(&mut self, state: &mut StateSnapshot, lossless: bool) -> usize {
        let Some(current) = self.current.as_mut() else {
            return 0;
        };
        let Some(ring) = current.attachment.as_ref().map(|a| a.ring().clone()) else {
            return 0;
        };
        let stats = self.handle.stats();
        let now = Instant::now();
        let mut took = 0;
        while took < BATCH {
            let Some(mask) = ring.take(state) else {
                break;
            };
            took += 1;
            let stamp = crate::convert::time(state.time);
            let tick = Tick {
                state,
                stamp: &stamp,
                now,
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
                output.run_sampled(&tick, &current.routes, mask);
            }
            for output in current.requested.iter_mut() {
                output.sample(&tick, &current.routes, mask, lossless);
            }
            ring.mark_done();
        }
        self.settings
            .publishing
            .samples_lost
            .store(ring.lost(), Ordering::Relaxed);
        took
    }

    /// Sends what is due on the wall clock (the run's figures, latched topics, frames and
    /// scans; the held state while paused, once the samples are all out); how long until
    /// the next is due.
    fn run_wall(&mut self, state: &mut StateSnapshot, drained: bool) -> Duration {
        let mut held = drained && self.holding();
        let Some(current) = self.current.as_mut() else {
            return LONGEST_WAIT;
        };
        let until = |current: &WorldRun, held: bool| {
            next_deadline(current, held).map_or(LONGEST_WAIT, |d| {
                d.saturating_duration_since(Instant::now())
                    .min(LONGEST_WAIT)
            })
        };
        let wait = until(current, held);
        if !wait.is_zero() {
            return wait;
        }
        if !current.world.latest_state(state) {
            return Duration::from_millis(1);
        }
        // A step N went on meanwhile: this state may be newer than samples not yet taken,
        // and nothing may run ahead of them (wheel odometry would see time go back).
        held &= current.world.samples.is_empty() && !self.handle.stepping();
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
        if held {
            for output in current.states.iter_mut() {
                output.observe(&tick);
            }
        }
        for output in current.states.iter_mut() {
            output.run_wall(&tick, &current.routes, held);
        }
        for output in current.requested.iter_mut() {
            output.run(&tick, &current.routes, held);
        }
        until(current, held)
    }

    /// Waits for the frames and scans asked last to go out (the run's end).
    fn finish_requested(&mut self, state: &StateSnapshot) {
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
        for output in current.requested.iter_mut() {
            output.finish(&tick, &current.routes);
        }
    }

    /// Whether the run is paused by someone (not by the end of a batch run, nor before the
    /// run mode was set), so that the held state goes out. Once the run has gone, every
    /// later pause holds (a world load's too).
    fn holding(&mut self) -> bool {
        let (mode, cause) = self.handle.mode();
        if mode != crate::config::SimMode::Paused {
            self.started = true;
            return false;
        }
        cause != PauseCause::LastStep && self.started
    }

    /// Says which topics lost samples to a full ring (a sink slower than real time).
    fn report_lost(&self) {
        let Some(current) = &self.current else {
            return;
        };
        let ring = &current.world.samples;
        let states = current.states.iter().map(|o| o as &dyn Sampled);
        let requested = current.requested.iter().map(|o| &**o as &dyn Sampled);
        let lost: Vec<String> = states
            .chain(requested)
            .filter_map(|o| o.schedule().map(|k| (o.name(), ring.dropped(k))))
            .filter(|(_, lost)| *lost > 0)
            .map(|(name, lost)| format!("{name} {lost}"))
            .collect();
        if !lost.is_empty() {
            log::warn!(
                "samples lost to a sink slower than the run: {}",
                lost.join(", ")
            );
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
        let mut moved = false;
        for (field, hz) in retimes {
            for output in current.states.iter_mut() {
                moved |= output.retime(&field, hz);
            }
        }
        if moved {
            current.fit_schedules();
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
        let mut current = WorldRun {
            world,
            routes: Routes(routes.into()),
            states,
            schedules: Schedules::new(),
            attachment: None,
            requested,
            cameras,
            lidars,
        };
        current.fit_schedules();
        self.current = Some(current);
    }
}

impl WorldRun {
    /// Gives every sampled output (state, camera, lidar) its schedule.
    fn fit_schedules(&mut self) {
        let states = self.states.iter_mut().map(|o| o as &mut dyn Sampled);
        let requested = self
            .requested
            .iter_mut()
            .map(|o| &mut **o as &mut dyn Sampled);
        let mut outputs: Vec<&mut dyn Sampled> = states.chain(requested).collect();
        self.schedules.fit(&mut outputs, &self.world.samples);
    }

    /// Reads the world's samples while some sink is active; `lossless` while one records.
    fn attach(&mut self, active: bool, lossless: bool) {
        if active && self.attachment.is_none() {
            self.attachment = Some(self.world.samples.attach());
        } else if !active {
            self.attachment = None;
        }
        self.world.samples.set_lossless(lossless);
    }
}

/// The earliest moment an output of the world is due on the wall clock (`held`: the held
/// state of a paused run goes out).
fn next_deadline(current: &WorldRun, held: bool) -> Option<Instant> {
    let states = current.states.iter().filter_map(|o| o.deadline(held));
    let requested = current.requested.iter().filter_map(|o| o.deadline(held));
    states.chain(requested).min()
}
