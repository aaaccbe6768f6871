//! The geoms of MJCF robots as visualization_msgs/MarkerArray, so that RViz shows models that
//! have no URDF: each marker is fixed to its body's tf frame (`frame_locked`), so one latched
//! message follows the robot as it moves. Primitives become shapes; meshes are file
//! resources, placed in the mesh file's own frame (MuJoCo recentres compiled meshes; the
//! offset it applied is undone). Geoms of the groups MuJoCo's viewer shows (0 to 2) only.
use super::{Output, Plan, PlanError, Schedule, Tick, Topic};
use crate::model::RobotMap;
use crate::model::pose::isometry;
use crate::Qos;
use crate::convert::frame_name;
use crate::messages::geometry_msgs::msg::Vector3 as RosVector3;
use crate::messages::std_msgs::msg::{ColorRGBA, Header};
use crate::messages::visualization_msgs::msg::{Marker, MarkerArray};
use mujoco_rs::prelude::*;
use nalgebra::{Isometry3, Translation3, Vector3};

/// `~/markers`, latched: the geoms of every MJCF robot in one message.
pub struct Markers {
    topic: Topic,
    message: MarkerArray,
}

pub fn plan(plan: &mut Plan) -> Result<(), PlanError> {
    let markers = plan
        .robots
        .iter()
        .enumerate()
        .flat_map(|(i, r)| of_robot(plan.model, r, plan.prefixed(i)))
        .collect();
    plan.add(Markers {
        topic: Topic {
            name: "~/markers".into(),
            schedule: Schedule::Once,
            qos: Qos::LATCHED,
        },
        message: MarkerArray { markers },
    });
    Ok(())
}

impl Output for Markers {
    type Message = MarkerArray;

    fn topic(&self) -> &Topic {
        &self.topic
    }

    fn fill(&mut self, _tick: &Tick) -> Option<&MarkerArray> {
        Some(&self.message)
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
fn of_robot(model: &MjModel, robot: &RobotMap, prefixed: bool) -> Vec<Marker> {
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
        let local = isometry(&model.geom_pos()[geom], &model.geom_quat()[geom]);
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
        markers.extend(shapes(model, geom, &local, &base));
    }
    markers
}

/// The markers that draw geom `geom` at `local` (in its body's frame), from `base`: one per
/// shape, three for a capsule; none for height fields and SDFs.
fn shapes(model: &MjModel, geom: usize, local: &Isometry3<f64>, base: &Marker) -> Vec<Marker> {
    let local = *local;
    let s = model.geom_size()[geom];
    let mut shapes = Vec::new();
    let shape = |kind: i32, at: &Isometry3<f64>, scale: [f64; 3], part: usize| Marker {
        id: (3 * geom + part) as i32,
        type_: kind,
        pose: at.into(),
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
            shapes.push(shape(Marker::CUBE, &local, [w(s[0]), w(s[1]), 0.001], 0));
        }
        MjtGeomBase::mjGEOM_SPHERE => {
            shapes.push(shape(Marker::SPHERE, &local, [2.0 * s[0]; 3], 0));
        }
        MjtGeomBase::mjGEOM_ELLIPSOID => {
            let scale = [2.0 * s[0], 2.0 * s[1], 2.0 * s[2]];
            shapes.push(shape(Marker::SPHERE, &local, scale, 0));
        }
        MjtGeomBase::mjGEOM_BOX => {
            let scale = [2.0 * s[0], 2.0 * s[1], 2.0 * s[2]];
            shapes.push(shape(Marker::CUBE, &local, scale, 0));
        }
        MjtGeomBase::mjGEOM_CYLINDER => {
            let scale = [2.0 * s[0], 2.0 * s[0], 2.0 * s[1]];
            shapes.push(shape(Marker::CYLINDER, &local, scale, 0));
        }
        MjtGeomBase::mjGEOM_CAPSULE => {
            // RViz has no capsule: a cylinder and two end spheres.
            let scale = [2.0 * s[0], 2.0 * s[0], 2.0 * s[1]];
            shapes.push(shape(Marker::CYLINDER, &local, scale, 0));
            for (part, sign) in [(1, 1.0), (2, -1.0)] {
                let end = local * Translation3::from(Vector3::new(0.0, 0.0, sign * s[1]));
                shapes.push(shape(Marker::SPHERE, &end, [2.0 * s[0]; 3], part));
            }
        }
        MjtGeomBase::mjGEOM_MESH => {
            let mesh = model.geom_dataid()[geom];
            let Some(path) = (mesh >= 0)
                .then(|| mesh_path(model, mesh as usize))
                .flatten()
            else {
                return shapes;
            };
            let m = mesh as usize;
            // Compiled mesh = file mesh moved by (mesh_pos, mesh_quat): undo it.
            let file_frame =
                local * isometry(&model.mesh_pos()[m], &model.mesh_quat()[m]).inverse();
            let mut marker =
                shape(Marker::MESH_RESOURCE, &file_frame, model.mesh_scale()[m], 0);
            marker.mesh_resource = format!("file://{path}");
            marker.mesh_use_embedded_materials = false;
            shapes.push(marker);
        }
        _ => {} // height fields and SDFs are not drawn
    }
    shapes
}


#[cfg(test)]
mod tests {
    use super::super::fixture::{Fixture, number};

    #[test]
    fn draws_the_geoms_of_mjcf_robots_on_their_bodies() {
        let mut f = Fixture::new("");
        let (m, _) = f.message(0, "~/markers");
        let markers = m["markers"].as_array().unwrap();
        let base = markers
            .iter()
            .find(|m| m["header"]["frame_id"] == "base")
            .unwrap();
        assert_eq!(base["type"], super::Marker::CUBE);
        assert_eq!(number(&base["scale"]["x"]), 0.4);
        assert_eq!(base["frame_locked"], true);
        // The capsule: a cylinder and its two end spheres.
        let arm = markers
            .iter()
            .filter(|m| m["header"]["frame_id"] == "arm")
            .count();
        assert_eq!(arm, 3);
    }
}
