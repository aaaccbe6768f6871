//! One rendered picture and the slot through which the render thread hands it over: a swap
//! of buffers under a lock held for a few pointer moves, so neither side copies or allocates
//! per frame once the buffers have their size.
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Pinhole intrinsics in pixels, as CameraInfo's K holds them (pixel centres at whole
/// coordinates, rows top to bottom).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Intrinsics {
    pub fx: f64,
    pub fy: f64,
    pub cx: f64,
    pub cy: f64,
}

#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// Sim time of the state the picture shows.
    pub time: f64,
    pub width: usize,
    pub height: usize,
    /// R, G, B per pixel, rows top to bottom.
    pub rgb: Vec<u8>,
    /// Metres along the optical axis per pixel, rows top to bottom; +inf where nothing lies
    /// before the far plane. Empty when the camera renders no depth.
    pub depth: Vec<f32>,
    pub intrinsics: Intrinsics,
}

/// Where the newest frame of one camera waits, with what was asked and done.
#[derive(Default)]
pub struct Slot {
    newest: Mutex<(Frame, bool)>,
    /// A frame has been asked for and not rendered yet.
    pub(super) requested: AtomicBool,
    pub rendered: AtomicU64,
    /// Requests that found the previous one still waiting (the renderer is slower than the
    /// rate asked for).
    pub skipped: AtomicU64,
}

impl Slot {
    /// Hands `frame` over, taking back the buffer it replaces.
    pub(super) fn put(&self, frame: &mut Frame) {
        let mut newest = self.newest.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::swap(&mut newest.0, frame);
        newest.1 = true;
        self.rendered.fetch_add(1, Ordering::Relaxed);
    }

    /// Swaps the newest frame into `frame` when one came since the last take.
    pub fn take(&self, frame: &mut Frame) -> bool {
        let mut newest = self.newest.lock().unwrap_or_else(|e| e.into_inner());
        if !newest.1 {
            return false;
        }
        std::mem::swap(&mut newest.0, frame);
        newest.1 = false;
        true
    }
}
