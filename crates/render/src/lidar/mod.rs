//! Lidars cast on a thread of their own, on an `MjData` mirror of the newest state (so a scan
//! never waits for a camera frame, nor the physics thread for either), with the answers of
//! MuJoCo's `mj_multiRay` (`cast`). Rays pass through the lidar's own robot: each robot with
//! lidars gets a view of the shared model in which that robot's geoms are invisible, which
//! MuJoCo's ray casting skips (one pass per scan, no second one).
mod cast;

use super::mirror::{self, Mirror};
use super::service::{Service, Sources, Work};
use crate::model::pose;
use crate::model::sensors::{LidarSpec, PlannedLidar};
use crate::sim::{StateSnapshot, WorldGeneration};
use cast::{RayFan, Targets};
use mujoco_rs::mujoco_c::{mj_multiRay, mjModel};
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_model::traits::ModelType;
use nalgebra::Vector3;
use std::sync::Arc;
use std::time::Duration;

/// One scan: the range of every ray (metres), +inf where nothing lies within range_max,
/// -inf where the hit is nearer than range_min (REP 117).
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Sim time of the state it was cast in.
    pub time: f64,
    pub ranges: Vec<f32>,
}

/// The caster's handle; `sources(world)` gives a world's lidars.
pub type Lidars = Service<PlannedLidar, Scan>;
/// The lidars of one world, with their scan slots.
pub type LidarSources = Sources<PlannedLidar, Scan>;

/// Starts the caster's thread, which holds no mirror until a scan is asked for;
/// `idle_release` and `nice` as for the cameras.
pub fn start(idle_release: Duration, nice: u8) -> std::io::Result<Lidars> {
    Service::start(
        "lidars",
        idle_release,
        nice,
        |world| world.sensors.lidars.clone(),
        || Caster { world: None },
    )
}

/// What lives on the caster's thread: what casting one world's lidars takes, while asked.
struct Caster {
    world: Option<WorldCasting>,
}

struct WorldCasting {
    lidars: Vec<LidarSpec>,
    /// The world's state, as every lidar sees it.
    mirror: Mirror,
    /// Per distinct set of own geoms (per robot with lidars): the model's header with the
    /// geom colours and materials that hide those geoms; each lidar's.
    views: Vec<HiddenGeoms>,
    view_of: Vec<usize>,
    /// The world the lidars were planned in (their bodies are its model's): the views'
    /// headers point into its model.
    _world: Arc<WorldGeneration>,
    /// The step and sim time of the state the mirror holds this round (None: to be set).
    shown: Option<(u64, f64)>,
    /// Per lidar: world directions of the last cast; hit geoms and distances of any.
    world_rays: Vec<Vec<[f64; 3]>>,
    /// Per lidar: its rays sorted for casting.
    fans: Vec<RayFan>,
    geoms: Vec<i32>,
    distances: Vec<f64>,
    scan: Scan,
}

/// The shared model as ray casting sees it with some geoms hidden: `mj_ray` and
/// `mj_multiRay` skip invisible geoms (alpha 0, no material), so this is a copy of the
/// model's header whose geom colours and materials point at arrays of its own. Only those two
/// arrays are copied; every other array stays the shared model's, which `world` keeps alive.
struct HiddenGeoms {
    header: mjModel,
    /// The geoms left for rays to hit.
    targets: Targets,
    /// The arrays the header points at: kept here, never read through these names.
    _rgba: Vec<f32>,
    _matid: Vec<i32>,
}

impl HiddenGeoms {
    fn new(model: &MjModel, own: &[bool]) -> Self {
        let ngeom = model.ffi().ngeom.max(0) as usize;
        let mut rgba = model.geom_rgba().as_flattened().to_vec();
        let mut matid = model.geom_matid().to_vec();
        for (geom, _) in own.iter().enumerate().take(ngeom).filter(|(_, own)| **own) {
            matid[geom] = -1;
            rgba[4 * geom + 3] = 0.0;
        }
        let mut header = model.ffi().clone();
        header.geom_rgba = rgba.as_mut_ptr();
        header.geom_matid = matid.as_mut_ptr();
        Self {
            header,
            targets: Targets::new(model, own),
            _rgba: rgba,
            _matid: matid,
        }
    }

    /// MuJoCo's own `mj_multiRay` from `origin` along each of `directions` (world frame), in
    /// `data`'s state: the geom hit (-1: none within `cutoff`) and its distance.
    fn multi_ray<M: ModelType>(
        &self,
        data: &mut MjData<M>,
        origin: [f64; 3],
        directions: &[[f64; 3]],
        geoms: &mut [i32],
        distances: &mut [f64],
        cutoff: f64,
    ) {
        let count = directions.len().min(geoms.len()).min(distances.len());
        // SAFETY: every buffer holds at least `count` rays; the header's arrays are the
        // shared model's (kept alive by its owner) and this view's.
        unsafe {
            mj_multiRay(
                &self.header,
                data.ffi_mut(),
                &origin,
                directions.as_ptr().cast(),
                std::ptr::null(),
                true,
                -1,
                geoms.as_mut_ptr(),
                distances.as_mut_ptr(),
                std::ptr::null_mut(),
                count as i32,
                cutoff,
            );
        }
    }
}

