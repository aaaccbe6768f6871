//! Per-robot name maps: which joints, actuators, sensors, bodies, sites, cameras and keyframes
//! of the composed model belong to a robot, under their own (unprefixed) names.
use mujoco_rs::prelude::*;

#[derive(Debug, Clone, PartialEq)]
pub struct NamedId {
    /// MuJoCo's global index of the element.
    pub id: usize,
    /// The element's own name, without the robot prefix.
    pub name: String,
    /// The name in the composed model (`{robot}_{name}`).
    pub full_name: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RobotMap {
    pub name: String,
    pub prefix: String,
    /// File the robot came from, or a stand-in for a string model.
    pub origin: String,
    /// The URDF text when the model came from URDF (published as `robot_description`).
    pub urdf: Option<String>,
    /// The robot's root body (the first body of its subtree).
    pub root_body: Option<usize>,
    /// The free joint of a floating-base robot.
    pub floating_joint: Option<usize>,
    pub joints: Vec<NamedId>,
    pub actuators: Vec<NamedId>,
    pub sensors: Vec<NamedId>,
    pub bodies: Vec<NamedId>,
    pub sites: Vec<NamedId>,
    pub cameras: Vec<NamedId>,
    pub keyframes: Vec<NamedId>,
    /// The legacy action-key bitmask the robot starts with (config `zmq.actions`).
    pub actions: i32,
    /// URDF robots: whether the root floats and why (for `--summary`).
    pub base_rule: Option<String>,
    /// URDF robots declaring no actuator: the servos generated for them.
    pub actuator_rule: Option<String>,
    /// URDF robots: the servo gains the rule gave (`model::gains`), when it gave any.
    pub servo_gains: Option<String>,
    /// URDF robots: the one-line count of repairs made at load, if any.
    pub repairs: Option<String>,
    /// URDF robots: the `<ros2_control>` sensors, naming MuJoCo sensors.
    pub hardware_sensors: Vec<crate::config::broadcasters::HardwareSensor>,
    /// URDF robots: what its `<gazebo>` blocks gave, one line each (for `--summary`).
    pub gazebo: Vec<String>,
}

fn named(model: &MjModel, kind: MjtObjBase, count: usize, prefix: &str) -> Vec<NamedId> {
    (0..count)
        .filter_map(|id| {
            let full = model.id_to_name(kind, id)?;
            let short = full.strip_prefix(prefix)?;
            Some(NamedId {
                id,
                name: short.to_string(),
                full_name: full.to_string(),
            })
        })
        .collect()
}

impl RobotMap {
    pub fn build(
        model: &MjModel,
        name: &str,
        prefix: &str,
        origin: String,
        urdf: Option<String>,
    ) -> Self {
        let n = |v: i64| v.max(0) as usize;
        let ffi = model.ffi();
        let joints = named(model, MjtObjBase::mjOBJ_JOINT, n(ffi.njnt), prefix);
        let bodies = named(model, MjtObjBase::mjOBJ_BODY, n(ffi.nbody), prefix);
        let floating_joint = joints
            .iter()
            .map(|j| j.id)
            .find(|id| model.jnt_type()[*id] == MjtJoint::mjJNT_FREE);
        Self {
            name: name.to_string(),
            prefix: prefix.to_string(),
            origin,
            urdf,
            root_body: bodies.first().map(|b| b.id),
            floating_joint,
            joints,
            actuators: named(model, MjtObjBase::mjOBJ_ACTUATOR, n(ffi.nu), prefix),
            sensors: named(model, MjtObjBase::mjOBJ_SENSOR, n(ffi.nsensor), prefix),
            bodies,
            sites: named(model, MjtObjBase::mjOBJ_SITE, n(ffi.nsite), prefix),
            cameras: named(model, MjtObjBase::mjOBJ_CAMERA, n(ffi.ncam), prefix),
            keyframes: named(model, MjtObjBase::mjOBJ_KEY, n(ffi.nkey), prefix),
            actions: 0,
            base_rule: None,
            servo_gains: None,
            actuator_rule: None,
            repairs: None,
            hardware_sensors: Vec::new(),
            gazebo: Vec::new(),
        }
    }

    pub fn joint(&self, name: &str) -> Option<&NamedId> {
        self.joints.iter().find(|j| j.name == name)
    }

    pub fn actuator(&self, name: &str) -> Option<&NamedId> {
        self.actuators.iter().find(|a| a.name == name)
    }

    pub fn body(&self, name: &str) -> Option<&NamedId> {
        self.bodies.iter().find(|b| b.name == name)
    }

    pub fn sensor(&self, name: &str) -> Option<&NamedId> {
        self.sensors.iter().find(|s| s.name == name)
    }

    pub fn keyframe(&self, name: &str) -> Option<&NamedId> {
        self.keyframes.iter().find(|k| k.name == name)
    }
}
