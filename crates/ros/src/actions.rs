//! control_msgs/FollowJointTrajectory action servers, one per joint group, as MoveIt's
//! simple controller manager expects them: `{controller}/follow_joint_trajectory`.
//!
//! A goal runs on the physics-rate trajectory follower. Its task watches the latest state
//! every cycle of the node's loop, against sim time (pausing the simulation pauses the
//! goal): it publishes feedback, aborts with PATH_TOLERANCE_VIOLATED when a joint leaves
//! its path tolerance, and ends SUCCESSFUL once the trajectory's time is over and every
//! joint is within its goal tolerance, or GOAL_TOLERANCE_VIOLATED when that has not
//! happened within the goal time tolerance. A cancel holds the joints where they are; a new
//! goal on the same controller preempts the running one (which is aborted).
use super::Ticks;
use super::goals::{self, End, Owner, Refusal};
use super::{ConfigProblem, ServeError};
use crate::config::{ControlMode, TrajectoryController, full_match_regex};
use crate::control::{ActuatorInfo, ActuatorKind, Trajectory};
use crate::controllers::GoalDefaults;
use crate::messages::control_msgs::action::FollowJointTrajectory;
use crate::messages::control_msgs::msg::JointTolerance;
use crate::messages::trajectory_msgs::msg::{JointTrajectory, JointTrajectoryPoint};
use crate::sim::{SimHandle, StateSnapshot};
use futures::StreamExt;
use futures::executor::LocalSpawner;
use std::rc::Rc;

type Action = FollowJointTrajectory::Action;
type GoalResult = FollowJointTrajectory::Result;

/// One joint of a group: its name, where the state holds it and the positions it may take.
#[derive(Clone)]
struct Joint {
    name: String,
    qpos: usize,
    dof: usize,
    /// Its limits, when it has them.
    range: Option<[f64; 2]>,
}

/// A configured (or the default) joint group of one robot.
struct Group {
    robot: usize,
    anchor: std::rc::Rc<super::Anchor>,
    joints: Vec<Joint>,
    defaults: GoalDefaults,
    /// No position or time of a goal lies beyond it (`limits.world_bound`, metres or
    /// radians and seconds).
    bound: f64,
}

/// The groups of robot `robot`: from its config, or one over every position-held joint.
fn groups(
    world: &crate::sim::WorldGeneration,
    robot: usize,
    configured: &[TrajectoryController],
    managed: &[Option<Managed>],
    field: &str,
) -> Result<Vec<(String, Group)>, ServeError> {
    let model = &world.model;
    let map = &world.robots[robot];
    let pd = world.controls.get(robot).map(|c| c.mode) == Some(ControlMode::Pd);
    let anchor = std::rc::Rc::new(super::Anchor::new(world, robot));
    // Joints an actuator holds at a position, in actuator order.
    let held: Vec<Joint> = map
        .actuators
        .iter()
        .filter_map(|a| {
            let info = ActuatorInfo::of(model, a.id);
            let (joint, qpos, dof) = info.joint?;
            if info.kind != ActuatorKind::PositionServo && !pd {
                return None;
            }
            Some(Joint {
                name: map.joints.iter().find(|j| j.id == joint)?.name.clone(),
                qpos,
                dof,
                range: model.jnt_limited()[joint].then(|| model.jnt_range()[joint]),
            })
        })
        .collect();
    if configured.is_empty() {
        if held.is_empty() {
            return Ok(vec![]);
        }
        let group = Group {
            robot,
            anchor,
            joints: held,
            defaults: GoalDefaults::of_config(0.02, 1.0),
            bound: world.config.limits.world_bound,
        };
        return Ok(vec![("joint_trajectory_controller".into(), group)]);
    }
    let mut out = Vec::new();
    for (k, controller) in configured.iter().enumerate() {
        let at = format!("{field}.trajectory_controllers[{k}]");
        let mut joints = Vec::new();
        for pattern in controller.joints.as_slice() {
            let wrong = |problem| ServeError::Config {
                field: format!("{at}.joints"),
                problem,
            };
            let regex = full_match_regex(pattern).map_err(|e| wrong(e.into()))?;
            let before = joints.len();
            joints.extend(held.iter().filter(|j| regex.is_match(&j.name)).cloned());
            if joints.len() == before {
                return Err(wrong(ConfigProblem::NoHeldJoint(pattern.clone())));
            }
        }
        let tolerance_ok = controller.goal_tolerance.is_finite() && controller.goal_tolerance > 0.0;
        let time_ok = controller.goal_time.is_finite() && controller.goal_time >= 0.0;
        if !(tolerance_ok && time_ok) {
            return Err(ServeError::Config {
                field: at,
                problem: ConfigProblem::GoalLimits,
            });
        }
        let defaults = match managed.get(k).and_then(Option::as_ref) {
            Some(managed) => managed.defaults.clone(),
            None => GoalDefaults::of_config(controller.goal_tolerance, controller.goal_time),
        };
        out.push((
            controller.name.clone(),
            Group {
                robot,
                anchor: anchor.clone(),
                joints,
                defaults,
                bound: world.config.limits.world_bound,
            },
        ));
    }
    Ok(out)
}

