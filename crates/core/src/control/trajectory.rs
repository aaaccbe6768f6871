//! Joint trajectories sampled at physics rate: time-parameterised points, interpolated as
//! joint_trajectory_controller does: linear from positions, cubic where the points carry
//! velocities, quintic where they carry accelerations too. The first segment runs from the
//! position held when the trajectory starts, at rest.

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trajectory {
    /// Robot-local actuator indices, one per trajectory joint.
    pub actuators: Vec<usize>,
    /// Seconds from the start, strictly increasing.
    pub times: Vec<f64>,
    /// `times.len() * actuators.len()` positions, point by point.
    pub positions: Vec<f64>,
    /// Same layout as positions, or empty.
    pub velocities: Vec<f64>,
    /// Same layout as positions (and only with velocities), or empty.
    pub accelerations: Vec<f64>,
    /// Starts from the setpoints of the trajectory it replaces rather than from the measured
    /// positions (joint_trajectory_controller's `open_loop_control`).
    pub open_loop: bool,
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
    #[error(
        "accelerations must be given for every point and joint with the velocities, or not at all"
    )]
    AccelerationCount,
    #[error("NaN or infinite values")]
    NotFinite,
    #[error("time_from_start must be >= 0 and strictly increasing")]
    Times,
}

impl Trajectory {
    /// Points at `times` with `positions` (point by point) and `velocities` (the same
    /// layout, or empty), for actuators still to be named.
    pub fn through(times: &[f64], positions: &[f64], velocities: &[f64]) -> Self {
        Self {
            times: times.to_vec(),
            positions: positions.to_vec(),
            velocities: velocities.to_vec(),
            ..Default::default()
        }
    }

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
        if !self.accelerations.is_empty() && self.accelerations.len() != self.velocities.len() {
            return Err(TrajectoryError::AccelerationCount);
        }
        if self
            .times
            .iter()
            .chain(&self.positions)
            .chain(&self.velocities)
            .chain(&self.accelerations)
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

    /// Position and velocity of joint `j` at time `t` (seconds from start), starting from
    /// `start` (position at t = 0, at rest).
    pub fn sample(&self, j: usize, t: f64, start: f64) -> (f64, f64) {
        let n = self.actuators.len();
        let k = self.times.partition_point(|time| *time <= t);
        if k >= self.times.len() {
            let last = self.times.len() - 1;
            return (self.positions[last * n + j], 0.0);
        }
        let at = |values: &[f64], point: usize| values.get(point * n + j).copied();
        let end = Knot {
            position: self.positions[k * n + j],
            velocity: at(&self.velocities, k),
            acceleration: at(&self.accelerations, k),
        };
        let (t0, begin) = if k == 0 {
            let rest = |given: Option<f64>| given.map(|_| 0.0);
            let begin = Knot {
                position: start,
                velocity: rest(end.velocity),
                acceleration: rest(end.acceleration),
            };
            (0.0, begin)
        } else {
            let begin = Knot {
                position: self.positions[(k - 1) * n + j],
                velocity: at(&self.velocities, k - 1),
                acceleration: at(&self.accelerations, k - 1),
            };
            (self.times[k - 1], begin)
        };
        let h = self.times[k] - t0;
        if h <= 0.0 {
            return (end.position, 0.0);
        }
        segment(&begin, &end, h, (t - t0).clamp(0.0, h))
    }
}

/// One end of a segment: what a trajectory point gives of one joint.
struct Knot {
    position: f64,
    velocity: Option<f64>,
    acceleration: Option<f64>,
}

/// Position and velocity at `tau` into a segment of `h` seconds from `a` to `b`: the
/// polynomial of least degree meeting what both ends give (1, 3 or 5).
fn segment(a: &Knot, b: &Knot, h: f64, tau: f64) -> (f64, f64) {
    let dp = b.position - a.position;
    let coefficients: [f64; 6] = match (
        a.velocity.zip(b.velocity),
        a.acceleration.zip(b.acceleration),
    ) {
        (Some((v0, v1)), Some((a0, a1))) => {
            let (h2, h3) = (h * h, h * h * h);
            [
                a.position,
                v0,
                a0 / 2.0,
                (20.0 * dp - (8.0 * v1 + 12.0 * v0) * h - (3.0 * a0 - a1) * h2) / (2.0 * h3),
                (-30.0 * dp + (14.0 * v1 + 16.0 * v0) * h + (3.0 * a0 - 2.0 * a1) * h2)
                    / (2.0 * h3 * h),
                (12.0 * dp - 6.0 * (v1 + v0) * h - (a0 - a1) * h2) / (2.0 * h3 * h2),
            ]
        }
        (Some((v0, v1)), None) => [
            a.position,
            v0,
            (3.0 * dp - (2.0 * v0 + v1) * h) / (h * h),
            (-2.0 * dp + (v0 + v1) * h) / (h * h * h),
            0.0,
            0.0,
        ],
        _ => [a.position, dp / h, 0.0, 0.0, 0.0, 0.0],
    };
    let (mut position, mut velocity, mut power) = (0.0, 0.0, 1.0);
    for (degree, c) in coefficients.iter().enumerate() {
        position += c * power;
        if degree + 1 < coefficients.len() {
            velocity += (degree + 1) as f64 * coefficients[degree + 1] * power;
        }
        power *= tau;
    }
    (position, velocity)
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
            ..Default::default()
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
    fn quintic_meets_both_ends_and_leaves_rest_as_minimum_jerk() {
        let mut quintic = two_points(vec![0.0, 0.0]);
        quintic.accelerations = vec![0.0, 0.0];
        // From rest to rest a quintic is the minimum-jerk profile 10s^3 - 15s^4 + 6s^5.
        let s: f64 = 0.25;
        let share = 10.0 * s.powi(3) - 15.0 * s.powi(4) + 6.0 * s.powi(5);
        let (p, _) = quintic.sample(0, 1.25, 0.0);
        assert!((p - (1.0 + 2.0 * share)).abs() < 1e-12, "{p}");
        // Ends with velocity and acceleration given: both are met.
        let (a, b) = (
            Knot {
                position: 0.5,
                velocity: Some(2.0),
                acceleration: Some(-1.0),
            },
            Knot {
                position: 2.0,
                velocity: Some(-0.5),
                acceleration: Some(3.0),
            },
        );
        let h = 0.7;
        let (p0, v0) = segment(&a, &b, h, 0.0);
        let (p1, v1) = segment(&a, &b, h, h);
        assert!((p0 - 0.5).abs() < 1e-12 && (v0 - 2.0).abs() < 1e-12);
        assert!(
            (p1 - 2.0).abs() < 1e-12 && (v1 + 0.5).abs() < 1e-12,
            "{p1} {v1}"
        );
        let e = 1e-6;
        let acceleration =
            |tau: f64| (segment(&a, &b, h, tau + e).1 - segment(&a, &b, h, tau - e).1) / (2.0 * e);
        assert!(
            (acceleration(0.0) + 1.0).abs() < 1e-6,
            "{}",
            acceleration(0.0)
        );
        assert!((acceleration(h) - 3.0).abs() < 1e-6, "{}", acceleration(h));
        // Accelerations without velocities are refused.
        let mut lone = two_points(vec![]);
        lone.accelerations = vec![0.0, 0.0];
        assert_eq!(lone.validate(), Err(TrajectoryError::AccelerationCount));
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
