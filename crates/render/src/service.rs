//! The worker thread behind one kind of source (cameras, lidars): one thread for the whole
//! run, which follows the world and holds its heavy resources (a GL context, render
//! contexts, `MjData` mirrors) only while they are asked for. They are made on the first
//! request, the world's part goes as soon as the world it was made for is gone, and the rest
//! after `idle_release` without a request. Adapters ask by index, either for the newest
//! state or for a state they hand over (a sample of the sim clock), and read from the slots
//! of the world's `Sources`; the physics thread never waits for any of it.
use super::frame::Slot;
use crate::sim::{StateSnapshot, WorldGeneration};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often an idle worker looks whether its world is gone or its idle time over.
const IDLE_POLL: Duration = Duration::from_millis(200);

/// What a worker thread does for one kind of source. Everything it makes lives on its
/// thread (a GL context cannot move).
pub trait Work: 'static {
    /// One source as planned (a camera, a lidar).
    type Spec: Send + Sync + 'static;
    /// What a source gives (a frame, a scan).
    type Out: Default + Clone + Send + 'static;
    type Error: std::fmt::Display;
    /// Makes what serving `sources` needs: called at the first request, and again after
    /// `unload` (a world change, an idle release).
    fn load(&mut self, sources: &Sources<Self::Spec, Self::Out>) -> Result<(), Self::Error>;
    /// A round of requests begins: the states asked for may have moved since the last.
    fn begin(&mut self);
    /// Makes source `index`'s output as of `state`; the slot takes it (and gives back the
    /// buffer it held).
    fn make(&mut self, index: usize, state: &StateSnapshot) -> Result<&mut Self::Out, Self::Error>;
    /// Drops what `load` made for the world.
    fn unload(&mut self);
    /// Drops what outlives worlds too (the GL context).
    fn release(&mut self);
}

/// The sources of one world generation: what they are, their slots, and the way to wake
/// their worker. Every adapter of that world shares it (`Service::sources`).
pub struct Sources<S, T> {
    pub world: Arc<WorldGeneration>,
    pub specs: Vec<S>,
    slots: Vec<Slot<T>>,
    /// Per source, the state a request handed over.
    given: Vec<Mutex<Given>>,
    wake: crossbeam_channel::Sender<()>,
}

/// The state a request of one source handed over; `fresh` until the worker takes it.
struct Given {
    state: StateSnapshot,
    fresh: bool,
}

/// Which state a request asked for.
enum Asked {
    /// The one it handed over, now in the worker's buffer.
    Given,
    Newest,
}

impl<S, T: Default> Sources<S, T> {
    fn new(
        world: Arc<WorldGeneration>,
        specs: Vec<S>,
        wake: crossbeam_channel::Sender<()>,
    ) -> Self {
        let layout = world.layout();
        let given = || {
            Mutex::new(Given {
                state: StateSnapshot::with_layout(&layout),
                fresh: false,
            })
        };
        Self {
            slots: (0..specs.len()).map(|_| Slot::default()).collect(),
            given: (0..specs.len()).map(|_| given()).collect(),
            world,
            specs,
            wake,
        }
    }
}

impl<S, T> Sources<S, T> {
    /// Asks for a new output of source `index` from the newest state (a state handed over
    /// and not yet taken stays the one asked for). A request that finds the previous one
    /// still waiting counts as skipped.
    pub fn request(&self, index: usize) {
        self.ask(index, None);
    }

    /// Asks for a new output of source `index` as of `state` (a sample); it replaces a
    /// request still waiting, which counts as skipped.
    pub fn request_at(&self, index: usize, state: &StateSnapshot) {
        self.ask(index, Some(state));
    }

