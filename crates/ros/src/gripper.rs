//! control_msgs/GripperCommand action servers, `{gripper}/gripper_cmd`, as MoveIt's gripper
//! controller drives them. A goal sets the gripper actuator's target (mapped from the joint
//! position the goal gives) and watches the joint every cycle of the node's loop, in sim
//! time: it succeeds with `reached_goal` once the joint is within tolerance, or with
//! `stalled` when the joint stops short (it holds something) and stalling is allowed. A
//! cancel holds the joint where it is; a new goal preempts the running one.
use super::Ticks;
use super::goals::{self, End, Owner, Refusal};
use super::{ConfigProblem, ServeError};
use crate::config::{ControlSource, GripperController};
use crate::control::{ActuatorInfo, ActuatorKind};
use crate::controllers::GripperSettings;
use crate::messages::control_msgs::action::{GripperCommand, ParallelGripperCommand};
use crate::messages::sensor_msgs::msg::JointState;
use crate::sim::{OperationError, SimHandle, StateSnapshot};
use futures::executor::LocalSpawner;
use std::rc::Rc;

/// Below this speed (m/s or rad/s) the joint counts as stopped, for the config's grippers.
const STOPPED: f64 = 1e-3;
/// How long (sim seconds) it must stay stopped short of the goal to count as stalled, for
/// the config's grippers.
const STALL_TIME: f64 = 0.2;
/// A goal that neither reaches nor stalls within this long (sim seconds) is aborted.
const GIVE_UP: f64 = 10.0;

/// A gripper the controller manager runs: its slot (goals are taken only while it is
/// active) and its parameters.
pub struct ManagedGripper {
    pub slot: Rc<super::slot::Slot>,
    pub settings: GripperSettings,
    /// parallel_gripper_action_controller: ParallelGripperCommand goals.
    pub parallel: bool,
}

struct Gripper {
    robot: usize,
    joint: String,
    anchor: super::Anchor,
    qpos: usize,
    dof: usize,
    /// The actuator's name (for commands) and model index (for its force).
    actuator: String,
    actuator_id: usize,
    /// Joint positions at the ctrlrange ends and that ctrlrange, when they differ.
    mapping: Option<([f64; 2], [f64; 2])>,
    /// Reachable joint positions.
    range: [f64; 2],
    settings: GripperSettings,
}

impl Gripper {
    fn resolve(
        handle: &SimHandle,
        world: &crate::sim::WorldGeneration,
        robot: usize,
        config: &GripperController,
        settings: Option<GripperSettings>,
        field: &str,
    ) -> Result<Self, ServeError> {
        let wrong = |key: &str, problem| ServeError::Config {
            field: format!("{field}.{key}"),
            problem,
        };
        let model = &world.model;
        let map = &world.robots[robot];
        let joint = map
            .joints
            .iter()
            .find(|j| j.name == config.joint)
            .ok_or_else(|| {
                wrong(
                    "joint",
                    ConfigProblem::NoJoint {
                        robot: map.name.clone(),
                        joint: config.joint.clone(),
                    },
                )
            })?;
        let (qpos, dof) = (
            model.jnt_qposadr()[joint.id] as usize,
            model.jnt_dofadr()[joint.id] as usize,
        );
        let actuator_name = config
            .actuator
            .clone()
            .unwrap_or_else(|| config.joint.clone());
        let index = handle
            .actuator_index_in(world, robot, &actuator_name)
            .map_err(|e| wrong("actuator", e.into()))?;
        let actuator = &map.actuators[index];
        let info = ActuatorInfo::of(model, actuator.id);
        let limited = model.jnt_limited()[joint.id];
        let joint_range = model.jnt_range()[joint.id];
        let mapping = match (config.position_range, info.ctrlrange) {
            (Some(positions), Some(ctrl)) => Some((positions, ctrl)),
            (Some(_), None) => {
                return Err(wrong(
                    "position_range",
                    ConfigProblem::NoCtrlRange(actuator_name),
                ));
            }
            (None, _) if info.kind != ActuatorKind::PositionServo => {
                return Err(wrong(
                    "actuator",
                    ConfigProblem::NotPositionActuator(actuator_name),
                ));
            }
            (None, _) => None,
        };
        let range = match (mapping, limited) {
            (Some((p, _)), _) => [p[0].min(p[1]), p[0].max(p[1])],
            (None, true) => joint_range,
            (None, false) => [f64::NEG_INFINITY, f64::INFINITY],
        };
        if !(config.tolerance.is_finite() && config.tolerance > 0.0) {
            return Err(wrong("tolerance", ConfigProblem::NotPositive));
        }
        Ok(Self {
            robot,
            joint: config.joint.clone(),
            anchor: super::Anchor::new(world, robot),
            qpos,
            dof,
            actuator: actuator.name.clone(),
            actuator_id: actuator.id,
            mapping,
            range,
            settings: settings.unwrap_or(GripperSettings {
                goal_tolerance: config.tolerance,
                allow_stalling: config.allow_stalling,
                stall_velocity: STOPPED,
                stall_timeout: STALL_TIME,
            }),
        })
    }

