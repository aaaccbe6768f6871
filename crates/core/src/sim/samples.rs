//! The samples the topics are made of, taken on the simulation clock. The reader (the
//! sampler) sets the rates of up to `MAX_SCHEDULES` schedules; after each step the physics
//! thread marks which schedules fall due at this step's sim time (each at the first step at
//! or after each multiple of its period, as Gazebo updates its sensors) and, when any does, writes
//! the whole state with that mask into the next slot of a ring. The reader takes the samples
//! in order and makes exactly the messages they are due for, stamped with their sim time.
//!
//! A full ring either holds the physics thread back until the reader has room (lossless:
//! fast, stepped and recorded runs, so every sample is made) or takes the oldest slot, whose
//! lost schedules are counted (real time: the clock does not wait for a slow sink). Nothing
//! on the physics thread's side allocates, locks or formats.
use super::state::{StateLayout, StateSnapshot, read_state, write_state};
use mujoco_rs::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How many distinct rates one world's outputs can sample at.
pub const MAX_SCHEDULES: usize = 64;

/// Samples the ring holds before the reader must take one.
const CAPACITY: usize = 256;

/// Samples waiting before the writer wakes the reader. Waking a parked thread costs the
/// physics thread a system call (and on a VM an interrupt to another CPU), several
/// microseconds: the reader looks on its own every `READER_POLL` instead, and is woken
/// only when samples pile up (a fast run) or a step request waits for them.
const WAKE_AT: u64 = 32;

/// How often the reader looks for samples while the run goes.
pub const READER_POLL: Duration = Duration::from_millis(1);

/// The longest the physics thread waits for a lossless reader that took nothing: then the
/// reader is taken to be stuck, and the sample is dropped and counted.
const LOSSLESS_PATIENCE: Duration = Duration::from_secs(2);

struct Slot {
    /// Odd while being written (a seqlock).
    sequence: AtomicU64,
    /// Which sample this slot holds (its number since the ring was made).
    number: AtomicU64,
    /// Which schedules it is due for, a bit each.
    mask: AtomicU64,
    values: Box<[AtomicU64]>,
}

/// One world's ring of samples, shared by the physics thread (writer) and the sampler
/// (its one reader).
pub struct SampleRing {
    layout: StateLayout,
    slots: Box<[Slot]>,
    /// Samples written so far (only the writer stores it).
    head: AtomicU64,
    /// Samples taken so far (only the reader stores it).
    tail: AtomicU64,
    /// Samples whose messages are out (the reader stores it after sending them).
    done: AtomicU64,
    /// Each schedule's rate in Hz of sim time, as f64 bits (0: unused).
    rates: [AtomicU64; MAX_SCHEDULES],
    /// Bumped by the reader after a change of `rates`.
    rates_version: AtomicU64,
    /// Samples of each schedule that a full ring lost.
    dropped: [AtomicU64; MAX_SCHEDULES],
    /// Samples a full ring lost (each once).
    lost: AtomicU64,
    /// A reader is attached (nothing is sampled without one).
    attached: AtomicBool,
    /// The reader asks for the state as it is now (it has just attached).
    wants_current: AtomicBool,
    /// The reader wants every sample even if the physics thread must wait for it.
    reader_lossless: AtomicBool,
    reader: OnceLock<Thread>,
}

impl SampleRing {
    pub fn new(layout: StateLayout) -> Self {
        let slot = || Slot {
            sequence: AtomicU64::new(0),
            number: AtomicU64::new(u64::MAX),
            mask: AtomicU64::new(0),
            values: (0..layout.len()).map(|_| AtomicU64::new(0)).collect(),
        };
        Self {
            layout,
            slots: (0..CAPACITY).map(|_| slot()).collect(),
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            done: AtomicU64::new(0),
            rates: [const { AtomicU64::new(0) }; MAX_SCHEDULES],
            rates_version: AtomicU64::new(0),
            dropped: [const { AtomicU64::new(0) }; MAX_SCHEDULES],
            lost: AtomicU64::new(0),
            attached: AtomicBool::new(false),
            wants_current: AtomicBool::new(false),
            reader_lossless: AtomicBool::new(false),
            reader: OnceLock::new(),
        }
    }

    pub fn layout(&self) -> &StateLayout {
        &self.layout
    }

    /// Reader: attaches the calling thread, which the writer wakes after each sample. The
    /// samples start with the state as it is now. The ring has one reader for its life.
    pub fn attach(self: &Arc<Self>) -> Attachment {
        let _ = self.reader.set(std::thread::current());
        let head = self.head.load(Ordering::Acquire);
        self.tail.store(head, Ordering::Release);
        self.done.store(head, Ordering::Release);
        self.wants_current.store(true, Ordering::Release);
        self.attached.store(true, Ordering::Release);
        Attachment(self.clone())
    }

