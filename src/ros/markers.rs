//! The geoms of MJCF robots as visualization_msgs/MarkerArray, so that RViz shows models that
//! have no URDF: each marker is fixed to its body's tf frame (`frame_locked`), so one latched
//! message follows the robot as it moves. Primitives become shapes; meshes are file
//! resources, placed in the mesh file's own frame (MuJoCo recentres compiled meshes; the
//! offset it applied is undone). Geoms of the groups MuJoCo's viewer shows (0 to 2) only.
use super::convert::frame_name;
use crate::model::RobotMap;
use crate::ros::interfaces::geometry_msgs::msg::{
    Point, Pose, Quaternion as RosQuaternion, Vector3 as RosVector3,
};
use crate::ros::interfaces::std_msgs::msg::{ColorRGBA, Header};
use crate::ros::interfaces::visualization_msgs::msg::Marker;
use mujoco_rs::prelude::*;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};

fn isometry(p: [f64; 3], q: [f64; 4]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(p[0], p[1], p[2]),
        UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3])),
    )
}

fn pose(at: &Isometry3<f64>) -> Pose {
    let (t, q) = (at.translation.vector, at.rotation);
    Pose {
        position: Point {
            x: t.x,
            y: t.y,
            z: t.z,
        },
        orientation: RosQuaternion {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        },
    }
}

