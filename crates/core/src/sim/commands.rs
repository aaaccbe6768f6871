//! Commands and operations sent to the physics thread.
//!
//! Commands (fire and forget: an actuator value, a twist) go through a preallocated lock-free
//! queue that the physics thread drains at the start of each step; a command may be stamped
//! with the step it applies to (lockstep and determinism). Operations (pause, step N, reset,
//! snapshots, ...) go through a bounded channel and carry a reply channel. Anything owned that
//! an operation brings in (a trajectory, a preset) goes back out through the trash queue, so
//! the physics thread neither allocates nor frees.
use super::snapshot::Snapshot;
use super::tap::{Tap, TapLayout};
use crate::config::{ControlMode, ControlSource, SimMode};
use crate::control::{PdGains, Preset, Trajectory};
use crate::record::{Playback, RecordRing};
use std::sync::Arc;

/// A value for the physics thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    /// The sticky command of an actuator (global id): its ctrl, or a PD position target.
    Actuator {
        source: ControlSource,
        actuator: u32,
        value: f64,
    },
    /// A twist for a robot's mobile base (base frame: m/s, m/s, rad/s).
    Twist {
        source: ControlSource,
        robot: u16,
        linear_x: f64,
        linear_y: f64,
        angular_z: f64,
    },
    /// A robot's base stops at once, past its acceleration ramps (its controller deactivated,
    /// as ros2_control's diff_drive_controller halts).
    StopBase { robot: u16 },
}

/// A command and the step it applies to (0: the next step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamped {
    pub at_step: u64,
    /// The world generation its ids belong to.
    pub generation: u64,
    pub command: Command,
}

pub enum Operation {
    SetMode(SimMode),
    SetSpeed(f64),
    /// Steps N times as fast as possible; only while paused. Replies when done.
    Step(u64),
    /// mj_resetData; commands zeroed; controllers back to their configured state.
    Reset,
    /// Resets to MuJoCo keyframe `k`; the controllers hold its pose.
    ResetToKeyframe(usize),
    /// Keeps the state; the controllers drive the robots to keyframe `k` and hold it.
    HoldKeyframe(usize),
    /// Fills the snapshot (sized with `SimHandle::empty_snapshot`) and returns it.
    CaptureSnapshot(Box<Snapshot>),
    RestoreSnapshot(Box<Snapshot>),
    /// Force (3) and torque (3) in the world frame at the body's center of mass.
    ApplyWrench {
        body: usize,
        wrench: [f64; 6],
        duration: f64,
    },
    /// Pose of a body with a free joint: position and quaternion (w, x, y, z), and its
    /// velocity: linear then angular, both in the world frame.
    SetBodyPose {
        body: usize,
        position: [f64; 3],
        quaternion_wxyz: [f64; 4],
        velocity_world: [f64; 6],
    },
    SetSource {
        robot: usize,
        source: ControlSource,
    },
    SetControlMode {
        robot: usize,
        mode: ControlMode,
    },
    /// Gains of every actuator of the robot; `enable_pd` switches it to PD mode.
    SetGains {
        robot: usize,
        gains: Box<[PdGains]>,
        enable_pd: bool,
    },
    SetGravityCompensation {
        robot: usize,
        enabled: bool,
    },
    FollowTrajectory {
        robot: usize,
        trajectory: Box<Trajectory>,
    },
    CancelTrajectory {
        robot: usize,
    },
    LoadPreset {
        robot: usize,
        preset: Box<Preset>,
    },
    /// Plays the loaded preset from pose `pose` (go to pose i, or play from the start).
    PlayPreset {
        robot: usize,
        pose: usize,
        delay: f64,
    },
    StopPreset {
        robot: usize,
    },
    /// Starts pushing a row per step into `ring` (a recorder or the legacy publisher).
    Tap {
        ring: Arc<RecordRing>,
        layout: TapLayout,
    },
    /// Stops pushing rows into `ring`.
    Untap(Arc<RecordRing>),
    /// Kinematic playback of recorded rows; pauses at the end.
    Playback(Box<Playback>),
    StopPlayback,
    /// Swaps in the next world between two steps, carrying the state of what stays.
    ChangeWorld(Box<super::world::NextWorld>),
    /// Ends the physics thread.
    Shutdown,
}

impl Operation {
    /// Whether it names robots, bodies, keyframes or actuators by the ids of one world (so
    /// it is refused once that world has changed).
    pub fn names_world_ids(&self) -> bool {
        !matches!(
            self,
            Operation::SetMode(_)
                | Operation::SetSpeed(_)
                | Operation::Step(_)
                | Operation::Reset
                | Operation::Untap(_)
                | Operation::StopPlayback
                | Operation::ChangeWorld(_)
                | Operation::Shutdown
        )
    }
}

