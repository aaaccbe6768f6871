//! Live figures of the physics thread, written with atomics only (no lock, no allocation) and
//! read by any thread: steps, sim time, real-time factor, step time, overruns, and a
//! histogram of how late each paced step started.
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Lateness buckets of 1 us up to 20 ms; later starts land in the last bucket.
const BUCKETS: usize = 20_000;

pub struct LatenessHistogram {
    counts: Box<[AtomicU32]>,
}

impl Default for LatenessHistogram {
    fn default() -> Self {
        let mut counts: Box<[AtomicU32]> = (0..BUCKETS).map(|_| AtomicU32::new(0)).collect();
        // An optimized build allocates these zeroed: the physics thread's first count in each
        // millisecond of lateness (a page) faulted, right after the stall that made it late.
        super::memory::map_pages(&mut counts);
        Self { counts }
    }
}

impl LatenessHistogram {
    pub fn record(&self, lateness_ns: u64) {
        let bucket = ((lateness_ns / 1000) as usize).min(BUCKETS - 1);
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
    }

    pub fn clear(&self) {
        for c in self.counts.iter() {
            c.store(0, Ordering::Relaxed);
        }
    }

    pub fn count(&self) -> u64 {
        self.counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed) as u64)
            .sum()
    }

    /// The lateness (seconds, upper edge of its 1 us bucket) below which `fraction` of the
    /// recorded step starts fall.
    pub fn quantile(&self, fraction: f64) -> f64 {
        let counts: Vec<u64> = self
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed) as u64)
            .collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return 0.0;
        }
        let target = (fraction * total as f64).ceil() as u64;
        let mut seen = 0;
        for (bucket, count) in counts.iter().enumerate() {
            seen += count;
            if seen >= target {
                return (bucket + 1) as f64 * 1e-6;
            }
        }
        BUCKETS as f64 * 1e-6
    }
}

/// What the physics thread reports; see `SimStats` for the reader's copy.
#[derive(Default)]
pub struct LiveStats {
    pub steps: AtomicU64,
    pub sim_time_bits: AtomicU64,
    pub rtf_bits: AtomicU64,
    pub mean_step_ns: AtomicU64,
    pub max_step_ns: AtomicU64,
    /// Time spent in steps since start (all phases), for the mean over a whole run.
    pub busy_ns_total: AtomicU64,
    /// Of which inside MuJoCo's `mj_step` (the rest is the bridge's own work per step).
    pub mujoco_ns_total: AtomicU64,
    /// Times a step diverged (MuJoCo found a bad position, velocity or acceleration), and
    /// the last one: what (`divergence::Found`), at which degree of freedom, at what time.
    pub instabilities: AtomicU64,
    pub divergence_found: std::sync::atomic::AtomicU8,
    pub divergence_dof: std::sync::atomic::AtomicI64,
    pub divergence_time_bits: AtomicU64,
    /// Paced steps that started more than one period late.
    pub overruns: AtomicU64,
    /// Times a realtime run fell further behind than `sim.catch_up` and its schedule
    /// restarted from then, and the wall time let go so (the real-time factor drops by it
    /// instead of the run catching up in a burst).
    pub lag_resets: AtomicU64,
    pub let_go_ns: AtomicU64,
    /// Commands dropped because they were invalid (unknown id, NaN, ...).
    pub rejected_commands: AtomicU64,
    /// Commands dropped because the inbox (or the stamped-command buffer) was full.
    pub dropped_commands: AtomicU64,
    /// Commands from a source that does not drive their robot.
    pub ignored_commands: AtomicU64,
    /// Stamped commands that arrived after their step (applied at once).
    pub late_commands: AtomicU64,
    /// Operations refused (unknown names, bad values, wrong model, ...).
    pub refused_operations: AtomicU64,
    /// Commands whose world changed before they applied (dropped).
    pub stale_commands: AtomicU64,
    /// World changes swapped in, and the physics thread's time spent on the last one.
    pub world_changes: AtomicU64,
    pub last_change_ns: AtomicU64,
    /// Page faults the physics thread has taken (a fault in a step can wait on another
    /// thread; see `memory`), as of the last window.
    pub page_faults: AtomicU64,
    pub lateness: LatenessHistogram,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimStats {
    pub steps: u64,
    pub sim_time: f64,
    /// Simulated seconds per wall-clock second over the last window (about 0.5 s).
    pub real_time_factor: f64,
    /// Mean time of one step (all phases) over the last window.
    pub mean_step_time: f64,
    pub max_step_time: f64,
    /// Mean time of one step over the whole run.
    pub run_mean_step_time: f64,
    /// Seconds spent in steps since start (all phases), and of them inside `mj_step`.
    pub busy_time: f64,
    pub mujoco_time: f64,
    pub instabilities: u64,
    pub overruns: u64,
    pub lag_resets: u64,
    /// Seconds of wall time a realtime run let go rather than catch up.
    pub time_let_go: f64,
    pub rejected_commands: u64,
    pub dropped_commands: u64,
    pub ignored_commands: u64,
    pub late_commands: u64,
    pub refused_operations: u64,
    pub stale_commands: u64,
    pub world_changes: u64,
    /// Seconds the physics thread spent swapping in the last world change.
    pub last_change_time: f64,
    pub page_faults: u64,
}

impl LiveStats {
    pub fn snapshot(&self) -> SimStats {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        SimStats {
            steps: load(&self.steps),
            sim_time: f64::from_bits(load(&self.sim_time_bits)),
            real_time_factor: f64::from_bits(load(&self.rtf_bits)),
            mean_step_time: load(&self.mean_step_ns) as f64 * 1e-9,
            max_step_time: load(&self.max_step_ns) as f64 * 1e-9,
            run_mean_step_time: match load(&self.steps) {
                0 => 0.0,
                n => load(&self.busy_ns_total) as f64 * 1e-9 / n as f64,
            },
            busy_time: load(&self.busy_ns_total) as f64 * 1e-9,
            mujoco_time: load(&self.mujoco_ns_total) as f64 * 1e-9,
            instabilities: load(&self.instabilities),
            overruns: load(&self.overruns),
            lag_resets: load(&self.lag_resets),
            time_let_go: load(&self.let_go_ns) as f64 * 1e-9,
            rejected_commands: load(&self.rejected_commands),
            dropped_commands: load(&self.dropped_commands),
            ignored_commands: load(&self.ignored_commands),
            late_commands: load(&self.late_commands),
            refused_operations: load(&self.refused_operations),
            stale_commands: load(&self.stale_commands),
            world_changes: load(&self.world_changes),
            last_change_time: load(&self.last_change_ns) as f64 * 1e-9,
            page_faults: load(&self.page_faults),
        }
    }
}

/// Accumulates one window of figures inside the physics thread, then publishes them.
pub struct StatsWindow {
    start_wall_ns: u64,
    start_sim_time: f64,
    steps: u64,
    busy_ns: u64,
    max_ns: u64,
}

pub const WINDOW_NS: u64 = 500_000_000;

impl StatsWindow {
    pub fn new(now_ns: u64, sim_time: f64) -> Self {
        Self {
            start_wall_ns: now_ns,
            start_sim_time: sim_time,
            steps: 0,
            busy_ns: 0,
            max_ns: 0,
        }
    }

