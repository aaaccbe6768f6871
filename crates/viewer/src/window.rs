//! The viewer's window and its OpenGL context: a winit window on X11, a context through EGL
//! on the same display (Mesa's llvmpipe without a GPU, the vendor's driver with one).
use super::WindowError;
use glutin::config::{Api, ConfigTemplateBuilder};
use glutin::context::{
    ContextApi, ContextAttributesBuilder, GlProfile, PossiblyCurrentContext, Version,
};
use glutin::display::{Display, DisplayApiPreference};
use glutin::prelude::{GlDisplay, NotCurrentGlContext};
use glutin::surface::{GlSurface, Surface, SurfaceAttributesBuilder, SwapInterval, WindowSurface};
use std::num::NonZeroU32;
use winit::dpi::PhysicalSize;
use winit::event_loop::ActiveEventLoop;
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::Window;

/// A window with a current GL context (on the thread that made it).
pub struct GlWindow {
    // Field order is drop order: the surface and the context go before their window.
    surface: Surface<WindowSurface>,
    context: PossiblyCurrentContext,
    pub window: Window,
    /// The GL renderer string (`llvmpipe ...` without a GPU).
    pub renderer: String,
}

impl GlWindow {
    pub fn open(
        event_loop: &ActiveEventLoop,
        title: &str,
        size: (u32, u32),
    ) -> Result<Self, WindowError> {
        let attributes = Window::default_attributes()
            .with_title(title)
            .with_inner_size(PhysicalSize::new(size.0, size.1));
        let window = event_loop.create_window(attributes)?;
        let raw_display = window.display_handle()?.as_raw();
        let raw_window = window.window_handle()?.as_raw();
        let gl = WindowError::Context;
        // SAFETY: the handles come from the live window and its display.
        let display =
            unsafe { Display::new(raw_display, DisplayApiPreference::Egl) }.map_err(gl)?;
        let template = ConfigTemplateBuilder::new()
            .with_api(Api::OPENGL)
            .with_depth_size(24)
            .with_stencil_size(8)
            .compatible_with_native_window(raw_window)
            .build();
        // SAFETY: the display is initialized; the template holds plain attributes.
        let config = unsafe { display.find_configs(template) }
            .map_err(gl)?
            .next()
            .ok_or(WindowError::NoConfiguration)?;
        // MuJoCo's renderer uses the compatibility profile (fixed-function calls).
        let context_attributes = ContextAttributesBuilder::new()
            .with_profile(GlProfile::Compatibility)
            .with_context_api(ContextApi::OpenGl(Some(Version::new(2, 0))))
            .build(Some(raw_window));
        // SAFETY: display and config belong together.
        let context =
            unsafe { display.create_context(&config, &context_attributes) }.map_err(gl)?;
        let (width, height) = nonzero(window.inner_size());
        let surface_attributes =
            SurfaceAttributesBuilder::<WindowSurface>::new().build(raw_window, width, height);
        // SAFETY: the window outlives the surface (both live in this struct, which drops the
        // surface first).
        let surface =
            unsafe { display.create_window_surface(&config, &surface_attributes) }.map_err(gl)?;
        let context = context.make_current(&surface).map_err(gl)?;
        // Swaps follow the display's refresh where it has one; the app paces itself too.
        let _ = surface.set_swap_interval(&context, SwapInterval::Wait(NonZeroU32::MIN));
        let renderer = renderer_name(&display);
        Ok(Self {
            window,
            surface,
            context,
            renderer,
        })
    }

    /// Follows the window's new size.
    pub fn resize(&self, size: PhysicalSize<u32>) {
        let (width, height) = nonzero(size);
        self.surface.resize(&self.context, width, height);
    }

    pub fn swap(&self) -> Result<(), WindowError> {
        self.surface
            .swap_buffers(&self.context)
            .map_err(WindowError::Swap)
    }

    /// A software renderer draws shadows and reflections at a frame or two per second.
    pub fn is_software(&self) -> bool {
        let name = self.renderer.to_lowercase();
        ["llvmpipe", "softpipe", "swrast", "software"]
            .iter()
            .any(|s| name.contains(s))
    }
}

fn nonzero(size: PhysicalSize<u32>) -> (NonZeroU32, NonZeroU32) {
    (
        NonZeroU32::new(size.width).unwrap_or(NonZeroU32::MIN),
        NonZeroU32::new(size.height).unwrap_or(NonZeroU32::MIN),
    )
}

/// `glGetString(GL_RENDERER)` of the current context.
fn renderer_name(display: &Display) -> String {
    const GL_RENDERER: u32 = 0x1F01;
    let pointer = display.get_proc_address(c"glGetString");
    if pointer.is_null() {
        return String::new();
    }
    // SAFETY: glGetString has this signature; a context is current on this thread.
    let get: extern "system" fn(u32) -> *const std::ffi::c_char =
        unsafe { std::mem::transmute(pointer) };
    let name = get(GL_RENDERER);
    if name.is_null() {
        return String::new();
    }
    // SAFETY: GL returns a NUL-terminated static string.
    unsafe { std::ffi::CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned()
}