impl Work for Caster {
    type Spec = PlannedLidar;
    type Out = Scan;
    type Error = super::mirror::NoMemory;

    fn load(&mut self, sources: &LidarSources) -> Result<(), super::mirror::NoMemory> {
        let world = &sources.world;
        let lidars: Vec<LidarSpec> = sources.specs.iter().map(|l| l.spec.clone()).collect();
        let most = lidars.iter().map(|l| l.rays.len()).max().unwrap_or(0);
        let mut owners: Vec<&Vec<bool>> = Vec::new();
        let view_of = lidars
            .iter()
            .map(
                |lidar| match owners.iter().position(|own| **own == lidar.own) {
                    Some(index) => index,
                    None => {
                        owners.push(&lidar.own);
                        owners.len() - 1
                    }
                },
            )
            .collect();
        let views = owners
            .iter()
            .map(|own| HiddenGeoms::new(&world.model, own))
            .collect();
        self.world = Some(WorldCasting {
            world_rays: lidars
                .iter()
                .map(|l| vec![[0.0; 3]; l.rays.len()])
                .collect(),
            fans: lidars.iter().map(|l| RayFan::new(&l.rays)).collect(),
            mirror: Mirror::new(world.model.clone())?,
            views,
            view_of,
            lidars,
            _world: world.clone(),
            shown: None,
            geoms: vec![-1; most],
            distances: vec![0.0; most],
            scan: Scan::default(),
        });
        Ok(())
    }

    fn begin(&mut self) {
        if let Some(w) = &mut self.world {
            w.shown = None;
        }
    }

    fn make(
        &mut self,
        index: usize,
        state: &StateSnapshot,
    ) -> Result<&mut Scan, super::mirror::NoMemory> {
        let w = self.world.as_mut().ok_or(super::mirror::NoMemory)?;
        // Lidars asked for the same sample share one kinematics pass.
        if w.shown != Some((state.step, state.time)) {
            mirror::set(state, &mut w.mirror.data);
            w.mirror.data.kinematics();
            w.shown = Some((state.step, state.time));
        }
        w.cast(index, state);
        Ok(&mut w.scan)
    }

    fn unload(&mut self) {
        self.world = None;
    }

    fn release(&mut self) {
        self.world = None;
    }
}

