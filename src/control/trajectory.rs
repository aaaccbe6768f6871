//! Joint trajectories sampled at physics rate: time-parameterised points, cubic Hermite
//! interpolation where the points carry velocities, linear otherwise. The first segment runs
//! from the position held when the trajectory starts.

#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    /// Robot-local actuator indices, one per trajectory joint.
    pub actuators: Vec<usize>,
    /// Seconds from the start, strictly increasing.
    pub times: Vec<f64>,
    /// `times.len() * actuators.len()` positions, point by point.
    pub positions: Vec<f64>,
    /// Same layout as positions, or empty.
    pub velocities: Vec<f64>,
}

/// Why a trajectory cannot be followed (checked on the physics thread too, so it carries
/// numbers only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TrajectoryError {
    #[error("a trajectory needs joints and at least one point")]
    Empty,
    #[error("{positions} positions for {points} points of {joints} joints")]
    PositionCount {
        positions: usize,
        points: usize,
        joints: usize,
    },
    #[error("velocities must be given for every point and joint, or not at all")]
    VelocityCount,
    #[error("NaN or infinite values")]
    NotFinite,
    #[error("time_from_start must be >= 0 and strictly increasing")]
    Times,
}

impl Trajectory {
    /// Checks shapes and values; returns a message naming the first problem.
    pub fn validate(&self) -> Result<(), TrajectoryError> {
        let n = self.actuators.len();
        if n == 0 || self.times.is_empty() {
            return Err(TrajectoryError::Empty);
        }
        if self.positions.len() != n * self.times.len() {
            return Err(TrajectoryError::PositionCount {
                positions: self.positions.len(),
                points: self.times.len(),
                joints: n,
            });
        }
        if !self.velocities.is_empty() && self.velocities.len() != self.positions.len() {
            return Err(TrajectoryError::VelocityCount);
        }
        if self
            .times
            .iter()
            .chain(&self.positions)
            .chain(&self.velocities)
            .any(|v| !v.is_finite())
        {
            return Err(TrajectoryError::NotFinite);
        }
        if self.times[0] < 0.0 || self.times.windows(2).any(|w| w[1] <= w[0]) {
            return Err(TrajectoryError::Times);
        }
        Ok(())
    }

    pub fn duration(&self) -> f64 {
        *self.times.last().unwrap_or(&0.0)
    }

    /// Writes position and velocity of joint `j` at time `t` (seconds from start), starting
    /// from `start` (position at t = 0, at rest).
    pub fn sample(&self, j: usize, t: f64, start: f64) -> (f64, f64) {
        let n = self.actuators.len();
        let k = self.times.partition_point(|time| *time <= t);
        if k >= self.times.len() {
            let last = self.times.len() - 1;
            return (self.positions[last * n + j], 0.0);
        }
        let (t0, p0, v0) = if k == 0 {
            (0.0, start, 0.0)
        } else {
            let v = if self.velocities.is_empty() {
                None
            } else {
                Some(self.velocities[(k - 1) * n + j])
            };
            (
                self.times[k - 1],
                self.positions[(k - 1) * n + j],
                v.unwrap_or(f64::NAN),
            )
        };
        let (t1, p1) = (self.times[k], self.positions[k * n + j]);
        let h = t1 - t0;
        if h <= 0.0 {
            return (p1, 0.0);
        }
        let s = ((t - t0) / h).clamp(0.0, 1.0);
        if self.velocities.is_empty() {
            return (p0 + (p1 - p0) * s, (p1 - p0) / h);
        }
        let v0 = if v0.is_nan() { 0.0 } else { v0 };
        let v1 = self.velocities[k * n + j];
        // Cubic Hermite basis.
        let (s2, s3) = (s * s, s * s * s);
        let pos = (2.0 * s3 - 3.0 * s2 + 1.0) * p0
            + (s3 - 2.0 * s2 + s) * h * v0
            + (-2.0 * s3 + 3.0 * s2) * p1
            + (s3 - s2) * h * v1;
        let vel = ((6.0 * s2 - 6.0 * s) * p0
            + (3.0 * s2 - 4.0 * s + 1.0) * h * v0
            + (-6.0 * s2 + 6.0 * s) * p1
            + (3.0 * s2 - 2.0 * s) * h * v1)
            / h;
        (pos, vel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_points(velocities: Vec<f64>) -> Trajectory {
        Trajectory {
            actuators: vec![0],
            times: vec![1.0, 2.0],
            positions: vec![1.0, 3.0],
            velocities,
        }
    }

    #[test]
    fn linear_and_hermite_pass_through_points() {
        let lin = two_points(vec![]);
        assert_eq!(lin.sample(0, 0.5, 0.0).0, 0.5, "from the start position");
        assert_eq!(lin.sample(0, 1.5, 0.0).0, 2.0);
        assert_eq!(lin.sample(0, 5.0, 0.0), (3.0, 0.0), "holds the last point");
        let herm = two_points(vec![0.0, 0.0]);
        assert!((herm.sample(0, 1.0, 0.0).0 - 1.0).abs() < 1e-12);
        assert!(
            (herm.sample(0, 1.5, 0.0).0 - 2.0).abs() < 1e-12,
            "symmetric midpoint"
        );
        assert!((herm.sample(0, 2.0 - 1e-9, 0.0).0 - 3.0).abs() < 1e-6);
        // From rest to rest a cubic leaves slowly: a quarter of the way in time covers
        // 3/16 - 2/64 = 5/32 of the distance (linear would cover 1/4), at velocity 9/8 * 2.
        let (p, v) = herm.sample(0, 1.25, 0.0);
        assert!((p - (1.0 + 2.0 * 5.0 / 32.0)).abs() < 1e-12, "{p}");
        assert!((v - 2.0 * 9.0 / 8.0).abs() < 1e-12, "{v}");
        // Given end velocities shape the curve: leaving at 4 units/s overshoots linear.
        let fast_start = two_points(vec![4.0, 0.0]);
        assert!(fast_start.sample(0, 1.25, 0.0).0 > 1.5 + 0.2);
    }

    #[test]
    fn validation_names_the_problem() {
        let mut t = two_points(vec![]);
        t.times = vec![1.0, 1.0];
        assert!(t.validate().unwrap_err().to_string().contains("increasing"));
        let mut t = two_points(vec![]);
        t.positions[1] = f64::NAN;
        assert!(t.validate().unwrap_err().to_string().contains("NaN"));
        let mut t = two_points(vec![]);
        t.positions.pop();
        assert!(t.validate().is_err());
    }
}
