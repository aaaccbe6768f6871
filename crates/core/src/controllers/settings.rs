//! What a controller's parameters (or a config's controller) say about judging a goal.
use std::collections::HashMap;

/// What a goal is held to where it sets nothing of its own: the config's
/// `goal_tolerance` and `goal_time` for its trajectory controllers, a
/// joint_trajectory_controller's `constraints` and `allow_partial_joints_goal` for the
/// controller manager's.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalDefaults {
    /// Path tolerance by joint name; a joint not listed is not checked along the way.
    pub path: HashMap<String, f64>,
    /// Goal tolerance by joint name; a joint not listed takes `goal_otherwise`.
    pub goal: HashMap<String, f64>,
    pub goal_otherwise: Option<f64>,
    /// At the end every joint's speed must be below it (rad/s or m/s), when set.
    pub stopped_velocity: Option<f64>,
    /// Seconds after the trajectory's end to get within the goal tolerances; None: no limit.
    pub goal_time: Option<f64>,
    /// Whether a goal may name only some of the group's joints.
    pub allow_partial: bool,
    /// A new trajectory starts from the setpoints of the one it replaces
    /// (`open_loop_control`), else from the measured positions.
    pub open_loop: bool,
}

impl GoalDefaults {
    /// A config trajectory controller's (and the default group's) defaults.
    pub fn of_config(goal_tolerance: f64, goal_time: f64) -> Self {
        Self {
            path: HashMap::new(),
            goal: HashMap::new(),
            goal_otherwise: Some(goal_tolerance),
            stopped_velocity: None,
            goal_time: Some(goal_time),
            allow_partial: true,
            open_loop: false,
        }
    }
}

/// How a gripper judges a goal: a config's gripper (`tolerance`, `allow_stalling`, the
/// stall constants of the action server) or a gripper_action_controller's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GripperSettings {
    pub goal_tolerance: f64,
    pub allow_stalling: bool,
    /// Below this speed the joint counts as stopped.
    pub stall_velocity: f64,
    /// Stopped short of the goal this long (sim seconds): stalled.
    pub stall_timeout: f64,
}
