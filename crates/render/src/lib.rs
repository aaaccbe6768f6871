//! Cameras and lidars apart from physics. Cameras render on one thread for the whole run,
//! with its own GL context (EGL, headless) and `MjData` mirror, made when a frame is first
//! asked for and released after a while without requests; lidars cast on another thread with
//! a mirror of its own (`lidar`). Both follow the world (`service`). The physics thread never
//! waits for either; each frame or scan carries the sim time of the state it shows. Adapters
//! (ROS topics, legacy camera streams) take a world's `Sources` from the service, ask by
//! index (its place in the world's `sensors` plan) and read from that camera's or lidar's
//! slot.
// The core's modules under the names this crate's files use.
use mujoco_bridge_core::{census, config, model, sim};
mod camera;
mod context;
mod frame;
mod gl;
mod lidar;
pub mod mirror;
pub mod screenshot;
mod service;

pub use context::{Offscreen, RenderContext};
pub use frame::{Frame, Intrinsics, Slot};
pub use gl::{GlContext, GlError};
pub use lidar::{LidarSources, Lidars, Scan, start as start_lidars};
pub use mirror::Mirror;
// What the cameras and lidars of a world are is planned with the world.
pub use crate::model::sensors::{CameraSpec, LidarSpec, PlannedCamera, PlannedLidar};
pub use service::{Service, Sources, Work};

use crate::config::RenderQuality;
use crate::sim::{StateSnapshot, WorldGeneration};
use camera::View;
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::time::Duration;

/// The render thread's handle; `sources(world)` gives a world's cameras.
pub type Renderer = Service<PlannedCamera, Frame>;
/// The cameras of one world, with their frame slots.
pub type Cameras = Sources<PlannedCamera, Frame>;

/// The worker threads the adapters ask for frames and scans (either may be absent).
#[derive(Default, Clone)]
pub struct Sensors {
    pub renderer: Option<Arc<Renderer>>,
    pub lidars: Option<Arc<Lidars>>,
}

impl Sensors {
    /// The cameras and lidars of `world`, from whichever thread is there.
    pub fn sources(
        &self,
        world: &Arc<WorldGeneration>,
    ) -> (Option<Arc<Cameras>>, Option<Arc<LidarSources>>) {
        (
            self.renderer.as_ref().map(|r| r.sources(world)),
            self.lidars.as_ref().map(|l| l.sources(world)),
        )
    }
}

/// Starts the render thread, which renders nothing and holds no GL context until a frame is
/// asked for; `idle_release`: how long its GL context outlives the last request (zero:
/// for good); `nice`: its niceness.
pub fn start_renderer(idle_release: Duration, nice: u8) -> std::io::Result<Renderer> {
    start_renderer_planned(idle_release, nice, |world| world.sensors.cameras.clone())
}

