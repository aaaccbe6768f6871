//! Lidars cast with MuJoCo's `mj_multiRay` on a thread of their own, on `MjData` mirrors of
//! the newest state (so a scan never waits for a camera frame, nor the physics thread for
//! either). Rays pass through the lidar's own robot: each robot with lidars gets a mirror of
//! its own on a copy of the model in which that robot's geoms are invisible, which MuJoCo's
//! ray casting skips (one batch call per scan, no second pass).
use super::frame::{Handover, WorkerSide};
use super::mirror;
use crate::model::pose;
use crate::sim::{SimHandle, StateSnapshot};
use mujoco_rs::mujoco_c::{mj_multiRay, mjModel};
use mujoco_rs::prelude::*;
use nalgebra::Vector3;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One lidar as the caster takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct LidarSpec {
    pub body: usize,
    pub xyz: [f64; 3],
    pub quat_wxyz: [f64; 4],
    /// Unit directions in the lidar's frame.
    pub rays: Vec<[f64; 3]>,
    pub range_min: f64,
    pub range_max: f64,
    /// Per geom: it belongs to the lidar's robot.
    pub own: Vec<bool>,
}

/// One scan: the range of every ray (metres), +inf where nothing lies within range_max,
/// -inf where the hit is nearer than range_min (REP 117).
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Sim time of the state it was cast in.
    pub time: f64,
    pub ranges: Vec<f32>,
}

/// The caster's handle: ask for scans (`request`), read them from the slots.
pub struct Lidars {
    handover: Handover<Scan>,
}

impl std::ops::Deref for Lidars {
    type Target = Handover<Scan>;
    fn deref(&self) -> &Handover<Scan> {
        &self.handover
    }
}

impl Lidars {
    /// Starts the caster for the current world.
    pub fn start(handle: SimHandle, lidars: Vec<LidarSpec>) -> Result<Self, std::io::Error> {
        Self::start_in(handle.world(), lidars)
    }

    /// `start` for world `world`, the one the lidars were planned in.
    pub fn start_in(
        world: Arc<crate::sim::WorldGeneration>,
        lidars: Vec<LidarSpec>,
    ) -> Result<Self, std::io::Error> {
        let (mut handover, worker) = Handover::new(lidars.len());
        let thread = std::thread::Builder::new()
            .name("lidar".into())
            .spawn(move || Caster::new(world, lidars).serve(&worker))?;
        handover.attach(thread);
        Ok(Self { handover })
    }
}

struct Caster {
    lidars: Vec<LidarSpec>,
    /// One mirror per distinct set of own geoms (per robot with lidars), and each lidar's.
    mirrors: Vec<MjData<Arc<MjModel>>>,
    mirror_of: Vec<usize>,
    /// The world the lidars were planned in (their bodies are its model's).
    world: Arc<crate::sim::WorldGeneration>,
    state: StateSnapshot,
    /// Per lidar: world directions of the last cast; hit geoms and distances of any.
    world_rays: Vec<Vec<[f64; 3]>>,
    geoms: Vec<i32>,
    distances: Vec<f64>,
    scan: Scan,
}

/// A copy of `model` in which the geoms marked `own` are invisible (alpha 0, no material):
/// `mj_ray` and `mj_multiRay` skip invisible geoms.
fn without(model: &MjModel, own: &[bool]) -> MjModel {
    let mut copy = model.clone();
    // SAFETY: plain numbers of this thread's own copy, within its geom arrays.
    unsafe {
        let raw = copy.ffi_mut();
        for (geom, _) in own.iter().enumerate().filter(|(_, own)| **own) {
            *raw.geom_matid.add(geom) = -1;
            *raw.geom_rgba.add(4 * geom + 3) = 0.0;
        }
    }
    copy
}

impl Caster {
    fn new(world: Arc<crate::sim::WorldGeneration>, lidars: Vec<LidarSpec>) -> Self {
        let most = lidars.iter().map(|l| l.rays.len()).max().unwrap_or(0);
        let mut owners: Vec<&Vec<bool>> = Vec::new();
        let mirror_of = lidars
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
        let mirrors = owners
            .iter()
            .map(|own| MjData::new(Arc::new(without(&world.model, own))))
            .collect();
        Self {
            world_rays: lidars
                .iter()
                .map(|l| vec![[0.0; 3]; l.rays.len()])
                .collect(),
            mirrors,
            mirror_of,
            lidars,
            state: crate::sim::StateSnapshot::with_layout(&world.layout()),
            world,
            geoms: vec![-1; most],
            distances: vec![0.0; most],
            scan: Scan::default(),
        }
    }

    fn serve(&mut self, worker: &WorkerSide<Scan>) {
        while !worker.stop.load(Ordering::Relaxed) {
            if worker
                .woken
                .recv_timeout(Duration::from_millis(200))
                .is_err()
            {
                continue;
            }
            let mut mirrored = false;
            for (index, slot) in worker.slots.iter().enumerate() {
                // Taken before casting: a request that comes meanwhile asks for the next one.
                if !slot.requested.swap(false, Ordering::AcqRel) {
                    continue;
                }
                if !mirrored {
                    mirrored = true;
                    self.world.latest_state(&mut self.state);
                    for data in self.mirrors.iter_mut() {
                        mirror::set(&self.state, data);
                        data.kinematics();
                    }
                }
                self.cast(index);
                slot.put(&mut self.scan);
            }
        }
    }

    /// Casts lidar `index`'s rays into `self.scan`.
    fn cast(&mut self, index: usize) {
        let lidar = &self.lidars[index];
        let body = pose::body_pose(&self.state.xpos, &self.state.xquat_wxyz, lidar.body);
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
        let data = &mut self.mirrors[self.mirror_of[index]];
        // The model the data holds (a pointer: cloning the model would copy all of it).
        let model: *const mjModel = data.model().ffi();
        // SAFETY: the buffers hold `count` rays (directions, geoms, distances); the model
        // lives in `data`, and both stay alive for the call.
        unsafe {
            mj_multiRay(
                model,
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
        self.scan.time = self.state.time;
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