    fn ask(&self, index: usize, state: Option<&StateSnapshot>) {
        let (Some(slot), Some(given)) = (self.slots.get(index), self.given.get(index)) else {
            return;
        };
        {
            // The flag and the state change together: the worker takes both under this lock.
            let mut given = lock(given);
            if let Some(state) = state {
                given.state.copy_from(state);
                given.fresh = true;
            }
            slot.requests.fetch_add(1, Ordering::AcqRel);
            if slot.requested.swap(true, Ordering::AcqRel) {
                slot.skipped.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Full: the worker is already woken and will see the flag.
        let _ = self.wake.try_send(());
    }

    /// Takes source `index`'s request, if any: the state it handed over goes into `state`.
    /// Also the number of requests it answers.
    fn take_request(&self, index: usize, state: &mut StateSnapshot) -> Option<(Asked, u64)> {
        let mut given = lock(&self.given[index]);
        let slot = &self.slots[index];
        if !slot.requested.swap(false, Ordering::AcqRel) {
            return None;
        }
        let answers = slot.requests.load(Ordering::Acquire);
        if !given.fresh {
            return Some((Asked::Newest, answers));
        }
        given.fresh = false;
        std::mem::swap(&mut given.state, state);
        Some((Asked::Given, answers))
    }

    /// Source `index`'s slot.
    pub fn slot(&self, index: usize) -> &Slot<T> {
        &self.slots[index]
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Done and skipped, over every source.
    pub fn counts(&self) -> (u64, u64) {
        self.slots.iter().fold((0, 0), |(done, skipped), slot| {
            (
                done + slot.rendered.load(Ordering::Relaxed),
                skipped + slot.skipped.load(Ordering::Relaxed),
            )
        })
    }

    fn any_requested(&self) -> bool {
        self.slots
            .iter()
            .any(|s| s.requested.load(Ordering::Acquire))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The sources the worker serves: those of the newest world asked for.
type Current<S, T> = Arc<Mutex<Option<Arc<Sources<S, T>>>>>;

/// How a service plans the sources of a world.
type Planner<S> = dyn Fn(&WorldGeneration) -> Vec<S> + Send + Sync;

/// The adapters' handle on one worker thread; dropping it stops the thread and waits for it.
pub struct Service<S, T> {
    /// The sources of the newest world asked for: the only ones the worker serves.
    current: Current<S, T>,
    /// Their world's generation number, which the worker reads without the lock.
    newest: Arc<AtomicU64>,
    plan: Box<Planner<S>>,
    wake: crossbeam_channel::Sender<()>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl<S: Send + Sync + 'static, T: Default + Clone + Send + 'static> Service<S, T> {
    /// Starts the thread (named `name`, at niceness `nice`); `make` builds its worker there,
    /// which holds nothing until the first request. `plan` gives the sources of a world;
    /// `idle_release` (zero: never) is how long resources outlive the last request.
    pub fn start<W: Work<Spec = S, Out = T>>(
        name: &str,
        idle_release: Duration,
        nice: u8,
        plan: impl Fn(&WorldGeneration) -> Vec<S> + Send + Sync + 'static,
        make: impl FnOnce() -> W + Send + 'static,
    ) -> std::io::Result<Self> {
        let (wake, woken) = crossbeam_channel::bounded(1);
        let current = Arc::new(Mutex::new(None));
        let newest = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let serving = Serving {
            name: name.to_string(),
            current: current.clone(),
            newest: newest.clone(),
            woken,
            stop: stop.clone(),
            idle_release,
        };
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                // Before anything is made: the GL driver's threads inherit it.
                if let Err(e) = crate::sim::give_way(nice) {
                    log::warn!("{}: could not lower to niceness {nice}: {e}", serving.name);
                }
                serving.run(make())
            })?;
        Ok(Self {
            current,
            newest,
            plan: Box::new(plan),
            wake,
            stop,
            thread: Some(thread),
        })
    }

    /// The sources of `world`, planned once per world generation and shared by whoever asks.
    /// Asking for a newer world makes its sources the ones served (the older world's
    /// resources go); an older world's sources are served no more.
    pub fn sources(&self, world: &Arc<WorldGeneration>) -> Arc<Sources<S, T>> {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sources) = current.as_ref()
            && sources.world.number == world.number
        {
            return sources.clone();
        }
        let sources = Arc::new(Sources::new(
            world.clone(),
            (self.plan)(world),
            self.wake.clone(),
        ));
        if current
            .as_ref()
            .is_none_or(|c| c.world.number < world.number)
        {
            *current = Some(sources.clone());
            self.newest.store(world.number, Ordering::Release);
            let _ = self.wake.try_send(());
        }
        sources
    }
}

impl<S, T> Drop for Service<S, T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.wake.try_send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the worker thread holds of its service.
struct Serving<S, T> {
    name: String,
    current: Current<S, T>,
    newest: Arc<AtomicU64>,
    woken: crossbeam_channel::Receiver<()>,
    stop: Arc<AtomicBool>,
    idle_release: Duration,
}

/// What the worker holds between rounds.
struct Held<S, T> {
    /// The sources the worker has loaded.
    loaded: Option<Arc<Sources<S, T>>>,
    /// Whether it holds anything at all (a GL context too).
    holding: bool,
    last_request: Instant,
    /// The last world whose sources could not be loaded (not tried again), and whether
    /// that was said already.
    failed: Option<u64>,
    said: bool,
    /// The state the next output is made of, and whether it is the newest as read this round.
    state: StateSnapshot,
    holds_newest: bool,
}

impl<S, T: Clone> Serving<S, T> {
    fn run<W: Work<Spec = S, Out = T>>(self, mut worker: W) {
        let mut held = Held {
            loaded: None,
            holding: false,
            last_request: Instant::now(),
            failed: None,
            said: false,
            state: StateSnapshot::default(),
            holds_newest: false,
        };
        while !self.stop.load(Ordering::Relaxed) {
            let _ = self.woken.recv_timeout(IDLE_POLL);
            let round = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.round(&mut worker, &mut held)
            }));
            if round.is_err() {
                // Whatever it held may be broken: it starts over from nothing at the next
                // request (the panic itself is in the log).
                log::error!("{}: starting over after a failure", self.name);
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    worker.unload();
                    worker.release();
                }));
                held.loaded = None;
                held.holding = false;
            }
        }
        worker.unload();
        worker.release();
    }

    /// One wake-up: drop what belongs to a world gone, serve what was asked for, or release
    /// everything after the idle time.
    fn round<W: Work<Spec = S, Out = T>>(&self, worker: &mut W, held: &mut Held<S, T>) {
        let current = self
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        // What was made for a world that is gone goes at once, with that world.
        if let Some(old) = &held.loaded
            && !current.as_ref().is_some_and(|c| Arc::ptr_eq(c, old))
        {
            worker.unload();
            held.loaded = None;
            crate::census::return_freed_memory();
        }
        let Some(sources) = current.filter(|c| c.any_requested()) else {
            let idle =
                !self.idle_release.is_zero() && held.last_request.elapsed() >= self.idle_release;
            if held.holding && idle {
                worker.unload();
                worker.release();
                held.loaded = None;
                held.holding = false;
                crate::census::return_freed_memory();
                log::info!(
                    "{}: resources released after {:.0} s without a request",
                    self.name,
                    self.idle_release.as_secs_f64()
                );
            }
            return;
        };
        held.last_request = Instant::now();
        if held.loaded.is_none() {
            if held.failed == Some(sources.world.number) {
                clear_requests(&sources);
                return;
            }
            held.holding = true;
            if let Err(e) = worker.load(&sources) {
                // Said once; a later world is tried again (and said again only if it works
                // in between).
                if !held.said {
                    log::error!("{} are off: {e}", self.name);
                    held.said = true;
                }
                held.failed = Some(sources.world.number);
                clear_requests(&sources);
                return;
            }
            held.said = false;
            held.loaded = Some(sources.clone());
        }
        worker.begin();
        held.state.fit(&sources.world.layout());
        held.holds_newest = false;
        for (index, slot) in sources.slots.iter().enumerate() {
            // A newer world's adapters read other slots: what is made for this one would
            // go unread, and this world (its model too) goes at the next round instead.
            if self.newest.load(Ordering::Acquire) != sources.world.number {
                return;
            }
            // Taken before making: a request that comes meanwhile asks for the next one.
            let Some((asked, answers)) = sources.take_request(index, &mut held.state) else {
                continue;
            };
            match asked {
                Asked::Given => held.holds_newest = false,
                Asked::Newest if !held.holds_newest => {
                    sources.world.latest_state(&mut held.state);
                    held.holds_newest = true;
                }
                Asked::Newest => {}
            }
            match worker.make(index, &held.state) {
                Ok(out) => slot.put(out),
                Err(e) => log::error!("{} {index}: {e}", self.name),
            }
            slot.answered.store(answers, Ordering::Release);
        }
    }
}

fn clear_requests<S, T>(sources: &Sources<S, T>) {
    for slot in &sources.slots {
        slot.requested.store(false, Ordering::Release);
        slot.answered
            .store(slot.requests.load(Ordering::Acquire), Ordering::Release);
    }
}
