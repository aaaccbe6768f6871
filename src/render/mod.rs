//! Cameras and lidars apart from physics. Cameras render on one thread with its own GL
//! context (EGL, headless) and its own `MjData` mirror, updated from the latest state
//! snapshot when a frame is asked for; lidars cast on another thread with a mirror of its
//! own (`lidar`). The physics thread never waits for either; each frame or scan carries the
//! sim time of the state it shows. Adapters (ROS topics, legacy camera streams) ask by index
//! and read from that camera's or lidar's slot.
mod camera;
mod frame;
mod gl;
mod lidar;
pub(crate) mod mirror;
mod plan;
mod rays;
pub mod screenshot;

pub use camera::CameraSpec;
use frame::WorkerSide;
pub use frame::{Frame, Handover, Intrinsics, Slot};
pub use gl::GlError;
pub use lidar::{LidarSpec, Lidars, Scan};
pub use plan::{NoCamera, PlannedCamera, plan};
pub use rays::{LidarError, PlannedLidar, plan_lidars};

use crate::config::RenderQuality;
use crate::sim::{SimHandle, StateSnapshot};
use camera::View;
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The worker threads the adapters ask for frames and scans (either may be absent).
#[derive(Default, Clone)]
pub struct Sensors {
    pub renderer: Option<Arc<Renderer>>,
    pub lidars: Option<Arc<Lidars>>,
}