    /// Reader: sets the rates, one per schedule (at most `MAX_SCHEDULES`; 0: unused).
    pub fn set_rates(&self, rates: &[f64]) {
        for (k, cell) in self.rates.iter().enumerate() {
            let hz = rates
                .get(k)
                .copied()
                .filter(|hz| hz.is_finite() && *hz > 0.0);
            cell.store(hz.unwrap_or(0.0).to_bits(), Ordering::Relaxed);
        }
        self.rates_version.fetch_add(1, Ordering::Release);
    }

    /// Reader: whether every sample must reach it, the writer waiting when the ring is full
    /// (a recording is made of them).
    pub fn set_lossless(&self, lossless: bool) {
        self.reader_lossless.store(lossless, Ordering::Relaxed);
    }

    /// Samples a full ring lost so far, whatever they were due for.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// Samples of schedule `schedule` lost so far.
    pub fn dropped(&self, schedule: usize) -> u64 {
        self.dropped
            .get(schedule)
            .map_or(0, |d| d.load(Ordering::Relaxed))
    }

    /// Reader: the messages of every sample taken so far are out.
    pub fn mark_done(&self) {
        self.done
            .store(self.tail.load(Ordering::Relaxed), Ordering::Release);
    }

    /// Whether every sample written has been taken.
    pub fn is_empty(&self) -> bool {
        self.tail.load(Ordering::Acquire) == self.head.load(Ordering::Acquire)
    }

    /// Reader: takes the oldest sample into `out`; its mask of due schedules, None when
    /// there is none. Samples a full ring lost are skipped (the writer counted them).
    pub fn take(&self, out: &mut StateSnapshot) -> Option<u64> {
        out.fit(&self.layout);
        loop {
            let tail = self.tail.load(Ordering::Relaxed);
            let head = self.head.load(Ordering::Acquire);
            if tail == head {
                return None;
            }
            // Lapped: the oldest samples are gone, go on from the oldest still there.
            let oldest = head.saturating_sub(CAPACITY as u64);
            let number = tail.max(oldest);
            let slot = &self.slots[(number % CAPACITY as u64) as usize];
            let before = slot.sequence.load(Ordering::Acquire);
            let whole = before.is_multiple_of(2) && slot.number.load(Ordering::Relaxed) == number;
            let mask = slot.mask.load(Ordering::Relaxed);
            if whole {
                read_state(&slot.values, out);
            }
            fence(Ordering::Acquire);
            let kept = whole && slot.sequence.load(Ordering::Relaxed) == before;
            self.tail.store(number + 1, Ordering::Release);
            if kept {
                return Some(mask);
            }
        }
    }

    fn wake_reader(&self) {
        if let Some(reader) = self.reader.get() {
            reader.unpark();
        }
    }
}

/// The reader's hold on a ring; dropping it detaches the reader (the physics thread stops
/// sampling, and never waits for it again).
pub struct Attachment(Arc<SampleRing>);

impl Attachment {
    pub fn ring(&self) -> &Arc<SampleRing> {
        &self.0
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        self.0.attached.store(false, Ordering::Release);
    }
}

/// The physics thread's side of sampling: when each schedule is next due, and the masks it
/// wrote (to count what a full ring loses). Made with each world, so nothing is allocated
/// per step.
pub(super) struct SampleClock {
    ring: Arc<SampleRing>,
    rates: [f64; MAX_SCHEDULES],
    /// How many schedules from the first are looked at (past them every rate is 0).
    used: usize,
    /// Sim time at which each schedule is next due.
    next: [f64; MAX_SCHEDULES],
    rates_version: u64,
    /// Sim time of the last state looked at (a reset or a load sends it back).
    last_time: f64,
    /// A thousandth of a step: a schedule falls due at the first step at or after its time,
    /// whatever the rounding of the accumulated sim time.
    slack: f64,
    masks: Box<[u64]>,
}

impl SampleClock {
    pub(super) fn new(ring: Arc<SampleRing>, timestep: f64) -> Self {
        Self {
            ring,
            rates: [0.0; MAX_SCHEDULES],
            used: 0,
            next: [0.0; MAX_SCHEDULES],
            rates_version: u64::MAX,
            last_time: f64::NEG_INFINITY,
            slack: 1e-3 * timestep,
            masks: vec![0; CAPACITY].into_boxed_slice(),
        }
    }

    /// After a step: samples the state when a schedule falls due. `lossless`: the run holds
    /// for the reader (fast and stepped runs) rather than lose a sample.
    pub(super) fn after_step(&mut self, data: &MjData<Arc<MjModel>>, step: u64, lossless: bool) {
        let ring = &*self.ring;
        if !ring.attached.load(Ordering::Acquire) {
            return;
        }
        let mask = self.due(data.time());
        if mask != 0 {
            self.write(data, step, mask, lossless);
        }
    }

