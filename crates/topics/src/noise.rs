//! Sensor noise, with Gazebo's equations (gz-sensors' Gaussian noise model): per value,
//! `value + bias + drift + white`, where `white` ~ N(mean, stddev), `bias` is drawn once per
//! run from N(bias_mean, bias_stddev) with a random sign, and `drift` is a first-order
//! Gauss-Markov process over sim time, stepped by the time since the last value:
//! `drift = exp(-dt/tau) * drift + N(0, sqrt(-dynamic_bias_stddev^2 * tau / 2 *
//! expm1(-2 dt / tau)))` (its spread settles at `dynamic_bias_stddev * sqrt(tau / 2)`). A
//! quantized channel then rounds to a multiple of `precision`.
//!
//! Each channel draws from a generator of its own, seeded by `sim.seed` and the channel's
//! name, so a rerun draws the same and another seed differs. Noise is applied to the
//! messages only; the physics never sees it.
use super::Plan;
use super::sensors::Sensor;
use crate::config::{NoiseConfig, NoiseType};
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;
use rand_pcg::Pcg64Mcg;

/// The noise of one value of a sensor.
pub struct Noise {
    config: NoiseConfig,
    draws: Pcg64Mcg,
    bias: f64,
    drift: f64,
    /// Sim time of the last value (the drift steps from it).
    last_time: Option<f64>,
}

impl Noise {
    /// Noise of `config`, drawing from the stream `seed` and `name` select.
    pub fn new(config: NoiseConfig, seed: u64, name: &str) -> Self {
        let mut draws = Pcg64Mcg::seed_from_u64(seed ^ fnv1a(name));
        let mut bias = config.bias_mean + config.bias_stddev * normal(&mut draws);
        // Gazebo picks the bias's sign at random (bias_mean is meant to be positive).
        if draws.random::<f64>() < 0.5 {
            bias = -bias;
        }
        Self {
            config,
            draws,
            bias,
            drift: 0.0,
            last_time: None,
        }
    }

    /// `value` as the sensor reads it at sim time `time`.
    pub fn apply(&mut self, value: f64, time: f64) -> f64 {
        let c = &self.config;
        if c.kind == NoiseType::None {
            return value;
        }
        let white = c.mean + c.stddev * normal(&mut self.draws);
        let dt = self.last_time.map_or(0.0, |last| (time - last).max(0.0));
        self.last_time = Some(time);
        let tau = c.dynamic_bias_correlation_time;
        if c.dynamic_bias_stddev > 0.0 && tau > 0.0 && dt > 0.0 {
            let sigma = c.dynamic_bias_stddev;
            let step_stddev = (-sigma * sigma * tau / 2.0 * (-2.0 * dt / tau).exp_m1()).sqrt();
            self.drift = (-dt / tau).exp() * self.drift + step_stddev * normal(&mut self.draws);
        }
        let read = value + self.bias + self.drift + white;
        match c.kind {
            NoiseType::GaussianQuantized if c.precision > 0.0 => {
                (read / c.precision).round() * c.precision
            }
            _ => read,
        }
    }

    /// The variance a message's covariance carries for it (that of the white noise, as ROS
    /// drivers and Gazebo's bridge fill it).
    pub fn variance(&self) -> f64 {
        match self.config.kind {
            NoiseType::None => 0.0,
            _ => self.config.stddev * self.config.stddev,
        }
    }
}

/// The noise of each value of one sensor (three axes of a gyro, one of a rangefinder).
pub struct SensorNoise(Vec<Noise>);

impl SensorNoise {
    /// Applies each value's noise to `values` in place.
    pub fn apply(&mut self, values: &mut [f64], time: f64) {
        for (value, noise) in values.iter_mut().zip(self.0.iter_mut()) {
            *value = noise.apply(*value, time);
        }
    }

    /// Value `k`'s variance.
    pub fn variance(&self, k: usize) -> f64 {
        self.0.get(k).map_or(0.0, Noise::variance)
    }
}

/// A rangefinder's reading with value `k`'s noise: a hit is noisy, a miss (MuJoCo's -1)
/// stays a miss.
pub fn range(value: f64, noise: &mut Option<SensorNoise>, k: usize, time: f64) -> f64 {
    match noise.as_mut().and_then(|n| n.0.get_mut(k)) {
        Some(noise) if value >= 0.0 => noise.apply(value, time).max(0.0),
        _ => value,
    }
}

/// The noise of robot `robot`'s sensor `sensor` (its `dim` values): the config's for its
/// name, else the model's `noise` attribute; None when it has none.
pub fn of_sensor(plan: &Plan, robot: usize, sensor: Sensor, dim: usize) -> Option<SensorNoise> {
    let map = &plan.robots[robot];
    let name = map
        .sensors
        .iter()
        .find(|s| s.id == sensor.id)?
        .name
        .as_str();
    let from_model = plan.model.sensor_noise()[sensor.id];
    named(plan, robot, name, dim, from_model)
}

/// The noise of robot `robot`'s sensor called `name` in the config (a lidar, a camera) with
/// `dim` values, else white noise of `model_stddev`; None when that is none.
pub fn named(
    plan: &Plan,
    robot: usize,
    name: &str,
    dim: usize,
    model_stddev: f64,
) -> Option<SensorNoise> {
    let config = match plan.config.robots[robot].noise.get(name) {
        Some(config) => config.clone(),
        None => NoiseConfig::white(model_stddev),
    };
    if config.is_none() {
        return None;
    }
    let robot_name = &plan.robots[robot].name;
    let seed = plan.config.sim.seed;
    let axes = (0..dim)
        .map(|k| Noise::new(config.clone(), seed, &format!("{robot_name}/{name}/{k}")))
        .collect();
    Some(SensorNoise(axes))
}