fn outcome(code: i32, text: impl Into<String>) -> GoalResult {
    GoalResult {
        error_code: code,
        error_string: text.into(),
    }
}

/// A tolerance per goal joint from a JointTolerance list: 0 (or unlisted) takes the joint's
/// default, a negative value turns the check off (None).
fn tolerances(
    list: &[JointTolerance],
    names: &[String],
    default: impl Fn(&str) -> Option<f64>,
) -> Vec<Option<f64>> {
    names
        .iter()
        .map(|name| match list.iter().find(|t| &t.name == name) {
            Some(t) if t.position < 0.0 => None,
            Some(t) if t.position > 0.0 => Some(t.position),
            _ => default(name),
        })
        .collect()
}

/// What a goal asks, checked against its group.
struct Plan {
    /// Index into the group's joints per goal joint.
    joints: Vec<Joint>,
    trajectory: Trajectory,
    path: Vec<Option<f64>>,
    goal: Vec<Option<f64>>,
    stopped_velocity: Option<f64>,
    /// None: no limit.
    goal_time: Option<f64>,
}

/// Checks a goal as joint_trajectory_controller does when one arrives (and what it leaves to
/// later: joint limits), so that nothing it cannot follow is accepted.
fn plan(group: &Group, goal: &FollowJointTrajectory::Goal) -> Result<Plan, Refusal> {
    let trajectory = &goal.trajectory;
    let names = &trajectory.joint_names;
    let joints = goal_joints(group, names)?;
    let n = joints.len();
    check_point_sizes(trajectory, n)?;
    let followed =
        crate::topics::convert::trajectory(trajectory).map_err(|e| invalid_goal(e.to_string()))?;
    let values = trajectory.points.iter().flat_map(|p| {
        p.positions
            .iter()
            .chain(&p.velocities)
            .chain(&p.accelerations)
            .chain(&p.effort)
    });
    if let Some(v) = values.clone().find(|v| !v.is_finite()) {
        return Err(invalid_goal(format!("a point holds {v}")));
    }
    if let Some(t) = followed.times.iter().find(|t| t.abs() > group.bound) {
        return Err(invalid_goal(format!(
            "time_from_start {t} s is beyond limits.world_bound ({})",
            group.bound
        )));
    }
    check_ranges(group, &joints, &followed.positions)?;
    let trajectory = Trajectory {
        actuators: (0..n).collect(),
        open_loop: group.defaults.open_loop,
        ..followed
    };
    trajectory
        .validate()
        .map_err(|e| invalid_goal(e.to_string()))?;
    let goal_time = crate::topics::convert::seconds(&goal.goal_time_tolerance);
    let defaults = &group.defaults;
    let goal_time = if goal_time.is_finite() && goal_time > 0.0 {
        Some(goal_time)
    } else {
        defaults.goal_time
    };
    Ok(Plan {
        path: tolerances(&goal.path_tolerance, names, |name| {
            defaults.path.get(name).copied()
        }),
        goal: tolerances(&goal.goal_tolerance, names, |name| {
            defaults.goal.get(name).copied().or(defaults.goal_otherwise)
        }),
        stopped_velocity: defaults.stopped_velocity,
        joints,
        trajectory,
        goal_time,
    })
}

fn invalid_joints(reason: String) -> Refusal {
    Refusal::new("INVALID_JOINTS (-2)", reason)
}

fn invalid_goal(reason: String) -> Refusal {
    Refusal::new("INVALID_GOAL (-1)", reason)
}

