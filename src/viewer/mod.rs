//! `--viewer`: a window of the running world on its own thread. It draws the latest state
//! snapshot at the display's rate through MuJoCo's renderer (never touching the physics
//! thread's data), shows contacts, frames, sites and the status, and turns keys and mouse
//! drags into the same operations and wrenches the console and ROS send.
mod app;
mod input;
mod picture;
mod window;
mod x11;

use crate::sim::SimHandle;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use winit::event_loop::EventLoop;
use winit::platform::x11::EventLoopBuilderExtX11;

/// How the viewer opens.
#[derive(Debug, Clone, Copy)]
pub struct ViewerOptions {
    /// Window size in pixels.
    pub size: (u32, u32),
    /// Closing the window stops the bridge (otherwise it runs on without one).
    pub close_quits: bool,
}

impl Default for ViewerOptions {
    fn default() -> Self {
        Self {
            size: (1280, 720),
            close_quits: false,
        }
    }
}

/// Why no window opened; the bridge runs on without one.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    #[error("no display (DISPLAY is not set); running without a window")]
    NoDisplay,
    #[error("cannot use display {display}: {reason}; running without a window")]
    Display { display: String, reason: String },
    #[error("{0}; running without a window")]
    Window(String),
    #[error("cannot start the viewer thread: {0}")]
    Thread(std::io::Error),
}

/// The open viewer: its thread, and how many frames it drew.
pub struct Viewer {
    thread: std::thread::JoinHandle<()>,
    frames: Arc<AtomicU64>,
    closing: Arc<AtomicBool>,
}

impl Viewer {
    pub fn frames(&self) -> u64 {
        self.frames.load(Ordering::Relaxed)
    }

    /// Closes the window (its GL objects go while their context is current) and waits for
    /// the thread, at most `patience`; returns the frames drawn.
    pub fn close(self, patience: Duration) -> u64 {
        self.closing.store(true, Ordering::Relaxed);
        let deadline = std::time::Instant::now() + patience;
        while !self.thread.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let frames = self.frames();
        if self.thread.is_finished() {
            let _ = self.thread.join();
        }
        frames
    }
}

/// Opens the window on a thread of its own; returns once it is up, or why it is not.
/// `stop` is the process's stop flag: the viewer closes when it is set, and sets it when
/// its window closes with `close_quits`.
pub fn start(
    handle: SimHandle,
    options: ViewerOptions,
    stop: &'static AtomicBool,
) -> Result<Viewer, ViewerError> {
    let display = std::env::var("DISPLAY")
        .ok()
        .filter(|d| !d.is_empty())
        .ok_or(ViewerError::NoDisplay)?;
    let (ready, opened) = std::sync::mpsc::channel();
    let frames = Arc::new(AtomicU64::new(0));
    let closing = Arc::new(AtomicBool::new(false));
    let (drawn, close) = (frames.clone(), closing.clone());
    let thread = std::thread::Builder::new()
        .name("viewer".into())
        .spawn(move || {
            let event_loop = match EventLoop::builder().with_any_thread(true).build() {
                Ok(event_loop) => event_loop,
                Err(e) => {
                    let _ = ready.send(Err(format!("display:{e}")));
                    return;
                }
            };
            x11::survive_a_lost_display();
            let mut app = app::App::new(handle, options, stop, ready, drawn, close);
            if let Err(e) = event_loop.run_app(&mut app) {
                log::error!("viewer: {e}");
            }
        })
        .map_err(ViewerError::Thread)?;
    match opened.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(said)) => {
            log::info!("viewer: {said}");
            Ok(Viewer {
                thread,
                frames,
                closing,
            })
        }
        Ok(Err(reason)) => Err(match reason.strip_prefix("display:") {
            Some(reason) => ViewerError::Display {
                display,
                reason: reason.to_string(),
            },
            None => ViewerError::Window(reason),
        }),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            closing.store(true, Ordering::Relaxed);
            Err(ViewerError::Window(
                "the window did not open within 60 s".into(),
            ))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(ViewerError::Window(
            "the viewer thread ended while starting".into(),
        )),
    }
}
