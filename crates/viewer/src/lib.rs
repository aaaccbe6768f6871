//! `--viewer`: a window of the running world on its own thread. It draws the latest state
//! snapshot at the display's rate through MuJoCo's renderer (never touching the physics
//! thread's data), shows contacts, frames, sites and the status, and turns keys and mouse
//! drags into the same operations and wrenches the console and ROS send.
// The layers below under the names this crate's files use.
use mujoco_bridge_core::{config, sim, supervise};
use mujoco_bridge_render as render;
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
    #[error("cannot use display {display}: {error}; running without a window")]
    Display {
        display: String,
        error: winit::error::EventLoopError,
    },
    #[error("{0}; running without a window")]
    Window(#[from] WindowError),
    #[error("the window did not open within 60 s; running without a window")]
    TimedOut,
    #[error("the viewer thread ended while starting; running without a window")]
    ThreadEnded,
    #[error("cannot start the viewer thread: {0}")]
    Thread(std::io::Error),
}

/// Why the window could not be opened, or drawn once open.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error("cannot open a window: {0}")]
    Open(#[from] winit::error::OsError),
    #[error("the window has no native handle: {0}")]
    Handle(#[from] winit::raw_window_handle::HandleError),
    #[error("no OpenGL context on the display: {0}")]
    Context(glutin::error::Error),
    #[error("no OpenGL configuration fits the window")]
    NoConfiguration,
    #[error("showing the frame: {0}")]
    Swap(glutin::error::Error),
    #[error("MuJoCo could not allocate the viewer's data")]
    NoData,
}

/// What the viewer thread tells once: the window is up (and how it draws), or why not.
type Opened = Result<String, ViewerError>;

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
        crate::supervise::joined_within(self.thread, patience);
        self.frames.load(Ordering::Relaxed)
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
                Err(error) => {
                    let _ = ready.send(Err(ViewerError::Display { display, error }));
                    return;
                }
            };
            x11::survive_a_lost_display();
            let mut app = app::App::new(handle, options, stop, ready, drawn, close);
            // winit unwraps some X calls: when the display goes away between two of them it
            // panics on this thread instead of meeting Xlib's handler (seen in CI). The
            // window goes either way; the simulation runs on.
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                event_loop.run_app(&mut app)
            }));
            match ran {
                Ok(Ok(())) => {}
                Ok(Err(e)) => log::error!("viewer: {e}"),
                Err(_) => log::error!(
                    "viewer: the window system failed (the connection to the display broke, or \
                     winit met an error it does not handle); no window, the simulation runs on"
                ),
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
        Ok(Err(e)) => Err(e),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            closing.store(true, Ordering::Relaxed);
            Err(ViewerError::TimedOut)
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(ViewerError::ThreadEnded),
    }
}