/// The group's joints a goal names, in its order: each once, all of them unless the group
/// allows partial goals.
fn goal_joints(group: &Group, names: &[String]) -> Result<Vec<Joint>, Refusal> {
    let mut joints = Vec::with_capacity(names.len().min(group.joints.len()));
    for name in names {
        match group.joints.iter().find(|j| &j.name == name) {
            Some(j) if !joints.iter().any(|k: &Joint| &k.name == name) => joints.push(j.clone()),
            Some(_) => return Err(invalid_joints(format!("joint '{name}' is listed twice"))),
            None => {
                let known: Vec<&str> = group.joints.iter().map(|j| j.name.as_str()).collect();
                return Err(invalid_joints(format!(
                    "joint '{name}' is not in this controller; it has {known:?}"
                )));
            }
        }
    }
    if joints.is_empty() {
        return Err(invalid_joints("the trajectory names no joint".into()));
    }
    if !group.defaults.allow_partial && joints.len() < group.joints.len() {
        let missing: Vec<&str> = group
            .joints
            .iter()
            .filter(|j| !names.contains(&j.name))
            .map(|j| j.name.as_str())
            .collect();
        // As joint_trajectory_controller refuses it without allow_partial_joints_goal.
        return Err(invalid_joints(format!(
            "joints on incoming goal don't match the controller joints: {missing:?} missing \
             (allow_partial_joints_goal is false)"
        )));
    }
    Ok(joints)
}

/// Each point's velocities, accelerations and efforts: none, or one per joint of `n`.
fn check_point_sizes(trajectory: &JointTrajectory, n: usize) -> Result<(), Refusal> {
    for (k, point) in trajectory.points.iter().enumerate() {
        for (what, values) in [
            ("velocities", &point.velocities),
            ("accelerations", &point.accelerations),
            ("effort", &point.effort),
        ] {
            if !values.is_empty() && values.len() != n {
                return Err(invalid_goal(format!(
                    "point {k} has {} {what} for {n} joints",
                    values.len()
                )));
            }
        }
    }
    Ok(())
}

/// Every position (joint-major per point, as `positions` holds them) within its joint's
/// range, or within `limits.world_bound` for a joint without one.
fn check_ranges(group: &Group, joints: &[Joint], positions: &[f64]) -> Result<(), Refusal> {
    let n = joints.len();
    for (k, joint) in joints.iter().enumerate() {
        for (p, position) in positions.iter().skip(k).step_by(n).enumerate() {
            let outside = match joint.range {
                Some([lo, hi]) => *position < lo - RANGE_SLACK || *position > hi + RANGE_SLACK,
                None => position.abs() > group.bound,
            };
            if outside {
                return Err(invalid_goal(format!(
                    "point {p}: joint '{}' at {position} is outside its range {}",
                    joint.name,
                    match joint.range {
                        Some([lo, hi]) => format!("[{lo}, {hi}]"),
                        None => format!("(limits.world_bound {})", group.bound),
                    }
                )));
            }
        }
    }
    Ok(())
}

/// How far past a joint limit a goal's position may lie (rounding of the numbers a planner
/// writes).
const RANGE_SLACK: f64 = 1e-6;

fn point(positions: Vec<f64>, velocities: Vec<f64>) -> JointTrajectoryPoint {
    JointTrajectoryPoint {
        positions,
        velocities,
        ..Default::default()
    }
}

/// Follows a planned goal to its end, publishing feedback; `current` tells whether it is
/// still this controller's goal.
async fn execute(
    handle: &SimHandle,
    ticks: &Ticks,
    goal: &super::backend::Goal<Action>,
    group: &Group,
    plan: Plan,
    current: impl Fn() -> bool,
) -> End<GoalResult> {
    let group_robot = group.robot;
    let moved = || {
        End::Failed(outcome(
            GoalResult::INVALID_GOAL,
            "the world changed: this robot was deleted or its joints renumbered",
        ))
    };
    let names: Vec<String> = plan.joints.iter().map(|j| j.name.clone()).collect();
    let mut state: StateSnapshot = handle.latest_state_buffer();
    match group.anchor.read(handle, &mut state) {
        Err(super::WorldMoved) => return moved(),
        Ok(false) => return End::Failed(outcome(GoalResult::INVALID_GOAL, "no state yet")),
        Ok(true) => {}
    }
    let start: Vec<f64> = plan.joints.iter().map(|j| state.qpos[j.qpos]).collect();
    let flat: Vec<&str> = names.iter().map(String::as_str).collect();
    let t = &plan.trajectory;
    let end = t.duration();
    if let Err(e) = handle.follow_trajectory(group_robot, &flat, t.clone()) {
        return End::Failed(outcome(GoalResult::INVALID_GOAL, e.to_string()));
    }
    if group.anchor.read(handle, &mut state).is_err() {
        return moved();
    }
    let started = state.time;
    loop {
        ticks.next().await;
        if !current() {
            return End::Failed(outcome(
                GoalResult::INVALID_GOAL,
                "preempted by a newer goal on this controller",
            ));
        }
        match group.anchor.read(handle, &mut state) {
            Err(super::WorldMoved) => return moved(),
            Ok(false) => continue,
            Ok(true) => {}
        }
        let elapsed = (state.time - started).max(0.0);
        let sample = Sample::of(&plan, &start, &state, elapsed.min(end));
        ticks.count(goal.publish_feedback(sample.feedback(&names, &state)));
        let ended = if elapsed < end {
            path_violation(&plan, &names, &sample.error)
        } else {
            goal_reached(&plan, &names, &sample, elapsed - end)
        };
        if let Some(ended) = ended {
            if elapsed < end {
                let _ = handle.cancel_trajectory(group_robot);
            }
            return ended;
        }
    }
}

