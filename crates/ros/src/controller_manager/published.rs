//! What the manager's controllers publish while they are active, from the latest state at
//! the robot's `ros.rates.joint_states` (sim time): a joint_state_broadcaster's
//! `dynamic_joint_states` (control_msgs/DynamicJointState: each joint's interfaces and
//! values) and a joint_trajectory_controller's `~/controller_state`
//! (control_msgs/JointTrajectoryControllerState: reference, feedback, error and output of
//! its joints, the reference being what its position servos are commanded).
use super::{Manager, Slot};
use crate::control::ActuatorInfo;
use crate::controllers::kinds::{self, Kind};
use crate::messages::control_msgs::msg::{
    DynamicJointState, InterfaceValue, JointTrajectoryControllerState,
};
use crate::messages::std_msgs::msg::Header;
use crate::messages::trajectory_msgs::msg::JointTrajectoryPoint;
use crate::sim::{SimHandle, StateSnapshot, WorldGeneration};
use crate::topics::Qos;
use crate::{Anchor, Ticks};
use futures::executor::LocalSpawner;
use std::rc::Rc;

/// Where a joint's values lie in the state, and its position servo's control, if any.
#[derive(Clone, Copy)]
struct JointSlots {
    qpos: usize,
    dof: usize,
    ctrl: Option<usize>,
}

fn slots(world: &WorldGeneration, robot: usize, joints: &[String]) -> Vec<JointSlots> {
    let (model, map) = (&world.model, &world.robots[robot]);
    joints
        .iter()
        .filter_map(|name| {
            let id = map.joint(name)?.id;
            let ctrl = map.actuators.iter().find_map(|a| {
                let info = ActuatorInfo::of(model, a.id);
                (info.joint.map(|(j, _, _)| j) == Some(id)).then_some(a.id)
            });
            Some(JointSlots {
                qpos: model.jnt_qposadr()[id] as usize,
                dof: model.jnt_dofadr()[id] as usize,
                ctrl,
            })
        })
        .collect()
}

/// Waits for the next publication time (every `period` s of sim time, 0: never) with the
/// controller active, and reads the latest state into `state`; None once the world moved.
struct Pace {
    anchor: Anchor,
    period: f64,
    next: f64,
}

impl Pace {
    async fn next(
        &mut self,
        handle: &SimHandle,
        ticks: &Ticks,
        slot: &Slot,
        state: &mut StateSnapshot,
    ) -> Option<()> {
        loop {
            ticks.next().await;
            if self.period <= 0.0 || !slot.active() {
                continue;
            }
            match self.anchor.read(handle, state) {
                Err(crate::WorldMoved) => return None,
                Ok(false) => continue,
                Ok(true) => {}
            }
            if state.time + 1e-9 < self.next {
                continue;
            }
            self.next = (self.next + self.period).max(state.time);
            return Some(());
        }
    }
}

/// The declared controllers of `wanted` kind of robot `robot` (`only`: that one) that fit
/// it, with their slots and configured joints.
fn declared_of(
    manager: &Manager,
    world: &WorldGeneration,
    robot: usize,
    only: Option<&str>,
    wanted: Kind,
) -> Vec<(String, Rc<Slot>, kinds::Configured)> {
    let map = &world.robots[robot];
    super::of_robot(manager, world, robot, only, |k| k == wanted)
        .into_iter()
        .filter_map(|of| {
            let configured = kinds::configure(of.kind, &of.controller, &world.model, map).ok()?;
            Some((of.name, of.slot, configured))
        })
        .collect()
}

