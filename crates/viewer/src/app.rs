//! The viewer's event loop: window events become view changes or simulation operations
//! (through the same handle calls as the console and ROS), and a frame is drawn at the
//! display's rate from the latest state. Nothing here waits on physics except a key's own
//! operation.
use super::input::{self, Action, Buttons, Drag};
use super::picture::{Picture, Status};
use super::window::GlWindow;
use super::{Opened, ViewerError, ViewerOptions, WindowError};
use crate::config::SimMode;
use crate::sim::{OperationError, SimHandle, Snapshot};
use mujoco_rs::prelude::*;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, KeyEvent, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow};
use winit::keyboard::PhysicalKey;
use winit::window::WindowId;

/// Steps the left arrow can take back.
const HISTORY: usize = 200;
/// Two left clicks closer than this select.
const DOUBLE_CLICK: Duration = Duration::from_millis(300);
/// The frame rate where the display tells none (Xvfb).
const DEFAULT_RATE_HZ: f64 = 60.0;

pub struct App {
    handle: SimHandle,
    options: ViewerOptions,
    stop: &'static AtomicBool,
    /// Set by the bridge when its run ends: the window closes.
    closing: Arc<AtomicBool>,
    /// Told once whether the window came up.
    ready: Option<Sender<Opened>>,
    /// The picture before the window: its GL objects go while the context is current.
    picture: Option<Picture>,
    window: Option<GlWindow>,
    buttons: Buttons,
    cursor: (f64, f64),
    last_click: Option<Instant>,
    /// States before the steps taken with the right arrow.
    history: VecDeque<Box<Snapshot>>,
    /// The mode space runs again in.
    resume_mode: SimMode,
    period: Duration,
    next_frame: Instant,
    last_frame: Option<Instant>,
    frames_per_second: f64,
    /// The sim time of the frame before, for the length of a perturbation's wrench.
    last_time: f64,
    frames: Arc<AtomicU64>,
}

impl App {
    pub fn new(
        handle: SimHandle,
        options: ViewerOptions,
        stop: &'static AtomicBool,
        ready: Sender<Opened>,
        frames: Arc<AtomicU64>,
        closing: Arc<AtomicBool>,
    ) -> Self {
        Self {
            handle,
            options,
            stop,
            closing,
            ready: Some(ready),
            picture: None,
            window: None,
            buttons: Buttons::default(),
            cursor: (0.0, 0.0),
            last_click: None,
            history: VecDeque::new(),
            resume_mode: SimMode::Realtime,
            period: Duration::from_secs_f64(1.0 / DEFAULT_RATE_HZ),
            next_frame: Instant::now(),
            last_frame: None,
            frames_per_second: 0.0,
            last_time: 0.0,
            frames,
        }
    }

    fn open(&mut self, event_loop: &ActiveEventLoop) -> Result<String, WindowError> {
        let window = GlWindow::open(event_loop, "mujoco_bridge", self.options.size)?;
        let full = !window.is_software();
        let picture = Picture::new(self.handle.world(), full)?;
        let rate = window
            .window
            .current_monitor()
            .and_then(|m| m.refresh_rate_millihertz())
            .map(|mhz| mhz as f64 / 1000.0)
            .filter(|hz| (20.0..=240.0).contains(hz))
            .unwrap_or(DEFAULT_RATE_HZ);
        self.period = Duration::from_secs_f64(1.0 / rate);
        let said = format!(
            "a window at up to {rate:.0} frames/s, drawn by {} ({} quality; Q toggles)",
            window.renderer,
            if full { "full" } else { "fast" }
        );
        self.picture = Some(picture);
        self.window = Some(window);
        Ok(said)
    }

    fn close(&mut self, event_loop: &ActiveEventLoop) {
        self.picture = None;
        self.window = None;
        event_loop.exit();
    }