/// The trajectory at one moment of a goal: where the joints should be and where they are.
struct Sample {
    desired: (Vec<f64>, Vec<f64>),
    actual: (Vec<f64>, Vec<f64>),
    /// Desired minus actual position, per joint.
    error: Vec<f64>,
}

impl Sample {
    /// The plan's joints at `elapsed` seconds into its trajectory (from `start`), in `state`.
    fn of(plan: &Plan, start: &[f64], state: &StateSnapshot, elapsed: f64) -> Self {
        let n = plan.joints.len();
        let mut desired = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut actual = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (k, joint) in plan.joints.iter().enumerate() {
            let (p, v) = plan.trajectory.sample(k, elapsed, start[k]);
            desired.0.push(p);
            desired.1.push(v);
            actual.0.push(state.qpos[joint.qpos]);
            actual.1.push(state.qvel[joint.dof]);
        }
        let error = desired
            .0
            .iter()
            .zip(&actual.0)
            .map(|(d, a)| d - a)
            .collect();
        Self {
            desired,
            actual,
            error,
        }
    }

    fn feedback(&self, names: &[String], state: &StateSnapshot) -> FollowJointTrajectory::Feedback {
        FollowJointTrajectory::Feedback {
            header: crate::messages::std_msgs::msg::Header {
                stamp: crate::topics::convert::time(state.time),
                frame_id: String::new(),
            },
            joint_names: names.to_vec(),
            desired: point(self.desired.0.clone(), self.desired.1.clone()),
            actual: point(self.actual.0.clone(), self.actual.1.clone()),
            error: point(self.error.clone(), vec![]),
            ..Default::default()
        }
    }
}

/// While the trajectory runs: the first joint off its path by more than its tolerance ends
/// the goal.
fn path_violation(plan: &Plan, names: &[String], error: &[f64]) -> Option<End<GoalResult>> {
    let k = plan
        .path
        .iter()
        .zip(error)
        .position(|(tol, e)| tol.is_some_and(|tol| e.abs() > tol))?;
    Some(End::Failed(outcome(
        GoalResult::PATH_TOLERANCE_VIOLATED,
        format!(
            "joint '{}' is {:.4} from its path (tolerance {:.4})",
            names[k],
            error[k].abs(),
            plan.path[k].unwrap_or(0.0)
        ),
    )))
}

/// Once the trajectory's time is over (`after` seconds ago): done when every joint is within
/// its goal tolerance and stopped; failed when that has not happened within `goal_time`.
fn goal_reached(
    plan: &Plan,
    names: &[String],
    sample: &Sample,
    after: f64,
) -> Option<End<GoalResult>> {
    let (t, n) = (&plan.trajectory, plan.joints.len());
    // Against the final point, not the sampled one (they agree once time is over).
    let last = t.times.len() - 1;
    let misses: Vec<(usize, f64)> = (0..n)
        .map(|k| (k, (t.positions[last * n + k] - sample.actual.0[k]).abs()))
        .filter(|(k, e)| plan.goal[*k].is_some_and(|tol| *e > tol))
        .collect();
    let moving = plan
        .stopped_velocity
        .and_then(|tol| sample.actual.1.iter().position(|v| v.abs() > tol));
    if misses.is_empty() && moving.is_none() {
        return Some(End::Done(outcome(GoalResult::SUCCESSFUL, "")));
    }
    let goal_time = plan.goal_time.filter(|goal_time| after > *goal_time)?;
    let text = match (misses.first(), moving) {
        (Some(&(k, e)), _) => format!(
            "joint '{}' is {e:.4} from its goal {goal_time:.3} s after the trajectory's end (tolerance {:.4})",
            names[k],
            plan.goal[k].unwrap_or(0.0)
        ),
        (None, Some(k)) => format!(
            "joint '{}' still moves at {:.4} {goal_time:.3} s after the trajectory's end (stopped_velocity_tolerance {:.4})",
            names[k],
            sample.actual.1[k].abs(),
            plan.stopped_velocity.unwrap_or(0.0)
        ),
        (None, None) => unreachable!("a goal within its tolerances has succeeded"),
    };
    Some(End::Failed(outcome(
        GoalResult::GOAL_TOLERANCE_VIOLATED,
        text,
    )))
}