/// Why an operation was not carried out. What the physics thread refuses carries ids and
/// numbers only (it formats and allocates nothing); the text is made where it is shown.
/// The handle's own refusals of names, files and values come as `Invalid` with their text.
/// What a request's value is bounded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounded {
    /// A position's distance from the origin (m).
    Position,
    /// A linear or angular speed (m/s, rad/s).
    Speed,
    /// A force or torque (N, N m).
    Force,
}

impl Bounded {
    pub fn name(self) -> &'static str {
        match self {
            Self::Position => "a position's distance from the origin",
            Self::Speed => "a speed",
            Self::Force => "a force or torque",
        }
    }

    pub fn field(self) -> &'static str {
        match self {
            Self::Position => "world_bound",
            Self::Speed => "speed_bound",
            Self::Force => "force_bound",
        }
    }

    /// The bound `limits` sets.
    pub fn of(self, limits: &crate::config::LimitsConfig) -> f64 {
        match self {
            Self::Position => limits.world_bound,
            Self::Speed => limits.speed_bound,
            Self::Force => limits.force_bound,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OperationError {
    #[error("no robot with index {0}")]
    NoRobot(usize),
    #[error("no keyframe with index {0}")]
    NoKeyframe(usize),
    #[error("no movable body with index {0}")]
    NoMovableBody(usize),
    #[error("body {0} has no free joint: only free bodies can be placed")]
    NotFree(usize),
    #[error("speed must be a real-time factor from 0.001 to 1000, got {0}")]
    BadSpeed(f64),
    #[error("step N works while paused; pause the simulation first")]
    StepWhileRunning,
    #[error("a step request is already running")]
    StepAlreadyRunning,
    #[error("stepping interrupted by a mode change after {done} of {requested} steps")]
    StepInterrupted { done: u64, requested: u64 },
    #[error("MuJoCo: {0}")]
    Mujoco(mujoco_rs::error::MjDataError),
    #[error("the snapshot buffer does not fit this model")]
    SnapshotBuffer,
    #[error(
        "the snapshot was taken from another model (fingerprint {snapshot:016x}, this model {model:016x})"
    )]
    OtherModel { snapshot: u64, model: u64 },
    #[error("the snapshot's sizes do not fit this model")]
    SnapshotSizes,
    #[error("the wrench must be finite and the duration a positive number of seconds")]
    BadWrench,
    #[error("{0} wrenches are already active")]
    WrenchesFull(usize),
    #[error("the pose and velocity must be finite, the quaternion non-zero")]
    BadPose,
    /// A value beyond the bound `limits.<what>` sets.
    #[error("{what} {value:.6e} is beyond limits.{field} ({bound})", what = what.name(), field = what.field())]
    Beyond {
        what: Bounded,
        value: f64,
        bound: f64,
    },
    #[error("{given} gains for {actuators} actuators")]
    GainCount { given: usize, actuators: usize },
    #[error("gains must be finite and >= 0")]
    BadGains,
    #[error("the trajectory names an actuator the robot does not have")]
    TrajectoryActuator,
    #[error("trajectory: {0}")]
    Trajectory(crate::control::TrajectoryError),
    #[error("robot {robot}: {error}")]
    Preset {
        robot: usize,
        error: crate::control::PresetError,
    },
    #[error("the delay must be >= 0 seconds")]
    BadDelay,
    #[error("a {layout:?} row has {row} values for this model")]
    TapRow { layout: TapLayout, row: usize },
    #[error("every tap slot is in use")]
    TapsFull,
    #[error("the playback rows do not fit this model")]
    PlaybackRows,
    #[error(
        "the snapshot belongs to world generation {snapshot}, the world is now generation {now} \
         (entities were spawned, deleted or a world loaded since)"
    )]
    OtherWorld { snapshot: u64, now: u64 },
    #[error("the world changed (generation {now}) while the request was on its way; try again")]
    WorldChanged { now: u64 },
    /// Refused by the handle or an adapter, with the text made there.
    #[error("{0}")]
    Invalid(String),
    /// The physics thread has ended.
    #[error("the physics thread has stopped")]
    Stopped,
}

/// The reply to an operation: the step counter and sim time once it is done, and a snapshot
/// for `CaptureSnapshot`.
#[derive(Debug)]
pub struct OperationDone {
    pub step: u64,
    pub time: f64,
    pub snapshot: Option<Box<Snapshot>>,
}

pub type OperationResult = Result<OperationDone, OperationError>;

pub struct Request {
    pub operation: Operation,
    /// The world generation the operation's ids belong to.
    pub generation: u64,
    pub reply: Option<crossbeam_channel::Sender<OperationResult>>,
}

/// Owned things the physics thread is done with, dropped by the handle's thread.
#[allow(dead_code)] // the values are only held until they are dropped
pub enum Trash {
    Trajectory(Box<Trajectory>),
    Preset(Box<Preset>),
    Gains(Box<[PdGains]>),
    Snapshot(Box<Snapshot>),
    Playback(Box<Playback>),
    Ring(Arc<RecordRing>),
    Tap(Tap),
    Reply(crossbeam_channel::Sender<OperationResult>),
    World(Box<super::world::NextWorld>),
}
