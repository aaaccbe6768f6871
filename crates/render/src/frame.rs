//! One rendered picture and the slot through which the render thread hands it over to any
//! number of readers (ROS topics, legacy streams): the render thread swaps its finished buffer
//! in under a lock held for a few pointer moves; a reader copies the newest frame into its own
//! buffer (reusing its allocation) once per new frame.
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
    /// The model geom each pixel sees (-1: none, or something drawn that is not a geom),
    /// rows top to bottom. Empty when the camera renders no segmentation.
    pub segments: Vec<i32>,
    pub intrinsics: Intrinsics,
}

/// Where the newest frame of one camera (or scan of one lidar) waits, with what was asked
/// and done.
#[derive(Default)]
pub struct Slot<T = Frame> {
    newest: Mutex<T>,
    /// Frames put so far: readers compare it with the last one they took.
    sequence: AtomicU64,
    /// A frame has been asked for and not rendered yet.
    pub(crate) requested: AtomicBool,
    /// Requests so far, and the newest of them the worker has answered (made, or failed):
    /// equal when nothing asked is still on its way.
    pub(crate) requests: AtomicU64,
    pub(crate) answered: AtomicU64,
    pub rendered: AtomicU64,
    /// Requests that found the previous one still waiting (the renderer is slower than the
    /// rate asked for).
    pub skipped: AtomicU64,
}

impl<T: Clone> Slot<T> {
    /// Hands `frame` over, taking back the buffer it replaces.
    pub(crate) fn put(&self, frame: &mut T) {
        let mut newest = self.newest.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::swap(&mut *newest, frame);
        self.sequence.fetch_add(1, Ordering::Release);
        self.rendered.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether a frame newer than `seen` (a sequence a reader took) is there.
    pub fn newer_than(&self, seen: u64) -> bool {
        self.sequence.load(Ordering::Acquire) != seen
    }

    /// Whether every request so far has been answered (its frame put, or given up).
    pub fn answered_all(&self) -> bool {
        self.answered.load(Ordering::Acquire) == self.requests.load(Ordering::Acquire)
    }

    /// The sequence of the newest frame.
    pub fn sequence(&self) -> u64 {
        self.sequence.load(Ordering::Acquire)
    }

    /// Copies the newest frame into `frame` when it is newer than `seen` (the sequence this
    /// reader took last, updated here).
    pub fn read(&self, frame: &mut T, seen: &mut u64) -> bool {
        if self.sequence.load(Ordering::Acquire) == *seen {
            return false;
        }
        let newest = self.newest.lock().unwrap_or_else(|e| e.into_inner());
        *seen = self.sequence.load(Ordering::Acquire);
        frame.clone_from(&newest);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reader_gets_each_new_frame_once() {
        let slot = Slot::<Frame>::default();
        let (mut a, mut b) = (Frame::default(), Frame::default());
        let (mut seen_a, mut seen_b) = (0, 0);
        assert!(!slot.read(&mut a, &mut seen_a), "nothing rendered yet");
        let mut rendered = Frame {
            time: 2.0,
            rgb: vec![7; 3],
            ..Default::default()
        };
        slot.put(&mut rendered);
        assert!(slot.read(&mut a, &mut seen_a));
        assert!(!slot.read(&mut a, &mut seen_a), "the same frame again");
        assert!(slot.read(&mut b, &mut seen_b));
        assert_eq!((a.time, b.time), (2.0, 2.0));
        assert_eq!(b.rgb, [7, 7, 7]);
    }
}
