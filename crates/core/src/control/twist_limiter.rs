//! The limits a mobile base puts on the twist it follows, applied once per physics step:
//! the jerk (the change of the last step's velocity change), then the acceleration, then the
//! velocity, each clamped to its bounds. This is the order and arithmetic of ros2_control's
//! diff_drive_controller and Gazebo's DiffDrive, so a base limited there moves alike here.
use crate::config::{AxisLimits, Bounds, TwistLimits};

/// A bound that is not a number, or a minimum above its maximum; the text names the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitError {
    #[error("limits.{axis}.{what}: {value} is not a finite number")]
    NotFinite {
        axis: &'static str,
        what: &'static str,
        value: f64,
    },
    #[error("limits.{axis}.{what}: min {min} is above max {max}")]
    MinAboveMax {
        axis: &'static str,
        what: &'static str,
        min: f64,
        max: f64,
    },
}

/// `[min, max]` with absent bounds as infinities.
fn range(bounds: &Bounds, axis: &'static str, what: &'static str) -> Result<[f64; 2], LimitError> {
    let check = |value: Option<f64>, unbounded: f64| match value {
        Some(value) if !value.is_finite() => Err(LimitError::NotFinite { axis, what, value }),
        Some(value) => Ok(value),
        None => Ok(unbounded),
    };
    let (min, max) = (
        check(bounds.min, f64::NEG_INFINITY)?,
        check(bounds.max, f64::INFINITY)?,
    );
    if min > max {
        return Err(LimitError::MinAboveMax {
            axis,
            what,
            min,
            max,
        });
    }
    Ok([min, max])
}

/// One axis: its bounds and the two velocities it last gave.
#[derive(Debug, Clone, Copy)]
struct Axis {
    velocity: [f64; 2],
    acceleration: [f64; 2],
    jerk: [f64; 2],
    /// The velocity given one and two steps ago.
    last: [f64; 2],
}

impl Axis {
    fn new(limits: &AxisLimits, axis: &'static str) -> Result<Self, LimitError> {
        Ok(Self {
            velocity: range(&limits.velocity, axis, "velocity")?,
            acceleration: range(&limits.acceleration, axis, "acceleration")?,
            jerk: range(&limits.jerk, axis, "jerk")?,
            last: [0.0; 2],
        })
    }

    fn limit(&mut self, wanted: f64, dt: f64) -> f64 {
        let [v0, v1] = self.last;
        let clamp = |x: f64, [lo, hi]: [f64; 2]| x.max(lo).min(hi);
        // The jerk bounds the change of the velocity's change over two steps (2 dt^2).
        let step = wanted - v0;
        let previous_step = v0 - v1;
        let jerk = self.jerk.map(|j| j * 2.0 * dt * dt);
        let after_jerk = v0 + previous_step + clamp(step - previous_step, jerk);
        let after_acceleration = v0 + clamp(after_jerk - v0, self.acceleration.map(|a| a * dt));
        let given = clamp(after_acceleration, self.velocity);
        self.last = [given, v0];
        given
    }
}

#[derive(Debug, Clone, Copy)]
pub struct TwistLimiter {
    linear_x: Axis,
    angular_z: Axis,
    /// Whether any bound is given (else the twist passes as it is).
    any: bool,
}

impl TwistLimiter {
    pub fn new(limits: &TwistLimits) -> Result<Self, LimitError> {
        let given = |axis: &AxisLimits| {
            [axis.velocity, axis.acceleration, axis.jerk]
                .iter()
                .any(Bounds::given)
        };
        Ok(Self {
            linear_x: Axis::new(&limits.linear_x, "linear_x")?,
            angular_z: Axis::new(&limits.angular_z, "angular_z")?,
            any: given(&limits.linear_x) || given(&limits.angular_z),
        })
    }

    /// The forward speed and turn rate to follow this step, `dt` seconds after the last.
    pub fn limit(&mut self, linear_x: f64, angular_z: f64, dt: f64) -> (f64, f64) {
        if !self.any {
            return (linear_x, angular_z);
        }
        (
            self.linear_x.limit(linear_x, dt),
            self.angular_z.limit(angular_z, dt),
        )
    }

    /// Forgets the history: the base stands (a halt, a reset, a restored snapshot).
    pub fn halt(&mut self) {
        self.linear_x.last = [0.0; 2];
        self.angular_z.last = [0.0; 2];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(linear_x: AxisLimits) -> TwistLimiter {
        TwistLimiter::new(&TwistLimits {
            linear_x,
            angular_z: AxisLimits::default(),
        })
        .unwrap()
    }

    #[test]
    fn acceleration_ramps_the_speed_and_velocity_caps_it() {
        let mut base = limiter(AxisLimits {
            velocity: Bounds::new(-0.3, 0.3),
            acceleration: Bounds::new(-2.0, 1.0),
            ..Default::default()
        });
        let dt = 0.01;
        let speeds: Vec<f64> = (0..50).map(|_| base.limit(1.0, 0.0, dt).0).collect();
        // 1 m/s^2 for 0.3 s, then held at 0.3 m/s.
        assert!((speeds[9] - 0.1).abs() < 1e-12, "{speeds:?}");
        assert!((speeds[29] - 0.3).abs() < 1e-12 && speeds[49] == 0.3);
        // Slowing down is bounded by min (2 m/s^2): 0.3 m/s to 0 in 0.15 s.
        let stopping: Vec<f64> = (0..20).map(|_| base.limit(0.0, 0.0, dt).0).collect();
        assert!((stopping[4] - 0.2).abs() < 1e-12 && stopping[14].abs() < 1e-12);
        // The turn rate has no bounds: as sent.
        assert_eq!(base.limit(0.0, 5.0, dt).1, 5.0);
    }

    #[test]
    fn jerk_bounds_the_change_of_acceleration() {
        let mut base = limiter(AxisLimits {
            jerk: Bounds::new(-10.0, 10.0),
            ..Default::default()
        });
        let dt = 0.01;
        // From rest, the velocity's step grows by at most 10 * 2 dt^2 = 0.002 each step.
        let speeds: Vec<f64> = (0..3).map(|_| base.limit(1.0, 0.0, dt).0).collect();
        let expected = [0.002, 0.006, 0.012];
        for (got, want) in speeds.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{speeds:?}");
        }
        base.halt();
        assert!((base.limit(1.0, 0.0, dt).0 - 0.002).abs() < 1e-12);
    }

    #[test]
    fn no_bounds_pass_the_twist_and_bad_bounds_name_their_field() {
        let mut free = TwistLimiter::new(&TwistLimits::default()).unwrap();
        assert_eq!(free.limit(3.0, -2.0, 0.002), (3.0, -2.0));
        let wrong = TwistLimiter::new(&TwistLimits {
            angular_z: AxisLimits {
                acceleration: Bounds::new(1.0, -1.0),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "limits.angular_z.acceleration: min 1 is above max -1"
        );
        let nan = TwistLimiter::new(&TwistLimits {
            linear_x: AxisLimits {
                jerk: Bounds {
                    min: None,
                    max: Some(f64::NAN),
                },
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            nan.to_string().contains("limits.linear_x.jerk: NaN"),
            "{nan}"
        );
    }
}