impl WorldCasting {
    /// Casts lidar `index`'s rays in `state` (the mirror's) into `self.scan`.
    fn cast(&mut self, index: usize, state: &StateSnapshot) {
        let lidar = &self.lidars[index];
        let body = pose::body_pose(&state.xpos, &state.xquat_wxyz, lidar.body);
        let mount = pose::isometry(&lidar.xyz, &lidar.quat_wxyz);
        let frame = body * mount;
        let origin = frame.translation.vector;
        let world = &mut self.world_rays[index];
        let rotation = frame.rotation.to_rotation_matrix();
        for (ray, out) in lidar.rays.iter().zip(world.iter_mut()) {
            let d = rotation * Vector3::new(ray[0], ray[1], ray[2]);
            *out = [d.x, d.y, d.z];
        }
        let count = lidar.rays.len();
        let view = &self.views[self.view_of[index]];
        let (geoms, distances) = (&mut self.geoms[..count], &mut self.distances[..count]);
        if view.targets.needs_mujoco {
            let origin = [origin.x, origin.y, origin.z];
            let data = &mut self.mirror.data;
            view.multi_ray(data, origin, world, geoms, distances, lidar.range_max);
        } else {
            let (fan, turn) = (&self.fans[index], rotation.matrix());
            let data = &self.mirror.data;
            let cutoff = lidar.range_max;
            (view.targets).cast(
                &view.header,
                data,
                fan,
                &origin,
                turn,
                world,
                geoms,
                distances,
                cutoff,
            );
        }
        self.scan.time = state.time;
        self.scan.ranges.resize(count, 0.0);
        let hits = self.geoms.iter().zip(&self.distances);
        for (out, (&geom, &distance)) in self.scan.ranges.iter_mut().zip(hits) {
            *out = if geom < 0 || distance < 0.0 || distance > lidar.range_max {
                f32::INFINITY
            } else if distance < lidar.range_min {
                f32::NEG_INFINITY
            } else {
                distance as f32
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, UnitQuaternion};

    /// Every geom kind `mj_multiRay` casts against, around a lidar on a robot of its own
    /// (hidden from it), with an invisible geom and one whose material is invisible.
    const SCENE: &str = r#"
<mujoco>
  <asset>
    <mesh name="wedge" vertex="0 0 0  0.6 0 0  0 0.6 0  0 0 0.5  0.6 0 0.5  0 0.6 0.5"/>
    <hfield name="bumps" nrow="3" ncol="4" size="1 1 0.3 0.1"
            elevation="0 1 0 1  1 0 1 0  0 1 0 1"/>
    <material name="glass" rgba="1 1 1 0"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <geom type="box" pos="3 0 0.5" size="0.3 1 0.5"/>
    <geom type="sphere" pos="-2 1 0.7" size="0.4"/>
    <geom type="capsule" pos="0 -2.5 0.6" size="0.2 0.5" euler="30 40 0"/>
    <geom type="cylinder" pos="-1 -3 0.2" size="0.3 0.8"/>
    <geom type="ellipsoid" pos="1.5 2 1" size="0.5 0.2 0.3"/>
    <geom type="mesh" mesh="wedge" pos="-3 -1 0"/>
    <geom type="hfield" hfield="bumps" pos="0 3.2 0"/>
    <geom type="box" pos="0 0 3" size="2 2 0.05"/>
    <geom type="box" pos="2 -2 0.5" size="0.3 0.3 0.3" rgba="1 0 0 0"/>
    <geom type="box" pos="-2 -2 0.5" size="0.3 0.3 0.3" material="glass"/>
    <body name="robot" pos="0 0 0.8">
      <freejoint/>
      <geom type="box" size="0.3 0.2 0.1"/>
      <geom type="sphere" pos="0.3 0 0.15" size="0.08"/>
    </body>
  </worldbody>
</mujoco>"#;

    fn fan(channels: usize, samples: usize, low: f64, high: f64) -> Vec<[f64; 3]> {
        let mut rays = Vec::new();
        for channel in 0..channels {
            let t = channel as f64 / (channels.max(2) - 1) as f64;
            let elevation = (low + (high - low) * t).to_radians();
            for sample in 0..samples {
                let azimuth = std::f64::consts::TAU * sample as f64 / samples as f64;
                let (s, c) = elevation.sin_cos();
                rays.push([c * azimuth.cos(), c * azimuth.sin(), s]);
            }
        }
        rays
    }

    #[test]
    fn hits_are_mj_multiray_s() {
        let model = MjModel::from_xml_string(SCENE).unwrap();
        let mut data = model.make_data();
        data.kinematics();
        let robot = model.body_geomadr()[1] as usize;
        let own: Vec<bool> = (0..model.ffi().ngeom as usize)
            .map(|g| g >= robot)
            .collect();
        let view = HiddenGeoms::new(&model, &own);
        assert!(!view.targets.needs_mujoco);
        let fans = [
            fan(16, 1800, -15.0, 15.0),
            fan(1, 720, 0.0, 0.0),
            fan(40, 90, -89.0, 89.0),
        ];
        let turns = [
            UnitQuaternion::identity(),
            UnitQuaternion::from_euler_angles(0.3, -0.5, 2.0),
            UnitQuaternion::from_euler_angles(1.5, 0.2, -0.7),
        ];
        let (mut compared, mut hit) = (0, 0);
        let mut seen = std::collections::BTreeSet::new();
        for rays in &fans {
            let sorted = RayFan::new(rays);
            for turn in &turns {
                let rotation: Rotation3<f64> = turn.to_rotation_matrix();
                let origin = Vector3::new(0.1, 0.2, 0.85);
                let world: Vec<[f64; 3]> = rays
                    .iter()
                    .map(|r| (rotation * Vector3::from(*r)).into())
                    .collect();
                let count = rays.len();
                let (mut geoms, mut distances) = (vec![0; count], vec![0.0; count]);
                let (mut theirs, mut their_distances) = (vec![0; count], vec![0.0; count]);
                let cutoff = 4.0;
                (view.targets).cast(
                    &view.header,
                    &data,
                    &sorted,
                    &origin,
                    rotation.matrix(),
                    &world,
                    &mut geoms,
                    &mut distances,
                    cutoff,
                );
                let at = [origin.x, origin.y, origin.z];
                let (theirs, their_distances) = (&mut theirs, &mut their_distances);
                view.multi_ray(&mut data, at, &world, theirs, their_distances, cutoff);
                for ray in 0..count {
                    let within = |d: f64| d >= 0.0 && d <= cutoff;
                    let mine = within(distances[ray]).then_some((geoms[ray], distances[ray]));
                    let mujoco =
                        within(their_distances[ray]).then_some((theirs[ray], their_distances[ray]));
                    assert_eq!(mine, mujoco, "ray {ray} of {count}, turned {turn:?}");
                    assert!(mine.is_none_or(|(geom, _)| !own[geom as usize]));
                    hit += usize::from(mine.is_some());
                    seen.extend(mine.map(|(geom, _)| geom));
                    compared += 1;
                }
            }
        }
        // Many rays hit something within the cutoff (floor, walls, ceiling): the comparison
        // covers hits, not only misses.
        assert!(hit * 3 > compared, "{hit} of {compared} rays hit");
        // ... and every kind: the nine visible geoms, none of the hidden ones.
        assert_eq!(seen, (0..9).collect(), "geoms hit");
    }
}
