//! Lidars cast with MuJoCo's `mj_multiRay` on a thread of their own, on an `MjData` mirror
//! of the newest state (so a scan never waits for a camera frame, nor the physics thread for
//! either). Rays pass through the lidar's own robot: each robot with lidars gets a view of the
//! shared model in which that robot's geoms are invisible, which MuJoCo's ray casting skips
//! (one batch call per scan, no second pass).
use super::mirror::{self, Mirror};
use super::service::{Service, Sources, Work};
use crate::model::pose;
use crate::model::sensors::{LidarSpec, PlannedLidar};
use crate::sim::{StateSnapshot, WorldGeneration};
use mujoco_rs::mujoco_c::{mj_multiRay, mjModel};
use mujoco_rs::prelude::*;
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
            _rgba: rgba,
            _matid: matid,
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
        let data = &mut self.mirror.data;
        // SAFETY: the buffers hold `count` rays (directions, geoms, distances); the header's
        // arrays are the shared model's (kept alive by `world`) and this view's own.
        unsafe {
            mj_multiRay(
                &view.header,
                data.ffi_mut(),
                &[origin.x, origin.y, origin.z],
                world.as_ptr().cast(),
                std::ptr::null(),
                true,
                -1,
                self.geoms.as_mut_ptr(),
                self.distances.as_mut_ptr(),
                std::ptr::null_mut(),
                count as i32,
                lidar.range_max,
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
