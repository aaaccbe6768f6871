//! Lidars cast with MuJoCo's `mj_multiRay` on a thread of their own, on its own `MjData`
//! mirror of the newest state (so a scan never waits for a camera frame, nor the physics
//! thread for either). Rays pass through the lidar's own robot: one that hits it is cast
//! again from just beyond, past that body.
use super::frame::{Handover, WorkerSide};
use super::mirror;
use crate::model::pose;
use crate::sim::{SimHandle, StateSnapshot};
use mujoco_rs::mujoco_c::{mj_multiRay, mj_ray};
use mujoco_rs::prelude::*;
use nalgebra::{Point3, Vector3};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How often a ray that hits its own robot is cast again from beyond the hit.
const OWN_HITS: usize = 8;
/// How far beyond a hit on its own robot a ray starts again (metres).
const PAST: f64 = 1e-4;

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
    pub fn start(handle: SimHandle, lidars: Vec<LidarSpec>) -> Result<Self, std::io::Error> {
        let (mut handover, worker) = Handover::new(lidars.len());
        let thread = std::thread::Builder::new()
            .name("lidar".into())
            .spawn(move || Caster::new(&handle, lidars).serve(&handle, &worker))?;
        handover.attach(thread);
        Ok(Self { handover })
    }
}

struct Caster {
    lidars: Vec<LidarSpec>,
    mirror: MjData<Arc<MjModel>>,
    state: StateSnapshot,
    /// Per lidar: world directions, hit geoms and distances of the last cast.
    world_rays: Vec<Vec<[f64; 3]>>,
    geoms: Vec<i32>,
    distances: Vec<f64>,
    scan: Scan,
}

impl Caster {
    fn new(handle: &SimHandle, lidars: Vec<LidarSpec>) -> Self {
        let most = lidars.iter().map(|l| l.rays.len()).max().unwrap_or(0);
        Self {
            world_rays: lidars
                .iter()
                .map(|l| vec![[0.0; 3]; l.rays.len()])
                .collect(),
            lidars,
            mirror: MjData::new(handle.model().clone()),
            state: handle.latest_state_buffer(),
            geoms: vec![-1; most],
            distances: vec![0.0; most],
            scan: Scan::default(),
        }
    }

    fn serve(&mut self, handle: &SimHandle, worker: &WorkerSide<Scan>) {
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
                    mirror::update(handle, &mut self.state, &mut self.mirror);
                    self.mirror.kinematics();
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
        for (ray, out) in lidar.rays.iter().zip(world.iter_mut()) {
            let d = frame.rotation * Vector3::new(ray[0], ray[1], ray[2]);
            *out = [d.x, d.y, d.z];
        }
        let count = lidar.rays.len();
        let (model, data) = (self.mirror.model().clone(), &mut self.mirror);
        // SAFETY: the buffers hold `count` rays (directions, geoms, distances); the model and
        // data belong together and stay alive for the call.
        unsafe {
            mj_multiRay(
                model.ffi(),
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
        for ((out, direction), (&geom, &distance)) in
            self.scan.ranges.iter_mut().zip(world.iter()).zip(hits)
        {
            let (mut geom, mut distance) = (geom, distance);
            // Through the own robot: again from just past each hit of it.
            let mut travelled = 0.0;
            for _ in 0..OWN_HITS {
                if geom < 0 || !lidar.own[geom as usize] {
                    break;
                }
                travelled += distance + PAST;
                let start = Point3::from(origin) + Vector3::from(*direction) * travelled;
                let past_body = model.geom_bodyid()[geom as usize];
                let mut hit = -1;
                // SAFETY: one ray from valid arrays; the model and data belong together.
                distance = unsafe {
                    mj_ray(
                        model.ffi(),
                        data.ffi(),
                        &[start.x, start.y, start.z],
                        direction,
                        std::ptr::null(),
                        true,
                        past_body,
                        &mut hit,
                        std::ptr::null_mut(),
                    )
                };
                geom = hit;
            }
            let range = if geom < 0 || distance < 0.0 {
                f64::INFINITY
            } else {
                travelled + distance
            };
            *out = if range > lidar.range_max {
                f32::INFINITY
            } else if range < lidar.range_min {
                f32::NEG_INFINITY
            } else {
                range as f32
            };
        }
    }
}
