//! Which rows each articulation publishes, in the legacy order, with their topics and the
//! state indices they read: planned once from the model, then encoded per step from a tap
//! row `[step, time, qpos, qvel, qacc, sensordata]`.
use super::codec::{self, ActuatorList, CameraStream, UNLIMITED_RANGE};
use crate::model::RobotMap;
use mujoco_rs::prelude::*;

#[derive(Debug, Clone, PartialEq)]
enum RowKind {
    /// Hinge, slide or ball (a ball sends its first component).
    Joint {
        joint_id: i32,
        qpos: usize,
        dof: usize,
    },
    /// A free joint: position and quaternion from qpos, 6 velocities from qvel.
    Base { qpos: usize, dof: usize },
    Sensor {
        sensor_id: i32,
        adr: usize,
        dim: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
struct Row {
    topic: Vec<u8>,
    kind: RowKind,
}

/// The rows of one articulation.
#[derive(Debug, Clone)]
pub struct ArticulationRows {
    /// Index of the robot in the world.
    pub robot: usize,
    pub name: String,
    rows: Vec<Row>,
    twist_topic: Vec<u8>,
    actions_topic: Vec<u8>,
    /// The discovery message (JSON) of this articulation.
    pub discovery: String,
}

/// Offsets of the parts of a tap row.
#[derive(Debug, Clone, Copy)]
pub struct TapOffsets {
    qpos: usize,
    qvel: usize,
    qacc: usize,
    sensordata: usize,
}

impl TapOffsets {
    pub fn of(model: &MjModel) -> Self {
        let f = model.ffi();
        let (nq, nv) = (f.nq as usize, f.nv as usize);
        Self {
            qpos: 2,
            qvel: 2 + nq,
            qacc: 2 + nq + nv,
            sensordata: 2 + nq + 2 * nv,
        }
    }
}

impl ArticulationRows {
    /// `cameras`: every camera stream of the scene, for the discovery JSON.
    pub fn plan(model: &MjModel, robot: &RobotMap, index: usize, cameras: &[CameraStream]) -> Self {
        let mut rows = Vec::new();
        // Joints in model order: free joints as base_state rows, the others as joint rows.
        for joint in &robot.joints {
            let (qpos, dof) = (
                model.jnt_qposadr()[joint.id] as usize,
                model.jnt_dofadr()[joint.id] as usize,
            );
            let (topic, kind) = if model.jnt_type()[joint.id] == MjtJoint::mjJNT_FREE {
                (
                    format!("{}/base_state/{}", robot.name, joint.name),
                    RowKind::Base { qpos, dof },
                )
            } else {
                (
                    format!("{}/joint/{}", robot.name, joint.name),
                    RowKind::Joint {
                        joint_id: joint.id as i32,
                        qpos,
                        dof,
                    },
                )
            };
            rows.push(Row {
                topic: topic.into_bytes(),
                kind,
            });
        }
        for sensor in &robot.sensors {
            let (adr, dim) = (
                model.sensor_adr()[sensor.id] as usize,
                model.sensor_dim()[sensor.id] as usize,
            );
            rows.push(Row {
                topic: format!("{}/sensor/{}", robot.name, sensor.name).into_bytes(),
                kind: RowKind::Sensor {
                    sensor_id: sensor.id as i32,
                    adr,
                    dim,
                },
            });
        }
        let mut list = ActuatorList {
            kind: "actuator_list",
            robot: robot.name.clone(),
            names: Vec::new(),
            ids: Vec::new(),
            mins: Vec::new(),
            maxs: Vec::new(),
            camera_list: cameras.to_vec(),
        };
        for actuator in &robot.actuators {
            let [lo, hi] = if model.actuator_ctrllimited()[actuator.id] {
                model.actuator_ctrlrange()[actuator.id]
            } else {
                UNLIMITED_RANGE
            };
            list.names.push(actuator.full_name.clone());
            list.ids.push(actuator.id as i32);
            list.mins.push(lo);
            list.maxs.push(hi);
        }
        Self {
            robot: index,
            name: robot.name.clone(),
            rows,
            twist_topic: format!("{}/twist", robot.name).into_bytes(),
            actions_topic: format!("{}/actions", robot.name).into_bytes(),
            discovery: list.to_json(),
        }
    }

    /// Encodes this articulation's rows of one step, in order, through `send(topic, payload)`:
    /// joint, base and sensor rows, then twist, then actions when non-zero.
    pub fn encode(
        &self,
        tap: &[f64],
        at: &TapOffsets,
        twist: [f64; 3],
        actions: i32,
        scratch: &mut Vec<u8>,
        send: &mut impl FnMut(&[u8], &[u8]),
    ) {
        for row in &self.rows {
            match row.kind {
                RowKind::Joint {
                    joint_id,
                    qpos,
                    dof,
                } => {
                    let payload = codec::joint_row(
                        joint_id,
                        tap[at.qpos + qpos],
                        tap[at.qvel + dof],
                        tap[at.qacc + dof],
                    );
                    send(&row.topic, &payload);
                }
                RowKind::Base { qpos, dof } => {
                    let payload = codec::base_state_row(
                        &tap[at.qpos + qpos..at.qpos + qpos + 7],
                        &tap[at.qvel + dof..at.qvel + dof + 6],
                    );
                    send(&row.topic, &payload);
                }
                RowKind::Sensor {
                    sensor_id,
                    adr,
                    dim,
                } => {
                    codec::sensor_row(
                        scratch,
                        sensor_id,
                        &tap[at.sensordata + adr..at.sensordata + adr + dim],
                    );
                    send(&row.topic, scratch);
                }
            }
        }
        send(&self.twist_topic, &codec::twist_row(twist));
        if let Some(payload) = codec::actions_row(actions) {
            send(&self.actions_topic, &payload);
        }
    }

    /// Rows per step without the actions row: joints, sensors, twist.
    pub fn rows_per_step(&self) -> usize {
        self.rows.len() + 1
    }
}
