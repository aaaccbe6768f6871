//! Keyframe presets: sequences of actuator-target poses, each blended in (ease-in-out) and
//! then held. The built-in ones are the presets users of the original plugin know; user
//! presets come from the robot config in the same shape.
pub use crate::config::{Preset, PresetPose};

/// A blend this long means "blend slowly and stay": the sequence does not advance.
pub const STAY_BLEND: f64 = 999.0;

/// Why a preset cannot be loaded or played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PresetError {
    #[error("the preset has no poses")]
    NoPoses,
    #[error("pose {0}: targets, hold and blend must be finite, hold and blend >= 0")]
    BadPose(usize),
    #[error("the loaded preset has no pose {0}")]
    NoPose(usize),
    #[error("no preset is loaded")]
    NotLoaded,
}

impl PresetError {
    /// The error with the names of `preset` and its poses (made off the physics thread).
    pub fn describe(&self, preset: &Preset) -> String {
        match self {
            Self::BadPose(index) => format!(
                "preset '{}' pose '{}': targets, hold and blend must be finite, hold and blend >= 0",
                preset.name,
                preset.poses.get(*index).map_or("?", |p| p.name.as_str())
            ),
            Self::NoPoses => format!("preset '{}' has no poses", preset.name),
            other => format!("preset '{}': {other}", preset.name),
        }
    }
}

impl Preset {
    /// Checks the poses' values (on the physics thread too, so the error carries indices;
    /// `PresetError::describe` names them).
    pub fn validate(&self) -> Result<(), PresetError> {
        if self.poses.is_empty() {
            return Err(PresetError::NoPoses);
        }
        for (index, pose) in self.poses.iter().enumerate() {
            let values = pose.targets.iter().chain([&pose.hold, &pose.blend]);
            if values.clone().any(|v| !v.is_finite()) || pose.hold < 0.0 || pose.blend < 0.0 {
                return Err(PresetError::BadPose(index));
            }
        }
        Ok(())
    }
}

fn pose(name: &str, targets: &[f64], hold: f64, blend: f64) -> PresetPose {
    PresetPose {
        name: name.into(),
        targets: targets.to_vec(),
        hold,
        blend,
    }
}

fn preset(name: &str, poses: Vec<PresetPose>) -> Preset {
    Preset {
        name: name.into(),
        looping: true,
        poses,
    }
}

/// Four legs of three joints each, in the robot's leg order.
fn legs(l: [[f64; 3]; 4]) -> Vec<f64> {
    l.concat()
}