/// Starts the publications of robot `robot`'s joint_state_broadcasters and
/// joint_trajectory_controllers (`only`: of that one). `topic` puts a name under the
/// robot's namespace.
#[allow(clippy::too_many_arguments)]
pub fn start(
    node: &mut crate::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    ticks: &Ticks,
    world: &WorldGeneration,
    robot: usize,
    manager: &Manager,
    only: Option<&str>,
    topic: &dyn Fn(&str) -> String,
) -> Result<(), crate::Error> {
    let rate = world.config.ros.rates.joint_states;
    let period = if rate > 0.0 { 1.0 / rate } else { 0.0 };
    let pace = || Pace {
        anchor: Anchor::new(world, robot),
        period,
        next: 0.0,
    };
    for (_, slot, configured) in
        declared_of(manager, world, robot, only, Kind::JointStateBroadcaster)
    {
        let joints = configured.joints.clone();
        let slots = slots(world, robot, &joints);
        // Its interfaces, in the order its state interfaces list them for the first joint.
        let interfaces: Vec<String> = configured
            .interfaces
            .state
            .iter()
            .filter_map(|i| i.strip_prefix(&format!("{}/", joints.first()?)))
            .map(str::to_string)
            .collect();
        let publisher =
            node.publisher::<DynamicJointState>(&topic("dynamic_joint_states"), Qos::STATE)?;
        let (handle, ticks, mut pace) = (handle.clone(), ticks.clone(), pace());
        crate::spawn(spawner, async move {
            let mut state = handle.latest_state_buffer();
            let mut message = DynamicJointState {
                joint_names: joints,
                ..Default::default()
            };
            while pace
                .next(&handle, &ticks, &slot, &mut state)
                .await
                .is_some()
            {
                fill_dynamic(&mut message, &slots, &interfaces, &state);
                ticks.count(publisher.publish(&message));
            }
        })?;
    }
    for (name, slot, configured) in declared_of(manager, world, robot, only, Kind::Trajectory) {
        let slots = slots(world, robot, &configured.joints);
        let publisher = node.publisher::<JointTrajectoryControllerState>(
            &topic(&format!("{name}/controller_state")),
            Qos::STATE,
        )?;
        let (handle, ticks, mut pace) = (handle.clone(), ticks.clone(), pace());
        let joints = configured.joints;
        crate::spawn(spawner, async move {
            let mut state = handle.latest_state_buffer();
            let mut message = JointTrajectoryControllerState {
                joint_names: joints,
                speed_scaling_factor: 1.0,
                ..Default::default()
            };
            while pace
                .next(&handle, &ticks, &slot, &mut state)
                .await
                .is_some()
            {
                fill_controller_state(&mut message, &slots, &state);
                ticks.count(publisher.publish(&message));
            }
        })?;
    }
    Ok(())
}

/// A joint_state_broadcaster's `dynamic_joint_states`: each joint's interfaces, in order.
fn fill_dynamic(
    message: &mut DynamicJointState,
    slots: &[JointSlots],
    interfaces: &[String],
    state: &StateSnapshot,
) {
    message.header = header(state);
    message.interface_values = slots
        .iter()
        .map(|s| InterfaceValue {
            interface_names: interfaces.to_vec(),
            values: interfaces
                .iter()
                .map(|i| match i.as_str() {
                    "position" => state.qpos[s.qpos],
                    "velocity" => state.qvel[s.dof],
                    _ => state.qfrc_actuator[s.dof],
                })
                .collect(),
        })
        .collect();
}

/// A trajectory controller's state: its reference is the position command held (the joint's
/// own position where none is).
fn fill_controller_state(
    message: &mut JointTrajectoryControllerState,
    slots: &[JointSlots],
    state: &StateSnapshot,
) {
    let feedback: Vec<f64> = slots.iter().map(|s| state.qpos[s.qpos]).collect();
    let reference: Vec<f64> = slots
        .iter()
        .zip(&feedback)
        .map(|(s, q)| s.ctrl.map_or(*q, |c| state.ctrl[c]))
        .collect();
    message.header = header(state);
    message.error = point(reference.iter().zip(&feedback).map(|(r, q)| r - q));
    message.feedback = JointTrajectoryPoint {
        positions: feedback,
        velocities: slots.iter().map(|s| state.qvel[s.dof]).collect(),
        ..Default::default()
    };
    message.output = point(reference.iter().copied());
    message.reference = point(reference.into_iter());
}

fn header(state: &StateSnapshot) -> Header {
    Header {
        stamp: crate::topics::convert::time(state.time),
        frame_id: String::new(),
    }
}

fn point(positions: impl Iterator<Item = f64>) -> JointTrajectoryPoint {
    JointTrajectoryPoint {
        positions: positions.collect(),
        ..Default::default()
    }
}
