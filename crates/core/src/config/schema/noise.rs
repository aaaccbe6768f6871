//! A sensor channel's noise, as Gazebo's sensors model it: white Gaussian noise, a constant
//! bias drawn once per run, a bias drifting as a first-order Gauss-Markov process in sim
//! time, and quantization. Given per sensor under a robot's `noise:` (by the sensor's name in
//! the robot's model); it wins over the model's own `noise` attribute (a white-noise stddev).
use serde::Deserialize;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseType {
    /// The value as simulated.
    None,
    #[default]
    Gaussian,
    /// Gaussian, then rounded to a multiple of `precision`.
    GaussianQuantized,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseConfig {
    #[serde(default, rename = "type")]
    pub kind: NoiseType,
    /// Mean of the white noise.
    #[serde(default)]
    pub mean: f64,
    /// Standard deviation of the white noise.
    #[serde(default)]
    pub stddev: f64,
    /// The constant bias is drawn once per run from N(bias_mean, bias_stddev), its sign at
    /// random (as Gazebo draws it).
    #[serde(default)]
    pub bias_mean: f64,
    #[serde(default)]
    pub bias_stddev: f64,
    /// Standard deviation of the drifting bias, and its correlation time in seconds.
    #[serde(default)]
    pub dynamic_bias_stddev: f64,
    #[serde(default)]
    pub dynamic_bias_correlation_time: f64,
    /// The quantization step of `gaussian_quantized` (0: none).
    #[serde(default)]
    pub precision: f64,
}

impl NoiseConfig {
    /// White noise of `stddev` alone (MuJoCo's `noise` attribute).
    pub fn white(stddev: f64) -> Self {
        Self {
            stddev,
            ..Self::default()
        }
    }

    /// Whether it changes nothing.
    pub fn is_none(&self) -> bool {
        self.kind == NoiseType::None
            || [
                self.mean,
                self.stddev,
                self.bias_mean,
                self.bias_stddev,
                self.dynamic_bias_stddev,
            ]
            .iter()
            .all(|v| *v == 0.0)
                && !(self.kind == NoiseType::GaussianQuantized && self.precision > 0.0)
    }

    /// The first field that no noise model can take, with why.
    pub fn problem(&self) -> Option<(&'static str, &'static str)> {
        let fields = [
            ("mean", self.mean, false),
            ("stddev", self.stddev, true),
            ("bias_mean", self.bias_mean, false),
            ("bias_stddev", self.bias_stddev, true),
            ("dynamic_bias_stddev", self.dynamic_bias_stddev, true),
            (
                "dynamic_bias_correlation_time",
                self.dynamic_bias_correlation_time,
                true,
            ),
            ("precision", self.precision, true),
        ];
        for (name, value, at_least_zero) in fields {
            if !value.is_finite() {
                return Some((name, "must be a finite number"));
            }
            if at_least_zero && value < 0.0 {
                return Some((name, "must be 0 or more"));
            }
        }
        if self.dynamic_bias_stddev > 0.0 && self.dynamic_bias_correlation_time <= 0.0 {
            return Some((
                "dynamic_bias_correlation_time",
                "must be more than 0 when dynamic_bias_stddev is",
            ));
        }
        None
    }
}
