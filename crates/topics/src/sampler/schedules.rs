//! The sample schedules of one world's outputs: one per distinct rate, at most
//! `MAX_SCHEDULES`, each a bit of the masks the physics thread marks samples with. A live
//! rate change moves only the outputs it changes; the others keep their bit.
use crate::sim::{MAX_SCHEDULES, SampleRing};

/// An output taken at samples of the sim clock (one filled from the state, a camera).
pub trait Sampled {
    /// The rate it samples at in sim time (None: it is not sampled).
    fn sampled_hz(&self) -> Option<f64>;
    fn schedule(&self) -> Option<usize>;
    fn set_schedule(&mut self, schedule: Option<usize>);
    /// Its topic's name.
    fn name(&self) -> &str;
}

pub struct Schedules {
    /// Each schedule's rate in Hz of sim time (0: free).
    rates: [f64; MAX_SCHEDULES],
}

impl Schedules {
    pub fn new() -> Self {
        Self {
            rates: [0.0; MAX_SCHEDULES],
        }
    }

    /// Gives each sampled output a schedule of its rate, frees the ones none uses and hands
    /// the rates to `ring`.
    pub fn fit(&mut self, outputs: &mut [&mut dyn Sampled], ring: &SampleRing) {
        let mut used = [false; MAX_SCHEDULES];
        for output in outputs.iter() {
            if let (Some(k), Some(hz)) = (output.schedule(), output.sampled_hz())
                && self.rates[k] == hz
            {
                used[k] = true;
            }
        }
        for (rate, used) in self.rates.iter_mut().zip(used) {
            if !used {
                *rate = 0.0;
            }
        }
        for output in outputs.iter_mut() {
            let hz = output.sampled_hz().filter(|hz| hz.is_finite() && *hz > 0.0);
            let schedule = match hz {
                Some(hz) if output.schedule().is_some_and(|k| self.rates[k] == hz) => {
                    output.schedule()
                }
                Some(hz) => self.place(hz, output.name()),
                None => None,
            };
            output.set_schedule(schedule);
        }
        ring.set_rates(&self.rates);
    }

    /// The schedule at `hz`, taken from a free one if none is at it yet.
    fn place(&mut self, hz: f64, topic: &str) -> Option<usize> {
        if let Some(k) = self.rates.iter().position(|&rate| rate == hz) {
            return Some(k);
        }
        let free = self.rates.iter().position(|&rate| rate == 0.0);
        match free {
            Some(k) => self.rates[k] = hz,
            None => log::warn!(
                "{topic}: more than {MAX_SCHEDULES} distinct rates in one world; it is not sent"
            ),
        }
        free
    }
}