/// The noise of a point sensor's east, north and up values (a GPS fix, its velocity), from
/// the config's `{name}/horizontal_{what}` (on east and north, drawn apart) and
/// `{name}/vertical_{what}` (on up), as Gazebo's NavSat sensor has them; None when neither
/// adds any.
pub fn horizontal_vertical(
    plan: &Plan,
    robot: usize,
    name: &str,
    what: &str,
) -> Option<SensorNoise> {
    let configs = &plan.config.robots[robot].noise;
    let channel = |side: &str| {
        let key = format!("{name}/{side}_{what}");
        let config = configs.get(&key).filter(|c| !c.is_none()).cloned();
        (key, config)
    };
    let (horizontal, vertical) = (channel("horizontal"), channel("vertical"));
    if horizontal.1.is_none() && vertical.1.is_none() {
        return None;
    }
    let robot_name = &plan.robots[robot].name;
    let seed = plan.config.sim.seed;
    let exact = NoiseConfig {
        kind: NoiseType::None,
        ..NoiseConfig::default()
    };
    let axes = [(&horizontal, 0), (&horizontal, 1), (&vertical, 0)]
        .into_iter()
        .map(|((key, config), k)| {
            let config = config.clone().unwrap_or_else(|| exact.clone());
            Noise::new(config, seed, &format!("{robot_name}/{key}/{k}"))
        })
        .collect();
    Some(SensorNoise(axes))
}

fn normal(draws: &mut Pcg64Mcg) -> f64 {
    draws.sample(StandardNormal)
}

/// FNV-1a of `text`: a hash that stays the same across runs, builds and machines.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(values: &[f64]) -> (f64, f64) {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt())
    }

    fn draws(config: NoiseConfig, seed: u64, name: &str, n: usize, dt: f64) -> Vec<f64> {
        let mut noise = Noise::new(config, seed, name);
        (0..n).map(|k| noise.apply(0.0, k as f64 * dt)).collect()
    }

    #[test]
    fn white_noise_has_the_mean_and_spread_it_is_given_and_a_seed_fixes_its_draws() {
        let config = NoiseConfig {
            mean: 0.5,
            stddev: 0.2,
            ..NoiseConfig::default()
        };
        let values = draws(config.clone(), 7, "imu/gyro/0", 40_000, 0.005);
        let (mean, stddev) = stats(&values);
        // Sampling errors: 0.2 / sqrt(40000) = 0.001 for the mean, ~0.0007 for the stddev.
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
        assert!((stddev - 0.2).abs() < 0.004, "{stddev}");
        assert_eq!(
            values,
            draws(config.clone(), 7, "imu/gyro/0", 40_000, 0.005)
        );
        assert_ne!(
            values,
            draws(config.clone(), 8, "imu/gyro/0", 40_000, 0.005)
        );
        assert_ne!(values, draws(config, 7, "imu/gyro/1", 40_000, 0.005));
    }

    #[test]
    fn the_bias_is_drawn_once_per_run_with_a_random_sign() {
        let config = NoiseConfig {
            bias_mean: 1.0,
            bias_stddev: 0.01,
            ..NoiseConfig::default()
        };
        let mut signs = [0, 0];
        for seed in 0..200 {
            let values = draws(config.clone(), seed, "ft/force/2", 50, 0.01);
            assert!(
                values.iter().all(|v| *v == values[0]),
                "constant within a run"
            );
            assert!((values[0].abs() - 1.0).abs() < 0.05);
            signs[usize::from(values[0] > 0.0)] += 1;
        }
        assert!(signs[0] > 60 && signs[1] > 60, "{signs:?}");
    }

    #[test]
    fn the_drift_is_gauss_markov_with_its_correlation_time_and_settled_spread() {
        let (sigma, tau, dt) = (0.1, 2.0, 0.01);
        let config = NoiseConfig {
            dynamic_bias_stddev: sigma,
            dynamic_bias_correlation_time: tau,
            ..NoiseConfig::default()
        };
        let values = draws(config, 3, "imu/accel/0", 400_000, dt);
        let settled = &values[(10.0 * tau / dt) as usize..];
        let (mean, stddev) = stats(settled);
        let expected = sigma * (tau / 2.0).sqrt();
        assert!(mean.abs() < 0.03, "{mean}");
        assert!(
            (stddev - expected).abs() < 0.15 * expected,
            "{stddev} vs {expected}"
        );
        // Autocorrelation at one correlation time: 1/e.
        let lag = (tau / dt) as usize;
        let pairs = settled.len() - lag;
        let product: f64 = (0..pairs)
            .map(|k| (settled[k] - mean) * (settled[k + lag] - mean))
            .sum();
        let correlation = product / pairs as f64 / (stddev * stddev);
        assert!(
            (correlation - (-1.0f64).exp()).abs() < 0.12,
            "{correlation}"
        );
    }

    #[test]
    fn a_quantized_channel_reads_multiples_of_its_precision() {
        let config = NoiseConfig {
            kind: NoiseType::GaussianQuantized,
            stddev: 0.05,
            precision: 0.01,
            ..NoiseConfig::default()
        };
        let mut noise = Noise::new(config, 1, "range/0");
        for k in 0..1000 {
            let read = noise.apply(1.234, k as f64 * 0.01);
            let steps = read / 0.01;
            assert!((steps - steps.round()).abs() < 1e-9, "{read}");
        }
        assert!(NoiseConfig::white(0.0).is_none());
        assert!(
            NoiseConfig {
                kind: NoiseType::None,
                stddev: 1.0,
                ..NoiseConfig::default()
            }
            .is_none()
        );
    }
}