    pub fn record_step(&mut self, step_ns: u64) {
        self.steps += 1;
        self.busy_ns += step_ns;
        self.max_ns = self.max_ns.max(step_ns);
    }

    /// Publishes and restarts the window once it is old enough.
    pub fn maybe_publish(&mut self, stats: &LiveStats, now_ns: u64, sim_time: f64) {
        // Sim time set back (a reset, a keyframe, a snapshot) leaves no measure of this
        // window's pace: it starts again rather than print a negative factor.
        if sim_time < self.start_sim_time {
            *self = Self::new(now_ns, sim_time);
            return;
        }
        let elapsed = now_ns.saturating_sub(self.start_wall_ns);
        if elapsed < WINDOW_NS {
            return;
        }
        let rtf = (sim_time - self.start_sim_time) / (elapsed as f64 * 1e-9);
        stats.rtf_bits.store(rtf.to_bits(), Ordering::Relaxed);
        stats
            .page_faults
            .store(super::memory::thread_page_faults(), Ordering::Relaxed);
        if let Some(mean) = self.busy_ns.checked_div(self.steps) {
            stats.mean_step_ns.store(mean, Ordering::Relaxed);
            stats.max_step_ns.store(self.max_ns, Ordering::Relaxed);
        }
        *self = Self::new(now_ns, sim_time);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_across_a_reset_starts_again_instead_of_a_negative_factor() {
        let stats = LiveStats::default();
        let mut window = StatsWindow::new(0, 28.0);
        window.maybe_publish(&stats, WINDOW_NS, 28.5);
        assert_eq!(stats.snapshot().real_time_factor, 1.0);
        // A reset 0.2 s into the next window: sim time 28.7 -> 0.0, then 0.3 s more.
        window.maybe_publish(&stats, WINDOW_NS + 200_000_000, 0.0);
        window.maybe_publish(&stats, 2 * WINDOW_NS, 0.3);
        assert_eq!(stats.snapshot().real_time_factor, 1.0);
        window.maybe_publish(&stats, 2 * WINDOW_NS + 200_000_000, 0.5);
        assert!((stats.snapshot().real_time_factor - 0.5 / 0.5).abs() < 1e-9);
    }
}