pub fn builtin_presets() -> Vec<Preset> {
    let franka_home = [0.0, -0.3, 0.0, -2.0, 0.0, 2.0, 0.78, 0.04, 0.04];
    let franka_reach = [0.0, 0.5, 0.0, -1.0, 0.0, 1.5, 0.78, 0.04, 0.04];
    let franka_grasp = [0.0, 0.5, 0.0, -1.0, 0.0, 1.5, 0.78, 0.0, 0.0];
    let franka_lift = [0.0, -0.3, 0.0, -2.0, 0.0, 2.0, 0.78, 0.0, 0.0];
    let wave_left = [0.3, -0.5, 0.0, -1.5, 0.0, 2.5, 0.78, 0.04, 0.04];
    let wave_right = [-0.3, -0.5, 0.0, -1.5, 0.0, 2.5, 0.78, 0.04, 0.04];
    let ur_center = [0.0, -1.2, 1.8, -2.0, -1.57, 0.0];
    // Spot: fl, fr, hl, hr legs of (hx, hy, kn).
    let spot_home = [0.0, 1.04, -1.8];
    let spot_fr = |fr: [f64; 3]| legs([spot_home, fr, spot_home, spot_home]);
    let spot_stand = legs([spot_home; 4]);
    // ANYmal: LF, RF, LH, RH legs of (HAA, HFE, KFE).
    let anymal_stand = legs([[0.0, 0.5, -1.0]; 4]);
    let anymal_lean = |s: f64| {
        legs([
            [-s, 0.5, -1.0],
            [s, 0.5, -1.0],
            [-s, 0.5, -1.0],
            [s, 0.5, -1.0],
        ])
    };
    // Go2: FL, FR, RL, RR legs of (hip, thigh, calf).
    let go2_stand = legs([[0.0, 0.9, -1.8]; 4]);
    let (go2_low, go2_high) = ([0.0, 1.5, -2.5], [0.0, 0.4, -0.9]);
    vec![
        preset(
            "Franka: Reach-Grasp-Lift",
            vec![
                pose("Home", &franka_home, 1.0, 0.5),
                pose("Reach", &franka_reach, 0.5, 1.5),
                pose("Grasp", &franka_grasp, 1.0, 0.3),
                pose("Lift", &franka_lift, 1.0, 1.5),
                pose("Release", &franka_home, 0.5, 0.3),
            ],
        ),
        preset(
            "Franka: Wave",
            vec![
                pose("Up-Left", &wave_left, 1.5, 0.5),
                pose("Up-Right", &wave_right, 1.5, 0.5),
                pose("Up-Left 2", &wave_left, 1.5, 0.5),
                pose("Up-Right 2", &wave_right, 1.5, 0.5),
            ],
        ),
        preset(
            "UR5e: Pick-Place",
            vec![
                pose("Home", &[0.0, -1.57, 1.57, -1.57, -1.57, 0.0], 2.5, 1.0),
                pose("Reach", &[0.5, -1.0, 1.2, -1.8, -1.57, 0.5], 2.0, 1.5),
                pose(
                    "Retract",
                    &[-0.5, -1.57, 1.57, -1.57, -1.57, -0.5],
                    2.5,
                    1.0,
                ),
            ],
        ),
        preset(
            "UR5e: Sweep",
            vec![
                pose("Left", &[-1.0, -1.2, 1.8, -2.0, -1.57, 0.0], 2.0, 1.5),
                pose("Center", &ur_center, 2.0, 1.5),
                pose("Right", &[1.0, -1.2, 1.8, -2.0, -1.57, 0.0], 2.0, 1.5),
                pose("Center", &ur_center, 2.0, 1.5),
            ],
        ),
        preset(
            "Spot: FR Knee Cycle",
            vec![
                pose("Home", &spot_stand, 1.5, 0.5),
                pose("Extend", &spot_fr([0.0, 1.04, -0.248]), 1.5, 0.5),
                pose("Home", &spot_stand, 1.5, 0.3),
                pose("Flex", &spot_fr([0.0, 1.04, -2.79]), 1.5, 0.5),
                pose("Home", &spot_stand, 1.5, 0.3),
            ],
        ),
        preset(
            "Spot: Wave",
            vec![
                pose("Stand", &spot_stand, 1.5, 0.5),
                pose("Paw Up", &spot_fr([0.0, 0.3, -0.5]), 1.5, 0.3),
                pose("Wave L", &spot_fr([0.3, 0.3, -0.5]), 1.0, 0.2),
                pose("Wave R", &spot_fr([-0.3, 0.3, -0.5]), 1.0, 0.2),
                pose("Wave L2", &spot_fr([0.3, 0.3, -0.5]), 1.0, 0.2),
                pose("Paw Down", &spot_stand, 1.5, 0.5),
            ],
        ),
        preset(
            "Spot: Sit (hold)",
            vec![pose(
                "Sit",
                &legs([
                    [0.0, 0.8, -1.5],
                    [0.0, 0.8, -1.5],
                    [0.0, 2.0, -2.5],
                    [0.0, 2.0, -2.5],
                ]),
                2.5,
                STAY_BLEND,
            )],
        ),
        preset(
            "ANYmal: Sit (hold)",
            vec![pose(
                "Sit",
                &legs([
                    [0.0, 0.4, -0.8],
                    [0.0, 0.4, -0.8],
                    [0.0, 1.0, -1.8],
                    [0.0, 1.0, -1.8],
                ]),
                2.5,
                STAY_BLEND,
            )],
        ),
        preset(
            "ANYmal: Weight Shift",
            vec![
                pose("Stand", &anymal_stand, 2.0, 1.0),
                pose("Lean L", &anymal_lean(0.15), 2.0, 1.0),
                pose("Center", &anymal_stand, 2.0, 0.5),
                pose("Lean R", &anymal_lean(-0.15), 2.0, 1.0),
                pose("Center", &anymal_stand, 2.0, 0.5),
            ],
        ),
        preset(
            "Go2: Stand-Crouch",
            vec![
                pose("Stand", &go2_stand, 2.0, 1.0),
                pose("Crouch", &legs([go2_low; 4]), 2.0, 1.0),
                pose("Stand", &go2_stand, 2.0, 0.5),
            ],
        ),
        preset(
            "Go2: Stretch",
            vec![
                pose("Stand", &go2_stand, 1.5, 0.5),
                pose(
                    "Front",
                    &legs([go2_high, go2_high, go2_low, go2_low]),
                    2.0,
                    1.0,
                ),
                pose("Stand", &go2_stand, 2.0, 0.5),
                pose(
                    "Back",
                    &legs([go2_low, go2_low, go2_high, go2_high]),
                    2.0,
                    1.0,
                ),
                pose("Stand", &go2_stand, 2.0, 0.5),
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_presets_are_valid_and_sized() {
        let presets = builtin_presets();
        assert_eq!(presets.len(), 11);
        for p in &presets {
            p.validate().unwrap();
            let n = p.poses[0].targets.len();
            assert!(
                p.poses.iter().all(|pose| pose.targets.len() == n),
                "{}",
                p.name
            );
        }
        let lean_r = &presets
            .iter()
            .find(|p| p.name == "ANYmal: Weight Shift")
            .unwrap()
            .poses[3];
        assert_eq!(&lean_r.targets[..4], &[0.15, 0.5, -1.0, -0.15]);
    }
}