    /// The actuator command that holds the joint at `position`.
    fn ctrl(&self, position: f64) -> f64 {
        match self.mapping {
            Some(([p0, p1], [c0, c1])) => c0 + (position - p0) / (p1 - p0) * (c1 - c0),
            None => position,
        }
    }

    fn command(&self, handle: &SimHandle, position: f64) -> Result<(), OperationError> {
        handle.command_actuators(
            ControlSource::Ros,
            self.robot,
            &[&self.actuator],
            &[self.ctrl(position)],
        )
    }

    fn reading(&self, state: &StateSnapshot, stalled: bool, reached: bool) -> Reading {
        Reading {
            joint: self.joint.clone(),
            position: state.qpos[self.qpos],
            velocity: state.qvel[self.dof],
            effort: state.actuator_force[self.actuator_id],
            stalled,
            reached,
        }
    }
}

/// Where the gripper is, for a feedback or a result.
pub struct Reading {
    joint: String,
    position: f64,
    velocity: f64,
    effort: f64,
    stalled: bool,
    reached: bool,
}

/// Why a gripper goal asks no position of the gripper's joint.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("max_effort {0} is not a number")]
    Effort(f64),
    #[error("the command names {named:?}, not '{joint}'")]
    OtherJoints { named: Vec<String>, joint: String },
    #[error("the command gives no position for '{0}'")]
    NoPosition(String),
}

/// A gripper action: control_msgs' GripperCommand (MoveIt's, gripper_action_controller's)
/// or ParallelGripperCommand (parallel_gripper_action_controller's).
pub trait GripperAction: super::backend::ActionType {
    /// The position a goal asks of joint `joint`, or why it asks none.
    fn target(goal: &Self::Goal, joint: &str) -> Result<f64, TargetError>;
    fn feedback(reading: &Reading) -> Self::Feedback;
    fn result(reading: &Reading) -> Self::Result;
}

impl GripperAction for GripperCommand::Action {
    fn target(goal: &GripperCommand::Goal, _: &str) -> Result<f64, TargetError> {
        let effort = goal.command.max_effort;
        if !effort.is_finite() {
            return Err(TargetError::Effort(effort));
        }
        Ok(goal.command.position)
    }

    fn feedback(r: &Reading) -> GripperCommand::Feedback {
        GripperCommand::Feedback {
            position: r.position,
            effort: r.effort,
            stalled: r.stalled,
            reached_goal: r.reached,
        }
    }

    fn result(r: &Reading) -> GripperCommand::Result {
        GripperCommand::Result {
            position: r.position,
            effort: r.effort,
            stalled: r.stalled,
            reached_goal: r.reached,
        }
    }
}

/// The gripper's joint as a ParallelGripperCommand reports it.
fn joint_state(r: &Reading) -> JointState {
    JointState {
        name: vec![r.joint.clone()],
        position: vec![r.position],
        velocity: vec![r.velocity],
        effort: vec![r.effort],
        ..Default::default()
    }
}

impl GripperAction for ParallelGripperCommand::Action {
    /// The command names the gripper's joint (or no joint) and gives its position.
    fn target(goal: &ParallelGripperCommand::Goal, joint: &str) -> Result<f64, TargetError> {
        let command = &goal.command;
        let k = match command.name.iter().position(|n| n == joint) {
            Some(k) => k,
            None if command.name.is_empty() => 0,
            None => {
                return Err(TargetError::OtherJoints {
                    named: command.name.clone(),
                    joint: joint.to_string(),
                });
            }
        };
        let position = command.position.get(k).copied();
        position.ok_or_else(|| TargetError::NoPosition(joint.to_string()))
    }

    fn feedback(r: &Reading) -> ParallelGripperCommand::Feedback {
        ParallelGripperCommand::Feedback {
            state: joint_state(r),
        }
    }

    fn result(r: &Reading) -> ParallelGripperCommand::Result {
        ParallelGripperCommand::Result {
            state: joint_state(r),
            stalled: r.stalled,
            reached_goal: r.reached,
        }
    }
}

