//! What keys and mouse drags mean, as MuJoCo's `simulate` users expect them (pure: no window,
//! no simulation). The app turns each `Action` into a call on the simulation handle or a
//! change of the picture.
use mujoco_rs::prelude::*;
use winit::keyboard::KeyCode;

/// What a key press asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Space: pause, or run again in the mode it ran in.
    TogglePause,
    /// Backspace: the simulation's reset.
    Reset,
    /// Right arrow while paused: one step forward.
    StepForward,
    /// Left arrow while paused: back to the state before the last step taken here.
    StepBack,
    /// `]` / `[`: the next or previous camera (the free camera, then the model's cameras).
    NextCamera,
    PreviousCamera,
    /// Escape: back to the free camera, nothing selected.
    FreeCamera,
    /// C: contact points and forces.
    ToggleContacts,
    /// F: the frames shown (none, bodies, geoms, sites, world).
    CycleFrames,
    /// S: sites.
    ToggleSites,
    /// J: joints.
    ToggleJoints,
    /// T: transparent bodies.
    ToggleTransparent,
    /// Q: full or fast drawing (shadows and reflections).
    ToggleQuality,
    /// F1: the key help.
    ToggleHelp,
}

/// The action of `key` (a physical key, whatever the layout).
pub fn action(key: KeyCode) -> Option<Action> {
    Some(match key {
        KeyCode::Space => Action::TogglePause,
        KeyCode::Backspace => Action::Reset,
        KeyCode::ArrowRight => Action::StepForward,
        KeyCode::ArrowLeft => Action::StepBack,
        KeyCode::BracketRight => Action::NextCamera,
        KeyCode::BracketLeft => Action::PreviousCamera,
        KeyCode::Escape => Action::FreeCamera,
        KeyCode::KeyC => Action::ToggleContacts,
        KeyCode::KeyF => Action::CycleFrames,
        KeyCode::KeyS => Action::ToggleSites,
        KeyCode::KeyJ => Action::ToggleJoints,
        KeyCode::KeyT => Action::ToggleTransparent,
        KeyCode::KeyQ => Action::ToggleQuality,
        KeyCode::F1 => Action::ToggleHelp,
        _ => return None,
    })
}

/// The help overlay: keys, then what they do.
pub const HELP_KEYS: &str = "Space\nBackspace\nRight / Left\n[ ]\nEscape\nC\nF\nS\nJ\nT\nQ\n\
                             Left drag\nRight drag\nScroll\nDouble-click\nCtrl + right drag\n\
                             Ctrl + left drag\nF1";
pub const HELP_WHAT: &str = "pause / run\nreset\nstep / step back (paused)\ncameras\nfree camera\n\
                             contacts\nframes\nsites\njoints\ntransparent\nquality\nrotate view\n\
                             move view\nzoom\nselect body\npush the body\ntwist the body\nhelp";

/// Which mouse buttons are held, and the modifiers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Buttons {
    pub left: bool,
    pub right: bool,
    pub middle: bool,
    pub shift: bool,
    pub control: bool,
}

/// What a drag does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drag {
    /// Moves the camera.
    Camera(MjtMouse),
    /// Moves the perturbation's reference (ctrl held, a body selected).
    Perturb(MjtPertBit, MjtMouse),
}

/// The drag the held buttons make, as `simulate` maps them: left rotates, right moves,
/// middle zooms; shift makes rotating and moving horizontal; with ctrl they perturb the
/// selected body (left: rotation, right: translation).
pub fn drag(buttons: Buttons) -> Option<Drag> {
    let mouse = if buttons.right {
        if buttons.shift {
            MjtMouse::mjMOUSE_MOVE_H
        } else {
            MjtMouse::mjMOUSE_MOVE_V
        }
    } else if buttons.left {
        if buttons.shift {
            MjtMouse::mjMOUSE_ROTATE_H
        } else {
            MjtMouse::mjMOUSE_ROTATE_V
        }
    } else if buttons.middle {
        MjtMouse::mjMOUSE_ZOOM
    } else {
        return None;
    };
    Some(if buttons.control && !buttons.middle {
        let kind = if buttons.right {
            MjtPertBit::mjPERT_TRANSLATE
        } else {
            MjtPertBit::mjPERT_ROTATE
        };
        Drag::Perturb(kind, mouse)
    } else {
        Drag::Camera(mouse)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_do_what_simulate_users_expect() {
        assert_eq!(action(KeyCode::Space), Some(Action::TogglePause));
        assert_eq!(action(KeyCode::Backspace), Some(Action::Reset));
        assert_eq!(action(KeyCode::ArrowRight), Some(Action::StepForward));
        assert_eq!(action(KeyCode::ArrowLeft), Some(Action::StepBack));
        assert_eq!(action(KeyCode::KeyZ), None);
        assert_eq!(HELP_KEYS.lines().count(), HELP_WHAT.lines().count());
    }

    #[test]
    fn ctrl_drags_perturb_and_plain_drags_move_the_camera() {
        let right = Buttons {
            right: true,
            ..Default::default()
        };
        assert_eq!(drag(right), Some(Drag::Camera(MjtMouse::mjMOUSE_MOVE_V)));
        let push = Buttons {
            control: true,
            ..right
        };
        assert_eq!(
            drag(push),
            Some(Drag::Perturb(
                MjtPertBit::mjPERT_TRANSLATE,
                MjtMouse::mjMOUSE_MOVE_V
            ))
        );
        let twist = Buttons {
            left: true,
            control: true,
            ..Default::default()
        };
        assert_eq!(
            drag(twist),
            Some(Drag::Perturb(
                MjtPertBit::mjPERT_ROTATE,
                MjtMouse::mjMOUSE_ROTATE_V
            ))
        );
        assert_eq!(drag(Buttons::default()), None);
    }
}
