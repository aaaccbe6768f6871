//! Cameras rendered apart from physics: one thread with its own GL context (EGL, headless)
//! and its own `MjData` mirror, updated from the latest state snapshot when a frame is asked
//! for. The physics thread never waits for it; each frame carries the sim time of the state
//! it shows. Adapters (ROS camera topics, legacy camera streams) ask for frames by camera
//! index and take them from that camera's slot.
mod camera;
mod frame;
mod gl;
mod plan;

pub use camera::CameraSpec;
pub use frame::{Frame, Intrinsics, Slot};
pub use gl::GlError;
pub use plan::{NoCamera, PlannedCamera, plan};

use crate::config::RenderQuality;
use crate::sim::{SimHandle, StateSnapshot};
use camera::View;
use crossbeam_channel::{Receiver, Sender};
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Gl(#[from] GlError),
    #[error("cannot start the render thread: {0}")]
    Thread(std::io::Error),
    #[error("the render thread ended while starting")]
    Ended,
}

/// The render thread's handle: ask for frames, take them from the slots.
pub struct Renderer {
    slots: Vec<Arc<Slot>>,
    wake: Sender<()>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The device that renders (for the log and diagnostics).
    pub device: String,
}

impl Renderer {
    /// Starts the thread and its GL context; returns once both are up, or why they are not.
    pub fn start(handle: SimHandle, cameras: Vec<CameraSpec>) -> Result<Self, RenderError> {
        let slots: Vec<Arc<Slot>> = cameras.iter().map(|_| Arc::default()).collect();
        let (wake, woken) = crossbeam_channel::bounded(1);
        let stop = Arc::new(AtomicBool::new(false));
        let (ready, started) = std::sync::mpsc::channel();
        let thread_slots = slots.clone();
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("render".into())
            .spawn(move || {
                let mut drawing = match Drawing::new(&handle, cameras) {
                    Ok(drawing) => {
                        let _ = ready.send(Ok(drawing.device.clone()));
                        drawing
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                drawing.serve(&handle, &thread_slots, &woken, &stopping);
            })
            .map_err(RenderError::Thread)?;
        let device = started.recv().map_err(|_| RenderError::Ended)??;
        log::info!("cameras render on {device}");
        Ok(Self {
            slots,
            wake,
            stop,
            thread: Some(thread),
            device,
        })
    }

    /// Asks for a frame of camera `index` from the newest state. A request that finds the
    /// previous one not yet rendered counts as skipped.
    pub fn request(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        if slot.requested.swap(true, Ordering::AcqRel) {
            slot.skipped.fetch_add(1, Ordering::Relaxed);
        }
        // Full: the thread is already woken and will see the flag.
        let _ = self.wake.try_send(());
    }

    /// Frames rendered and requests skipped, over every camera.
    pub fn counts(&self) -> (u64, u64) {
        self.slots.iter().fold((0, 0), |(rendered, skipped), slot| {
            (
                rendered + slot.rendered.load(Ordering::Relaxed),
                skipped + slot.skipped.load(Ordering::Relaxed),
            )
        })
    }

    /// Camera `index`'s slot (newest frame, counters).
    pub fn slot(&self, index: usize) -> &Arc<Slot> {
        &self.slots[index]
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.wake.try_send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
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
    state: StateSnapshot,
    gl: gl::GlContext,
    device: String,
}

impl Drawing {
    fn new(handle: &SimHandle, cameras: Vec<CameraSpec>) -> Result<Self, RenderError> {
        let gl = gl::GlContext::headless()?;
        let model = render_model(handle.model(), &cameras);
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
            state: handle.latest_state_buffer(),
            gl,
            device,
        })
    }

    fn serve(
        &mut self,
        handle: &SimHandle,
        slots: &[Arc<Slot>],
        woken: &Receiver<()>,
        stop: &AtomicBool,
    ) {
        while !stop.load(Ordering::Relaxed) {
            if woken.recv_timeout(Duration::from_millis(200)).is_err() {
                continue;
            }
            let mut mirrored = false;
            for (view, slot) in self.views.iter_mut().zip(slots) {
                if !slot.requested.load(Ordering::Acquire) {
                    continue;
                }
                if !mirrored {
                    mirrored = true;
                    mirror(handle, &mut self.state, &mut self.mirror);
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
                slot.requested.store(false, Ordering::Release);
            }
        }
    }
}

/// This thread's copy of the model: the offscreen buffer grown to the largest image asked
/// for (MuJoCo renders nothing larger than it).
fn render_model(model: &MjModel, cameras: &[CameraSpec]) -> MjModel {
    let mut copy = model.clone();
    let width = cameras.iter().map(|c| c.width).max().unwrap_or(0) as i32;
    let height = cameras.iter().map(|c| c.height).max().unwrap_or(0) as i32;
    // SAFETY: plain numbers of this thread's own copy.
    unsafe {
        let global = &mut copy.ffi_mut().vis.global;
        global.offwidth = global.offwidth.max(width);
        global.offheight = global.offheight.max(height);
    }
    copy
}

/// Puts the newest state into the mirror and computes what drawing reads (poses of bodies,
/// geoms, cameras, lights; tendon paths).
fn mirror(handle: &SimHandle, state: &mut StateSnapshot, data: &mut MjData<Arc<MjModel>>) {
    handle.latest_state(state);
    if data.qpos().len() == state.qpos.len() {
        data.qpos_mut().copy_from_slice(&state.qpos);
    }
    data.set_time(state.time);
    data.forward();
}