async fn execute<A: GripperAction>(
    handle: &SimHandle,
    ticks: &Ticks,
    goal: &super::backend::Goal<A>,
    gripper: &Gripper,
    target: f64,
    current: impl Fn() -> bool,
) -> End<A::Result> {
    let mut state = handle.latest_state_buffer();
    let result = |reading: Reading| A::result(&reading);
    let failed = |state: &StateSnapshot| End::Failed(result(gripper.reading(state, false, false)));
    let moved = || End::Failed(A::Result::default());
    if gripper.anchor.read(handle, &mut state).is_err() {
        return moved();
    }
    if !target.is_finite() || target < gripper.range[0] - 1e-9 || target > gripper.range[1] + 1e-9 {
        log::warn!(
            "gripper goal {target} is outside the range {:?}",
            gripper.range
        );
        return failed(&state);
    }
    if let Err(e) = gripper.command(handle, target) {
        log::warn!("gripper goal refused: {e}");
        return failed(&state);
    }
    let started = state.time;
    let mut still_since: Option<f64> = None;
    loop {
        ticks.next().await;
        if !current() {
            return failed(&state);
        }
        match gripper.anchor.read(handle, &mut state) {
            Err(super::WorldMoved) => return moved(),
            Ok(false) => continue,
            Ok(true) => {}
        }
        let elapsed = state.time - started;
        let (q, v) = (state.qpos[gripper.qpos], state.qvel[gripper.dof]);
        let settings = &gripper.settings;
        let reached = (q - target).abs() <= settings.goal_tolerance;
        ticks.count(goal.publish_feedback(A::feedback(&gripper.reading(&state, false, reached))));
        if reached {
            return End::Done(result(gripper.reading(&state, false, true)));
        }
        // Stopped short of the goal for a while: holding something (or blocked).
        still_since = match (
            v.abs() < settings.stall_velocity && elapsed > 0.05,
            still_since,
        ) {
            (true, None) => Some(state.time),
            (true, since) => since,
            (false, _) => None,
        };
        if still_since.is_some_and(|since| state.time - since >= settings.stall_timeout) {
            let stalled = result(gripper.reading(&state, true, false));
            return if settings.allow_stalling {
                End::Done(stalled)
            } else {
                End::Failed(stalled)
            };
        }
        if elapsed > GIVE_UP {
            return failed(&state);
        }
    }
}

impl<A> Server<A> {
    fn new(
        handle: &SimHandle,
        ticks: &Ticks,
        gripper: Gripper,
        gate: Option<Rc<super::slot::Slot>>,
    ) -> Rc<Self> {
        Rc::new(Self {
            handle: handle.clone(),
            ticks: ticks.clone(),
            gripper,
            gate,
            action: std::marker::PhantomData,
        })
    }
}

/// One gripper's action server, of action `A`.
struct Server<A> {
    handle: SimHandle,
    ticks: Ticks,
    gripper: Gripper,
    /// A controller the controller manager runs takes goals only while it is active.
    gate: Option<Rc<super::slot::Slot>>,
    action: std::marker::PhantomData<A>,
}

impl<A: GripperAction> goals::Controller for Server<A> {
    type Action = A;
    /// The goal's position.
    type Plan = f64;

    /// The position must be a number within the joint's reach.
    fn plan(&self, goal: &A::Goal) -> Result<f64, Refusal> {
        if self.gate.as_ref().is_some_and(|gate| !gate.active()) {
            return Err(Refusal::new(
                "rejected",
                "can't accept new action goals: the controller is not active",
            ));
        }
        let target = A::target(goal, &self.gripper.joint)
            .map_err(|reason| Refusal::new("INVALID_GOAL", reason.to_string()))?;
        let [lo, hi] = self.gripper.range;
        if !target.is_finite() || target < lo - 1e-9 || target > hi + 1e-9 {
            return Err(Refusal::new(
                "INVALID_GOAL",
                format!("position {target} is outside the gripper's range [{lo}, {hi}]"),
            ));
        }
        Ok(target)
    }

    async fn execute(
        self: Rc<Self>,
        goal: super::backend::Goal<A>,
        target: f64,
        owner: Owner,
    ) -> End<A::Result> {
        execute(
            &self.handle,
            &self.ticks,
            &goal,
            &self.gripper,
            target,
            || owner.current(),
        )
        .await
    }

    /// Holds the fingers where they are.
    fn cancel(&self, owner: &Owner) -> A::Result {
        let mut state = self.handle.latest_state_buffer();
        if self.gripper.anchor.read(&self.handle, &mut state).is_err() {
            return A::Result::default();
        }
        if owner.current() {
            let _ = self
                .gripper
                .command(&self.handle, state.qpos[self.gripper.qpos]);
        }
        A::result(&self.gripper.reading(&state, false, false))
    }
}

/// Serves `{prefix}{gripper}/gripper_cmd` for each configured gripper of robot `robot`;
/// `managed` holds, in the same order, what the controller manager says of those it runs.
#[allow(clippy::too_many_arguments)]
pub fn start(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    ticks: &Ticks,
    world: &crate::sim::WorldGeneration,
    robot: usize,
    configured: &[GripperController],
    managed: &[ManagedGripper],
    topic: &dyn Fn(&str) -> String,
) -> Result<(), ServeError> {
    for (k, config) in configured.iter().enumerate() {
        let field = format!("robots[{robot}].ros.grippers[{k}]");
        let by_manager = managed.get(k);
        let settings = by_manager.map(|m| m.settings);
        let gripper = Gripper::resolve(handle, world, robot, config, settings, &field)?;
        let action = topic(&format!("{}/gripper_cmd", config.name));
        let gate = by_manager.map(|m| m.slot.clone());
        if by_manager.is_some_and(|m| m.parallel) {
            let server =
                Server::<ParallelGripperCommand::Action>::new(handle, ticks, gripper, gate);
            goals::serve(node, spawner, &action, server)?;
        } else {
            let server = Server::<GripperCommand::Action>::new(handle, ticks, gripper, gate);
            goals::serve(node, spawner, &action, server)?;
        }
    }
    Ok(())
}