    /// Whether the reader has sent out every sample written (or there is no reader); if
    /// not, it is woken to do so.
    pub(super) fn drained(&self) -> bool {
        let ring = &*self.ring;
        let drained = !ring.attached.load(Ordering::Acquire)
            || ring.done.load(Ordering::Acquire) >= ring.head.load(Ordering::Relaxed);
        if !drained {
            ring.wake_reader();
        }
        drained
    }

    /// Samples the state as it is now if the reader asked for it (it attached) or the state
    /// changed without a step (a reset, a keyframe): what is due at its time.
    pub(super) fn current(&mut self, data: &MjData<Arc<MjModel>>, step: u64, changed: bool) {
        let ring = &*self.ring;
        if !ring.attached.load(Ordering::Acquire) {
            return;
        }
        if ring.wants_current.swap(false, Ordering::AcqRel) || changed {
            let mask = self.due(data.time());
            if mask != 0 {
                self.write(data, step, mask, true);
            }
        }
    }

    /// The schedules due at sim time `time`, each moved on to its next time.
    fn due(&mut self, time: f64) -> u64 {
        let version = self.ring.rates_version.load(Ordering::Acquire);
        let back = time < self.last_time;
        if version != self.rates_version {
            self.rates_version = version;
            self.take_rates(time);
        } else if back {
            self.anchor(time);
        }
        self.last_time = time;
        let mut mask = 0;
        for k in 0..self.used {
            let hz = self.rates[k];
            if hz > 0.0 && time >= self.next[k] - self.slack {
                mask |= 1 << k;
                self.next[k] = (((time + self.slack) * hz).floor() + 1.0) / hz;
            }
        }
        mask
    }

    fn take_rates(&mut self, time: f64) {
        for (rate, cell) in self.rates.iter_mut().zip(&self.ring.rates) {
            *rate = f64::from_bits(cell.load(Ordering::Relaxed));
        }
        self.used = self
            .rates
            .iter()
            .rposition(|hz| *hz > 0.0)
            .map_or(0, |k| k + 1);
        self.anchor(time);
    }

    /// Each schedule next due at the first multiple of its period at or after `time`.
    fn anchor(&mut self, time: f64) {
        for (next, hz) in self.next.iter_mut().zip(&self.rates) {
            if *hz > 0.0 {
                *next = ((time - self.slack) * hz).ceil() / hz;
            }
        }
    }