impl Sensors {
    /// Workers for `world` (after a world change): a render thread when it has cameras, a
    /// caster when it has lidars. What cannot start is said once and left out; the rest of
    /// the node runs on.
    pub fn for_world(world: &Arc<crate::sim::WorldGeneration>) -> Self {
        let renderer = plan(&world.robots, &world.config)
            .ok()
            .filter(|cameras| !cameras.is_empty())
            .and_then(|cameras| {
                let specs = cameras.into_iter().map(|c| c.spec).collect();
                Renderer::start_in(world.clone(), specs)
                    .map_err(|e| log::error!("cameras are off: {e}"))
                    .ok()
            })
            .map(Arc::new);
        let lidars = plan_lidars(&world.model, &world.robots, &world.config)
            .ok()
            .filter(|lidars| !lidars.is_empty())
            .and_then(|lidars| {
                let specs = lidars.into_iter().map(|l| l.spec).collect();
                Lidars::start_in(world.clone(), specs)
                    .map_err(|e| log::error!("lidars are off: cannot start their thread: {e}"))
                    .ok()
            })
            .map(Arc::new);
        Self { renderer, lidars }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Gl(#[from] GlError),
    #[error("cannot start the render thread: {0}")]
    Thread(std::io::Error),
    #[error("the render thread ended while starting")]
    Ended,
}

/// The render thread's handle: ask for frames (`request`), read them from the slots.
pub struct Renderer {
    handover: Handover<Frame>,
    /// The device that renders (for the log and diagnostics).
    pub device: String,
}

impl std::ops::Deref for Renderer {
    type Target = Handover<Frame>;
    fn deref(&self) -> &Handover<Frame> {
        &self.handover
    }
}

impl Renderer {
    /// Starts the thread and its GL context for the current world; returns once both are
    /// up, or why they are not.
    pub fn start(handle: SimHandle, cameras: Vec<CameraSpec>) -> Result<Self, RenderError> {
        Self::start_in(handle.world(), cameras)
    }

    /// `start` for world `world`, the one the cameras were planned in.
    pub fn start_in(
        world: Arc<crate::sim::WorldGeneration>,
        cameras: Vec<CameraSpec>,
    ) -> Result<Self, RenderError> {
        let (mut handover, worker) = Handover::new(cameras.len());
        let (ready, started) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("render".into())
            .spawn(move || {
                let mut drawing = match Drawing::new(world, cameras) {
                    Ok(drawing) => {
                        let _ = ready.send(Ok(drawing.device.clone()));
                        drawing
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                drawing.serve(&worker);
            })
            .map_err(RenderError::Thread)?;
        handover.attach(thread);
        let device = started.recv().map_err(|_| RenderError::Ended)??;
        log::info!("cameras render on {device}");
        Ok(Self { handover, device })
    }
}

/// What lives on the render thread.
struct Drawing {
    // Field order is drop order: the MuJoCo GL resources go before the context they live in.
    views: Vec<View>,
    scene: MjvScene,
    /// One MuJoCo render context per quality in use (multisampling is fixed at creation).
    fast: Option<MjrContext>,
    full: Option<MjrContext>,
    option: MjvOption,
    mirror: MjData<Arc<MjModel>>,
    /// The world the cameras were planned in (their ids are its model's).
    world: Arc<crate::sim::WorldGeneration>,
    state: StateSnapshot,
    gl: gl::GlContext,
    device: String,
}

impl Drawing {
    fn new(
        world: Arc<crate::sim::WorldGeneration>,
        cameras: Vec<CameraSpec>,
    ) -> Result<Self, RenderError> {
        let gl = gl::GlContext::headless()?;
        let model = render_model(&world.model, &cameras);
        let uses = |quality| cameras.iter().any(|c| c.quality == quality);
        // SAFETY (both contexts): the GL context was made current on this thread above and
        // stays current here until `Drawing` drops them, before the GL context.
        let mut fast = uses(RenderQuality::Fast).then(|| {
            let mut single = model.clone();
            // SAFETY: a plain number of this thread's own copy of the model.
            unsafe { single.ffi_mut().vis.quality.offsamples = 0 };
            let mut context = unsafe { MjrContext::new(&single) };
            context.offscreen();
            context
        });
        let mut full = uses(RenderQuality::Full).then(|| {
            let mut context = unsafe { MjrContext::new(&model) };
            context.offscreen();
            context
        });
        // Depth read back as 1 at the near plane and 0 at the far one (reversed): far more
        // precision at a distance, and what `camera::DepthScale` undoes.
        for context in fast.iter_mut().chain(full.iter_mut()) {
            // SAFETY: a plain setting of a context this thread owns.
            unsafe { context.ffi_mut().readDepthMap = MjtDepthMap::mjDEPTH_ZEROFAR as i32 };
        }
        // Room for every geom and as many decorations besides (tendons, frames).
        let scene = MjvScene::new(&model, 2 * model.ffi().ngeom as usize + 100);
        let device = gl.device.clone();
        Ok(Self {
            views: cameras.into_iter().map(View::new).collect(),
            scene,
            fast,
            full,
            option: MjvOption::default(),
            mirror: MjData::new(Arc::new(model)),
            state: crate::sim::StateSnapshot::with_layout(&world.layout()),
            world,
            gl,
            device,
        })
    }

    fn serve(&mut self, worker: &WorkerSide<Frame>) {
        while !worker.stop.load(Ordering::Relaxed) {
            if worker
                .woken
                .recv_timeout(Duration::from_millis(200))
                .is_err()
            {
                continue;
            }
            let mut mirrored = false;
            for (view, slot) in self.views.iter_mut().zip(&worker.slots) {
                // Taken before drawing: a request that comes meanwhile asks for the next one.
                if !slot.requested.swap(false, Ordering::AcqRel) {
                    continue;
                }
                if !mirrored {
                    mirrored = true;
                    mirror::update(&self.world, &mut self.state, &mut self.mirror);
                    self.mirror.forward();
                }
                let context = match view.spec.quality {
                    RenderQuality::Fast => self.fast.as_ref(),
                    RenderQuality::Full => self.full.as_ref(),
                };
                let Some(context) = context else { continue };
                if let Err(e) = self.gl.make_current() {
                    log::error!("camera {}: {e}", view.spec.camera);
                    continue;
                }
                match view.draw(&mut self.scene, context, &mut self.mirror, &self.option) {
                    Ok(()) => slot.put(view.frame()),
                    Err(e) => log::error!("camera {}: reading its pixels: {e}", view.spec.camera),
                }
            }
        }
    }
}

/// This thread's copy of the model: the offscreen buffer grown to the largest image asked
/// for.
fn render_model(model: &MjModel, cameras: &[CameraSpec]) -> MjModel {
    let width = cameras.iter().map(|c| c.width).max().unwrap_or(0);
    let height = cameras.iter().map(|c| c.height).max().unwrap_or(0);
    with_offscreen(model, width, height)
}

/// A copy of `model` whose offscreen buffer holds at least `width` x `height` (MuJoCo
/// renders nothing larger than it).
fn with_offscreen(model: &MjModel, width: usize, height: usize) -> MjModel {
    let mut copy = model.clone();
    // SAFETY: plain numbers of this copy.
    unsafe {
        let global = &mut copy.ffi_mut().vis.global;
        global.offwidth = global.offwidth.max(width as i32);
        global.offheight = global.offheight.max(height as i32);
    }
    copy
}
