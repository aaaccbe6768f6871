//! The keyframe sequencer: plays a preset's poses in turn, blending each in with an
//! ease-in-out curve and holding it, looping if the preset says so. Its output is a target
//! per actuator; actuators beyond the preset's length keep their previous target.
use super::presets::{Preset, STAY_BLEND};

/// Seconds between `play` and the first blend.
pub const START_DELAY: f64 = 0.5;

#[derive(Debug, Default)]
pub struct Sequencer {
    preset: Option<Box<Preset>>,
    playing: bool,
    pose: usize,
    /// Sim time at which the current blend starts.
    segment_start: f64,
    from: Vec<f64>,
    targets: Vec<f64>,
}

/// Smoothstep: zero slope at both ends.
fn ease_in_out(s: f64) -> f64 {
    let s = s.clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}

impl Sequencer {
    pub fn with_actuators(n: usize) -> Self {
        Self {
            from: vec![0.0; n],
            targets: vec![0.0; n],
            ..Default::default()
        }
    }

    pub fn is_playing(&self) -> bool {
        self.playing
    }

    pub fn pose_index(&self) -> usize {
        self.pose
    }

    pub fn preset_name(&self) -> Option<&str> {
        self.preset.as_deref().map(|p| p.name.as_str())
    }

    /// Installs a preset (stopped) and returns the previous one for disposal off this thread.
    pub fn load(&mut self, preset: Box<Preset>) -> Option<Box<Preset>> {
        self.playing = false;
        self.pose = 0;
        self.preset.replace(preset)
    }

    /// Starts playing from pose `index`, blending from `current` targets.
    pub fn play_from(&mut self, index: usize, now: f64, current: &[f64], delay: f64) -> bool {
        let Some(preset) = &self.preset else {
            return false;
        };
        if index >= preset.poses.len() {
            return false;
        }
        self.pose = index;
        self.playing = true;
        self.segment_start = now + delay;
        self.from.copy_from_slice(current);
        self.targets.copy_from_slice(current);
        true
    }

    pub fn stop(&mut self) {
        self.playing = false;
    }

    /// The targets last produced, and how many actuators the preset drives.
    pub fn targets(&self) -> (&[f64], usize) {
        let driven = self
            .preset
            .as_deref()
            .and_then(|p| p.poses.first())
            .map(|pose| pose.targets.len().min(self.targets.len()))
            .unwrap_or(0);
        (&self.targets, driven)
    }

    /// Advances to sim time `now` and returns the targets.
    pub fn update(&mut self, now: f64) -> &[f64] {
        if !self.playing {
            return &self.targets;
        }
        let Some(preset) = &self.preset else {
            return &self.targets;
        };
        let pose = &preset.poses[self.pose];
        let elapsed = now - self.segment_start;
        let n = pose.targets.len().min(self.targets.len());
        let s = if pose.blend > 0.0 {
            ease_in_out(elapsed / pose.blend)
        } else {
            1.0
        };
        for i in 0..n {
            self.targets[i] = self.from[i] + (pose.targets[i] - self.from[i]) * s;
        }
        if pose.blend < STAY_BLEND && elapsed >= pose.blend + pose.hold {
            let last = self.pose + 1 == preset.poses.len();
            if last && !preset.looping {
                self.playing = false;
            } else {
                self.pose = if last { 0 } else { self.pose + 1 };
                self.from.copy_from_slice(&self.targets);
                self.segment_start = now;
            }
        }
        &self.targets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::presets::PresetPose;

    fn two_pose_preset(looping: bool) -> Box<Preset> {
        Box::new(Preset {
            name: "t".into(),
            looping,
            poses: vec![
                PresetPose {
                    name: "a".into(),
                    targets: vec![1.0],
                    hold: 1.0,
                    blend: 1.0,
                },
                PresetPose {
                    name: "b".into(),
                    targets: vec![-1.0],
                    hold: 1.0,
                    blend: 2.0,
                },
            ],
        })
    }

    #[test]
    fn blends_holds_advances_and_loops() {
        let mut s = Sequencer::with_actuators(2);
        s.load(two_pose_preset(true));
        assert!(s.play_from(0, 0.0, &[0.0, 7.0], 0.0));
        assert_eq!(
            s.update(0.25)[0],
            0.15625,
            "eased in: 3s^2 - 2s^3 at s = 1/4, not 1/4"
        );
        assert_eq!(s.update(0.5)[0], 0.5, "smoothstep midpoint");
        assert_eq!(s.update(0.5)[1], 7.0, "beyond the preset: untouched");
        assert_eq!(s.update(0.75)[0], 0.84375, "eased out");
        assert_eq!(s.update(1.5)[0], 1.0, "holding");
        s.update(2.0); // blend + hold over: next pose
        assert_eq!(s.pose_index(), 1);
        assert_eq!(s.update(3.0)[0], 0.0, "halfway to -1 over 2 s");
        s.update(5.0);
        assert_eq!(s.pose_index(), 0, "looped");
    }

    #[test]
    fn stops_at_the_end_without_loop_and_stays_on_999() {
        let mut s = Sequencer::with_actuators(1);
        s.load(two_pose_preset(false));
        s.play_from(1, 0.0, &[0.0], 0.0);
        s.update(3.0);
        assert!(!s.is_playing());
        assert_eq!(s.update(10.0)[0], -1.0);
        let mut stay = two_pose_preset(true);
        stay.poses[0].blend = STAY_BLEND;
        s.load(stay);
        s.play_from(0, 0.0, &[0.0], 0.0);
        s.update(5000.0);
        assert_eq!(s.pose_index(), 0, "a 999 blend stays");
    }
}
