//! The controller manager's semantics, as ros2_control has them, with no ROS in sight: the
//! controller types it loads and what each does once configured (`kinds`), the lifecycle
//! of loaded controllers and the interfaces they claim (`lifecycle`), and the settings a
//! controller's parameters give its goals (`settings`). The ROS node serves them.
pub mod kinds;
pub mod lifecycle;
mod settings;

pub use settings::{GoalDefaults, GripperSettings};

/// What a controller uses, known once it is configured: `joint/interface` names (the kind
/// reads them from the parameters, the lifecycle holds them against other controllers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interfaces {
    pub command: Vec<String>,
    pub state: Vec<String>,
}