    fn write(&mut self, data: &MjData<Arc<MjModel>>, step: u64, mask: u64, lossless: bool) {
        let ring = &*self.ring;
        let head = ring.head.load(Ordering::Relaxed);
        let lossless = lossless || ring.reader_lossless.load(Ordering::Relaxed);
        let index = (head % CAPACITY as u64) as usize;
        if head - ring.tail.load(Ordering::Acquire) >= CAPACITY as u64
            && !(lossless && self.wait_for_room(head))
        {
            self.count_lost(index);
        }
        let slot = &ring.slots[index];
        let sequence = slot.sequence.load(Ordering::Relaxed);
        slot.sequence.store(sequence + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        slot.number.store(head, Ordering::Relaxed);
        slot.mask.store(mask, Ordering::Relaxed);
        write_state(&slot.values, &ring.layout, data, step);
        slot.sequence.store(sequence + 2, Ordering::Release);
        self.masks[index] = mask;
        ring.head.store(head + 1, Ordering::Release);
        if head + 1 - ring.tail.load(Ordering::Relaxed) >= WAKE_AT {
            ring.wake_reader();
        }
    }

    /// Waits until the reader has taken a sample; false when it detached or took nothing
    /// for `LOSSLESS_PATIENCE`.
    fn wait_for_room(&self, head: u64) -> bool {
        let ring = &*self.ring;
        let since = Instant::now();
        let mut spins = 0u32;
        while head - ring.tail.load(Ordering::Acquire) >= CAPACITY as u64 {
            if !ring.attached.load(Ordering::Acquire) || since.elapsed() > LOSSLESS_PATIENCE {
                return false;
            }
            ring.wake_reader();
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        true
    }

    /// The sample in slot `index`, about to be overwritten, was never taken: its schedules
    /// lost one.
    fn count_lost(&self, index: usize) {
        self.ring.lost.fetch_add(1, Ordering::Relaxed);
        let mut mask = self.masks[index];
        while mask != 0 {
            let k = mask.trailing_zeros() as usize;
            self.ring.dropped[k].fetch_add(1, Ordering::Relaxed);
            mask &= mask - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PENDULUM: &str = r#"<mujoco><option timestep="0.002"/><worldbody>
        <body><joint type="hinge" axis="0 1 0"/><geom size="0.1" pos="0 0 -0.5"/></body>
        </worldbody></mujoco>"#;

    fn world() -> (Arc<SampleRing>, MjData<Arc<MjModel>>) {
        let model = Arc::new(MjModel::from_xml_string(PENDULUM).unwrap());
        let ring = Arc::new(SampleRing::new(StateLayout::of(&model)));
        (ring, MjData::new(model))
    }

    /// Steps `steps` times, sampling after each; the times of the samples taken.
    fn run(clock: &mut SampleClock, data: &mut MjData<Arc<MjModel>>, steps: u64, lossless: bool) {
        for step in 1..=steps {
            data.step();
            clock.after_step(data, step, lossless);
        }
    }

    fn taken(ring: &SampleRing) -> Vec<(f64, u64)> {
        let mut out = StateSnapshot::default();
        std::iter::from_fn(|| ring.take(&mut out).map(|mask| (out.time, mask))).collect()
    }

    #[test]
    fn schedules_fall_due_at_the_first_step_at_or_after_their_time_and_count_rate_times_seconds() {
        let (ring, mut data) = world();
        let _reader = ring.attach();
        ring.set_rates(&[100.0, 30.0, 1000.0]);
        let mut clock = SampleClock::new(ring.clone(), 0.002);
        clock.current(&data, 0, false);
        run(&mut clock, &mut data, 200, true); // 0.4 s, within the ring
        let samples = taken(&ring);
        let count = |bit: u64| samples.iter().filter(|(_, m)| m & bit != 0).count();
        // Rate times seconds, plus the sample at 0.
        assert_eq!(count(1), 41);
        assert_eq!(count(2), 13); // 30 Hz: 0, 0.034, 0.068, 0.1, ..., 0.4
        assert_eq!(count(4), 201, "above the step rate: every step");
        let at_100: Vec<f64> = samples
            .iter()
            .filter(|(_, m)| m & 1 != 0)
            .map(|s| s.0)
            .collect();
        for (n, time) in at_100.iter().enumerate() {
            assert!(
                (time - n as f64 * 0.01).abs() < 1e-9,
                "sample {n} at {time}"
            );
        }
    }

    #[test]
    fn a_full_ring_loses_its_oldest_samples_and_counts_them_unless_lossless() {
        let (ring, mut data) = world();
        let _reader = ring.attach();
        ring.set_rates(&[500.0, 250.0]);
        let mut clock = SampleClock::new(ring.clone(), 0.002);
        run(&mut clock, &mut data, 300, false);
        let samples = taken(&ring);
        assert_eq!(samples.len(), CAPACITY, "the newest ring's worth");
        assert_eq!(ring.dropped(0), 300 - CAPACITY as u64);
        assert_eq!(ring.dropped(1), (300 - CAPACITY as u64) / 2);
        assert!(
            (samples.last().unwrap().0 - 0.6).abs() < 1e-9,
            "the newest is kept"
        );
    }

    #[test]
    fn a_lossless_writer_waits_for_the_reader_and_nothing_is_lost() {
        let (ring, mut data) = world();
        let reader = ring.attach();
        ring.set_rates(&[500.0]);
        let mut clock = SampleClock::new(ring.clone(), 0.002);
        let reading = std::thread::spawn(move || {
            let ring = reader.ring().clone();
            let mut out = StateSnapshot::default();
            let mut times = Vec::new();
            while times.len() < 1000 {
                match ring.take(&mut out) {
                    Some(_) => times.push(out.time),
                    None => std::thread::sleep(Duration::from_micros(200)),
                }
            }
            times
        });
        run(&mut clock, &mut data, 1000, true);
        let times = reading.join().unwrap();
        assert_eq!(ring.dropped(0), 0);
        for (n, time) in times.iter().enumerate() {
            assert!(
                (time - (n + 1) as f64 * 0.002).abs() < 1e-9,
                "in order, none missing"
            );
        }
    }

    #[test]
    fn nothing_is_sampled_without_a_reader_and_a_reset_starts_the_schedules_again() {
        let (ring, mut data) = world();
        ring.set_rates(&[100.0]);
        let mut clock = SampleClock::new(ring.clone(), 0.002);
        run(&mut clock, &mut data, 10, true);
        let reader = ring.attach();
        assert!(taken(&ring).is_empty(), "no reader, no samples");
        data.reset();
        clock.current(&data, 0, true);
        run(&mut clock, &mut data, 10, true);
        let times: Vec<f64> = taken(&ring).iter().map(|s| s.0).collect();
        assert_eq!(times.len(), 3);
        assert!((times[0]).abs() < 1e-12 && (times[1] - 0.01).abs() < 1e-9);
        drop(reader);
        run(&mut clock, &mut data, 10, true);
        assert!(taken(&ring).is_empty(), "detached: nothing more");
    }
}