/// The asset path MuJoCo resolved for mesh `mesh`.
fn mesh_path(model: &MjModel, mesh: usize) -> Option<String> {
    let adr = model.mesh_pathadr()[mesh];
    if adr < 0 {
        return None;
    }
    let bytes: Vec<u8> = model.paths()[adr as usize..]
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The markers of one MJCF robot's visible geoms (none for URDF robots: RViz draws those
/// from robot_description).
pub fn of_robot(model: &MjModel, robot: &RobotMap, prefixed: bool) -> Vec<Marker> {
    if robot.urdf.is_some() {
        return vec![];
    }
    let mut markers = Vec::new();
    let bodies: Vec<usize> = robot.bodies.iter().map(|b| b.id).collect();
    for geom in 0..model.ffi().ngeom.max(0) as usize {
        let body = model.geom_bodyid()[geom] as usize;
        if !bodies.contains(&body) || !(0..=2).contains(&model.geom_group()[geom]) {
            continue;
        }
        let material = model.geom_matid()[geom];
        let rgba = if material >= 0 {
            model.mat_rgba()[material as usize]
        } else {
            model.geom_rgba()[geom]
        };
        if rgba[3] <= 0.0 {
            continue;
        }
        let local = isometry(model.geom_pos()[geom], model.geom_quat()[geom]);
        let s = model.geom_size()[geom];
        let base = Marker {
            header: Header {
                stamp: Default::default(),
                frame_id: frame_name("world", robot, body, prefixed),
            },
            ns: robot.name.clone(),
            action: Marker::ADD,
            frame_locked: true,
            color: ColorRGBA {
                r: rgba[0],
                g: rgba[1],
                b: rgba[2],
                a: rgba[3],
            },
            ..Default::default()
        };
        let shape = |kind: i32, at: &Isometry3<f64>, scale: [f64; 3], part: usize| Marker {
            id: (3 * geom + part) as i32,
            type_: kind,
            pose: pose(at),
            scale: RosVector3 {
                x: scale[0],
                y: scale[1],
                z: scale[2],
            },
            ..base.clone()
        };
        match model.geom_type()[geom] {
            MjtGeomBase::mjGEOM_PLANE => {
                // An infinite plane (size 0) is drawn 20 m wide.
                let w = |v: f64| if v > 0.0 { 2.0 * v } else { 20.0 };
                markers.push(shape(Marker::CUBE, &local, [w(s[0]), w(s[1]), 0.001], 0));
            }
            MjtGeomBase::mjGEOM_SPHERE => {
                markers.push(shape(Marker::SPHERE, &local, [2.0 * s[0]; 3], 0));
            }
            MjtGeomBase::mjGEOM_ELLIPSOID => {
                let scale = [2.0 * s[0], 2.0 * s[1], 2.0 * s[2]];
                markers.push(shape(Marker::SPHERE, &local, scale, 0));
            }
            MjtGeomBase::mjGEOM_BOX => {
                let scale = [2.0 * s[0], 2.0 * s[1], 2.0 * s[2]];
                markers.push(shape(Marker::CUBE, &local, scale, 0));
            }
            MjtGeomBase::mjGEOM_CYLINDER => {
                let scale = [2.0 * s[0], 2.0 * s[0], 2.0 * s[1]];
                markers.push(shape(Marker::CYLINDER, &local, scale, 0));
            }
            MjtGeomBase::mjGEOM_CAPSULE => {
                // RViz has no capsule: a cylinder and two end spheres.
                let scale = [2.0 * s[0], 2.0 * s[0], 2.0 * s[1]];
                markers.push(shape(Marker::CYLINDER, &local, scale, 0));
                for (part, sign) in [(1, 1.0), (2, -1.0)] {
                    let end = local * Translation3::from(Vector3::new(0.0, 0.0, sign * s[1]));
                    markers.push(shape(Marker::SPHERE, &end, [2.0 * s[0]; 3], part));
                }
            }
            MjtGeomBase::mjGEOM_MESH => {
                let mesh = model.geom_dataid()[geom];
                let Some(path) = (mesh >= 0)
                    .then(|| mesh_path(model, mesh as usize))
                    .flatten()
                else {
                    continue;
                };
                let m = mesh as usize;
                // Compiled mesh = file mesh moved by (mesh_pos, mesh_quat): undo it.
                let file_frame =
                    local * isometry(model.mesh_pos()[m], model.mesh_quat()[m]).inverse();
                let mut marker =
                    shape(Marker::MESH_RESOURCE, &file_frame, model.mesh_scale()[m], 0);
                marker.mesh_resource = format!("file://{path}");
                marker.mesh_use_embedded_materials = false;
                markers.push(marker);
            }
            _ => {} // height fields and SDFs are not drawn
        }
    }
    markers
}

/// The contacts of `state` as markers in the world frame: a sphere at each contact point
/// and an arrow along its normal, `scale` meters long per newton of normal force. The first
/// marker clears those of the previous message.
pub fn contacts(
    state: &crate::sim::StateSnapshot,
    stamp: &crate::ros::interfaces::builtin_interfaces::msg::Time,
    scale: f64,
) -> Vec<Marker> {
    let header = Header {
        stamp: stamp.clone(),
        frame_id: "world".into(),
    };
    let mut markers = vec![Marker {
        header: header.clone(),
        ns: "contacts".into(),
        action: Marker::DELETEALL,
        ..Default::default()
    }];
    let color = ColorRGBA {
        r: 1.0,
        g: 0.3,
        b: 0.1,
        a: 1.0,
    };
    for (k, (p, n, force)) in state.contacts().enumerate() {
        let point = |s: f64| Point {
            x: p[0] + s * n[0],
            y: p[1] + s * n[1],
            z: p[2] + s * n[2],
        };
        let base = Marker {
            header: header.clone(),
            ns: "contacts".into(),
            action: Marker::ADD,
            color: color.clone(),
            pose: Pose {
                orientation: RosQuaternion {
                    w: 1.0,
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Default::default()
        };
        markers.push(Marker {
            id: (2 * k) as i32,
            type_: Marker::SPHERE,
            pose: Pose {
                position: point(0.0),
                ..base.pose.clone()
            },
            scale: RosVector3 {
                x: 0.02,
                y: 0.02,
                z: 0.02,
            },
            ..base.clone()
        });
        markers.push(Marker {
            id: (2 * k + 1) as i32,
            type_: Marker::ARROW,
            points: vec![point(0.0), point(force * scale)],
            scale: RosVector3 {
                x: 0.01,
                y: 0.02,
                z: 0.02,
            },
            ..base
        });
    }
    markers
}