/// A trajectory controller the controller manager runs: its slot (goals are taken only
/// while it is active) and what its parameters hold goals to.
pub struct Managed {
    pub slot: Rc<super::slot::Slot>,
    pub defaults: GoalDefaults,
}

/// One joint group's action server.
struct Server {
    handle: SimHandle,
    ticks: Ticks,
    group: Group,
    /// A controller the controller manager runs takes goals only while it is active.
    gate: Option<Rc<super::slot::Slot>>,
}

impl goals::Controller for Server {
    type Action = Action;
    type Plan = Plan;

    fn plan(&self, goal: &FollowJointTrajectory::Goal) -> Result<Plan, Refusal> {
        if self.gate.as_ref().is_some_and(|gate| !gate.active()) {
            // As joint_trajectory_controller answers while it is not active.
            return Err(Refusal::new(
                "rejected",
                "can't accept new action goals: the controller is not active",
            ));
        }
        plan(&self.group, goal)
    }

    async fn execute(
        self: Rc<Self>,
        goal: super::backend::Goal<Action>,
        plan: Plan,
        owner: Owner,
    ) -> End<GoalResult> {
        execute(&self.handle, &self.ticks, &goal, &self.group, plan, || {
            owner.current()
        })
        .await
    }

    fn cancel(&self, owner: &Owner) -> GoalResult {
        if owner.current() {
            let _ = self.handle.cancel_trajectory(self.group.robot);
        }
        outcome(GoalResult::SUCCESSFUL, "canceled")
    }
}

/// A joint_trajectory_controller's `~/joint_trajectory` (trajectory_msgs/JointTrajectory):
/// followed at once while the controller is active, as upstream takes it (no tolerances,
/// no result); joints not in `group` are refused by name.
fn serve_topic(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    group: &Group,
    slot: Rc<super::slot::Slot>,
    controller: &str,
) -> Result<(), ServeError> {
    use crate::messages::trajectory_msgs::msg::JointTrajectory;
    let topic = format!("{controller}/joint_trajectory");
    let mut trajectories = node
        .subscribe::<JointTrajectory>(&topic, crate::topics::Qos::DEFAULT)
        .map_err(ServeError::Middleware)?;
    let (handle, robot, open_loop) = (handle.clone(), group.robot, group.defaults.open_loop);
    let joints: Vec<String> = group.joints.iter().map(|j| j.name.clone()).collect();
    super::spawn(spawner, async move {
        while let Some(message) = trajectories.next().await {
            if !slot.active() {
                continue;
            }
            if let Some(stranger) = message.joint_names.iter().find(|j| !joints.contains(j)) {
                let _ = handle.bad_command(
                    "trajectory",
                    format!("{topic}: joint '{stranger}' is not in this controller"),
                );
                continue;
            }
            let _ = crate::topics::inputs::follow(&handle, robot, &message, &topic, open_loop);
        }
    })
    .map_err(ServeError::Middleware)
}

/// Serves `{prefix}{controller}/follow_joint_trajectory` for each group of robot `robot`;
/// `managed` holds, in the same order, what the controller manager says of those it runs.
#[allow(clippy::too_many_arguments)]
pub fn start(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    ticks: &Ticks,
    world: &crate::sim::WorldGeneration,
    robot: usize,
    configured: &[TrajectoryController],
    managed: &[Option<Managed>],
    topic: &dyn Fn(&str) -> String,
) -> Result<(), ServeError> {
    let field = format!("robots[{robot}].ros");
    for (k, (name, group)) in groups(world, robot, configured, managed, &field)?
        .into_iter()
        .enumerate()
    {
        let action = topic(&format!("{name}/follow_joint_trajectory"));
        let gate = managed
            .get(k)
            .and_then(Option::as_ref)
            .map(|m| m.slot.clone());
        if let Some(slot) = &gate {
            serve_topic(node, spawner, handle, &group, slot.clone(), &topic(&name))?;
        }
        let server = Rc::new(Server {
            handle: handle.clone(),
            ticks: ticks.clone(),
            group,
            gate,
        });
        goals::serve(node, spawner, &action, server)?;
    }
    Ok(())
}