/// `start_renderer` with the cameras of each world given by `plan` instead of the world's own
/// `sensors`
/// (benchmarks: one camera at the sizes and qualities they compare).
pub fn start_renderer_planned(
    idle_release: Duration,
    nice: u8,
    plan: impl Fn(&WorldGeneration) -> Vec<PlannedCamera> + Send + Sync + 'static,
) -> std::io::Result<Renderer> {
    Service::start("cameras", idle_release, nice, plan, Drawing::default)
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Gl(#[from] GlError),
    #[error(transparent)]
    Memory(#[from] mirror::NoMemory),
    #[error("reading its pixels: {0}")]
    Pixels(#[from] context::PixelsError),
    /// Asked to draw a camera of a world that is not loaded (cannot happen in the service).
    #[error("no such camera in the loaded world")]
    NotLoaded,
}

/// What lives on the render thread. Field order is drop order: the world's MuJoCo GL
/// resources go before the GL context they live in.
#[derive(Default)]
struct Drawing {
    world: Option<WorldDrawing>,
    gl: Option<GlContext>,
    /// When the shader compiler's pages are next given back, while frames are drawn.
    next_compiler_drop: Option<std::time::Instant>,
}

/// How often the shader compiler's pages are given back while frames are drawn: a new
/// context or a world's new render contexts compile shaders on their first frames, and a
/// world changes as often as a client asks.
const COMPILER_DROP_PERIOD: Duration = Duration::from_secs(2);

/// What drawing one world's cameras takes.
struct WorldDrawing {
    views: Vec<View>,
    scene: MjvScene,
    /// One render context per quality in use (multisampling is fixed at creation).
    fast: Option<RenderContext>,
    full: Option<RenderContext>,
    option: MjvOption,
    mirror: Mirror,
    /// The step and sim time of the state the mirror holds this round (None: to be set).
    shown: Option<(u64, f64)>,
}

impl Work for Drawing {
    type Spec = PlannedCamera;
    type Out = Frame;
    type Error = RenderError;

    fn load(&mut self, cameras: &Cameras) -> Result<(), RenderError> {
        if self.gl.is_none() {
            let gl = GlContext::headless()?;
            log::info!("cameras render on {}", gl.device);
            self.gl = Some(gl);
        }
        let world = &cameras.world;
        let model = &world.model;
        let specs: Vec<CameraSpec> = cameras.specs.iter().map(|c| c.spec.clone()).collect();
        let width = specs.iter().map(|c| c.width).max().unwrap_or(0);
        let height = specs.iter().map(|c| c.height).max().unwrap_or(0);
        let context = |quality| {
            specs.iter().any(|c| c.quality == quality).then(|| {
                let full = quality == RenderQuality::Full;
                let offscreen = Offscreen {
                    width,
                    height,
                    multisample: full,
                    shadows: full,
                };
                // SAFETY: the GL context made above is current on this thread and stays
                // current until this world's drawing drops, before it.
                let mut context = unsafe { RenderContext::new(model, offscreen) };
                // Depth read back reversed: far more precision at a distance, and what
                // `camera::DepthScale` undoes.
                context.reverse_depth();
                context
            })
        };
        let (fast, full) = (context(RenderQuality::Fast), context(RenderQuality::Full));
        self.world = Some(WorldDrawing {
            views: specs.into_iter().map(View::new).collect(),
            // Room for every geom and as many decorations besides (tendons, frames).
            scene: MjvScene::new(model, 2 * model.ffi().ngeom as usize + 100),
            fast,
            full,
            option: MjvOption::default(),
            mirror: Mirror::new(model.clone())?,
            shown: None,
        });
        Ok(())
    }

    fn begin(&mut self) {
        if let Some(w) = &mut self.world {
            w.shown = None;
        }
    }

    fn make(&mut self, index: usize, state: &StateSnapshot) -> Result<&mut Frame, RenderError> {
        let w = self.world.as_mut().ok_or(RenderError::NotLoaded)?;
        // Cameras asked for the same sample share one forward pass.
        if w.shown != Some((state.step, state.time)) {
            mirror::set(state, &mut w.mirror.data);
            w.mirror.data.forward();
            w.shown = Some((state.step, state.time));
        }
        let view = w.views.get_mut(index).ok_or(RenderError::NotLoaded)?;
        let context = match view.spec.quality {
            RenderQuality::Fast => w.fast.as_mut(),
            RenderQuality::Full => w.full.as_mut(),
        }
        .ok_or(RenderError::NotLoaded)?;
        view.draw(&mut w.scene, context, &mut w.mirror.data, &w.option)?;
        let now = std::time::Instant::now();
        let due = *self
            .next_compiler_drop
            .get_or_insert(now + COMPILER_DROP_PERIOD);
        if now >= due {
            gl::drop_shader_compiler_pages();
            self.next_compiler_drop = Some(now + COMPILER_DROP_PERIOD);
        }
        Ok(view.frame())
    }

    fn unload(&mut self) {
        self.world = None;
    }

    fn release(&mut self) {
        self.world = None;
        self.gl = None;
        self.next_compiler_drop = None;
        gl::drop_shader_compiler_pages();
    }
}
