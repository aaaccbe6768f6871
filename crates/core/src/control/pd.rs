//! The PD law of the legacy protocol: `target = clamp(value, joint range)`,
//! `ctrl = clamp(kp (target - q) - kv qdot, -torque_limit, torque_limit)`.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PdGains {
    pub kp: f64,
    pub kv: f64,
    pub torque_limit: f64,
}

impl PdGains {
    /// The legacy defaults: kp 100, kv 5, torque limit 200.
    pub const DEFAULT: PdGains = PdGains {
        kp: 100.0,
        kv: 5.0,
        torque_limit: 200.0,
    };

    pub fn is_valid(&self) -> bool {
        [self.kp, self.kv, self.torque_limit]
            .iter()
            .all(|v| v.is_finite() && *v >= 0.0)
    }
}

impl Default for PdGains {
    fn default() -> Self {
        Self::DEFAULT
    }
}

pub fn pd_output(target: f64, range: Option<[f64; 2]>, q: f64, qdot: f64, gains: &PdGains) -> f64 {
    let target = match range {
        Some([lo, hi]) => super::bounded(target, lo, hi),
        None => target,
    };
    super::bounded(
        gains.kp * (target - q) - gains.kv * qdot,
        -gains.torque_limit,
        gains.torque_limit,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_target_and_torque() {
        let g = PdGains::DEFAULT;
        assert_eq!(pd_output(0.5, None, 0.0, 0.0, &g), 50.0);
        assert_eq!(
            pd_output(5.0, Some([-1.0, 1.0]), 0.0, 0.0, &g),
            100.0,
            "target clamped to the range"
        );
        assert_eq!(pd_output(10.0, None, 0.0, 0.0, &g), 200.0, "torque limit");
        assert_eq!(pd_output(0.0, None, 0.0, 2.0, &g), -10.0, "damping");
    }
}