    fn draw(&mut self) -> Result<(), WindowError> {
        let (Some(picture), Some(window)) = (&mut self.picture, &self.window) else {
            return Ok(());
        };
        if picture.world.number != self.handle.generation() {
            picture.follow(&self.handle)?;
            self.history.clear();
        }
        picture.update();
        let now = picture.time();
        let paused = self.handle.mode() == SimMode::Paused;
        if let Some((body, wrench)) = picture.perturbation().filter(|_| !paused) {
            // Held until the next frame's wrench: as long as the last frame took in sim time.
            let timestep = picture.world.model.opt().timestep;
            let duration = (now - self.last_time).min(0.25).max(timestep);
            let (force, torque) = (
                [wrench[0], wrench[1], wrench[2]],
                [wrench[3], wrench[4], wrench[5]],
            );
            log::trace!("viewer: perturbation of body {body}: {wrench:?} for {duration} s");
            let generation = picture.world.number;
            if let Err(e) = self
                .handle
                .apply_body_wrench_in(generation, body, force, torque, duration)
            {
                log::debug!("viewer: perturbation not applied: {e}");
            }
        }
        self.last_time = now;
        let started = Instant::now();
        if let Some(last) = self.last_frame {
            let rate = 1.0 / started.duration_since(last).as_secs_f64().max(1e-6);
            self.frames_per_second += 0.1 * (rate - self.frames_per_second);
        }
        self.last_frame = Some(started);
        let size = window.window.inner_size();
        let viewport = MjrRectangle::new(0, 0, size.width as i32, size.height as i32);
        let status = Status {
            time: now,
            real_time_factor: self.handle.stats().real_time_factor,
            mode: mode_name(self.handle.mode()),
            frames_per_second: self.frames_per_second,
        };
        picture.draw(viewport, &status);
        window.swap()?;
        self.frames.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn act(&mut self, action: Action) {
        if let Err(e) = self.operate(action) {
            log::warn!("viewer: {action:?}: {e}");
        }
    }

    /// The simulation's part of an action, through the handle; the rest changes the view.
    fn operate(&mut self, action: Action) -> Result<(), OperationError> {
        let handle = &self.handle;
        let paused = handle.mode() == SimMode::Paused;
        match action {
            Action::TogglePause if paused => handle.set_mode(self.resume_mode).map(drop),
            Action::TogglePause => {
                self.resume_mode = handle.mode();
                handle.pause().map(drop)
            }
            Action::Reset => {
                self.history.clear();
                handle.reset().map(drop)
            }
            Action::StepForward if paused => {
                let before = handle.capture()?;
                if self.history.len() == HISTORY {
                    self.history.pop_front();
                }
                self.history.push_back(before);
                handle.step(1).map(drop)
            }
            Action::StepBack if paused => match self.history.pop_back() {
                Some(before) => handle.restore(before).map(drop),
                None => Ok(()),
            },
            Action::StepForward | Action::StepBack => Ok(()),
            view => {
                self.change_view(view);
                Ok(())
            }
        }
    }

    fn change_view(&mut self, action: Action) {
        let Some(picture) = &mut self.picture else {
            return;
        };
        match action {
            Action::NextCamera => picture.show_camera(picture.camera_index as isize + 1),
            Action::PreviousCamera => picture.show_camera(picture.camera_index as isize - 1),
            Action::FreeCamera => {
                picture.perturb.select = 0;
                picture.show_camera(0);
            }
            Action::ToggleContacts => picture.toggle_contacts(),
            Action::CycleFrames => picture.cycle_frames(),
            Action::ToggleSites => picture.toggle_sites(),
            Action::ToggleJoints => picture.toggle(MjtVisFlag::mjVIS_JOINT),
            Action::ToggleTransparent => picture.toggle(MjtVisFlag::mjVIS_TRANSPARENT),
            Action::ToggleQuality => picture.full_quality = !picture.full_quality,
            Action::ToggleHelp => picture.help = !picture.help,
            _ => {}
        }
    }

    fn click(&mut self) {
        let now = Instant::now();
        let double = self
            .last_click
            .is_some_and(|last| now.duration_since(last) < DOUBLE_CLICK);
        self.last_click = Some(now);
        let (Some(picture), Some(window)) = (&mut self.picture, &self.window) else {
            return;
        };
        if double {
            let size = window.window.inner_size();
            let (width, height) = (size.width.max(1) as f64, size.height.max(1) as f64);
            let (x, y) = (self.cursor.0 / width, 1.0 - self.cursor.1 / height);
            picture.select(width / height, x, y);
        }
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        let opened = self.open(event_loop);
        let failed = opened.is_err();
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(opened.map_err(ViewerError::from));
        }
        if failed {
            self.close(event_loop);
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        log::trace!("viewer event: {event:?}");
        match event {
            WindowEvent::CloseRequested => {
                if self.options.close_quits {
                    log::info!("viewer: window closed, stopping");
                    self.stop.store(true, Ordering::Relaxed);
                } else {
                    log::info!("viewer: window closed; the simulation runs on");
                }
                self.close(event_loop);
            }
            WindowEvent::Resized(size) => {
                if let Some(window) = &self.window {
                    window.resize(size);
                }
            }
            WindowEvent::KeyboardInput {
                event:
                    KeyEvent {
                        physical_key: PhysicalKey::Code(key),
                        state: ElementState::Pressed,
                        ..
                    },
                ..
            } => {
                if let Some(action) = input::action(key) {
                    self.act(action);
                }
            }
            WindowEvent::ModifiersChanged(modifiers) => {
                self.buttons.shift = modifiers.state().shift_key();
                self.buttons.control = modifiers.state().control_key();
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let pressed = state == ElementState::Pressed;
                match button {
                    MouseButton::Left => self.buttons.left = pressed,
                    MouseButton::Right => self.buttons.right = pressed,
                    MouseButton::Middle => self.buttons.middle = pressed,
                    _ => {}
                }
                if pressed && button == MouseButton::Left {
                    self.click();
                }
                if !pressed && let Some(picture) = &mut self.picture {
                    picture.release();
                }
            }
            WindowEvent::CursorMoved { position, .. } => {
                let (x, y) = (position.x, position.y);
                let (dx, dy) = (x - self.cursor.0, y - self.cursor.1);
                self.cursor = (x, y);
                let height = self
                    .window
                    .as_ref()
                    .map_or(1.0, |w| w.window.inner_size().height.max(1) as f64);
                if let (Some(drag), Some(picture)) = (input::drag(self.buttons), &mut self.picture)
                {
                    picture.drag(drag, dx / height, dy / height);
                }
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y as f64,
                    MouseScrollDelta::PixelDelta(p) => p.y / 40.0,
                };
                if let Some(picture) = &mut self.picture {
                    picture.drag(Drag::Camera(MjtMouse::mjMOUSE_ZOOM), 0.0, -0.05 * lines);
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if self.stop.load(Ordering::Relaxed) || self.closing.load(Ordering::Relaxed) {
            self.close(event_loop);
            return;
        }
        let now = Instant::now();
        if now >= self.next_frame {
            if let Err(e) = self.draw() {
                log::error!("viewer: {e}; the window closes, the simulation runs on");
                self.close(event_loop);
                return;
            }
            self.next_frame += self.period;
            if self.next_frame < now {
                self.next_frame = now + self.period;
            }
        }
        event_loop.set_control_flow(ControlFlow::WaitUntil(self.next_frame));
    }
}

fn mode_name(mode: SimMode) -> &'static str {
    match mode {
        SimMode::Realtime => "realtime",
        SimMode::Fast => "fast",
        SimMode::Paused => "paused",
    }
}
