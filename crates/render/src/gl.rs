//! A headless OpenGL context through EGL (glutin): the vendor's driver on a GPU, Mesa's
//! llvmpipe on a CPU. MuJoCo draws into its own offscreen framebuffer, so the context needs
//! only a one-pixel surface.
use glutin::api::egl::{
    context::PossiblyCurrentContext, device::Device, display::Display, surface::Surface,
};
use glutin::config::{ConfigSurfaceTypes, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, GlProfile, Version};
use glutin::prelude::{GlDisplay, NotCurrentGlContext, PossiblyCurrentGlContext};
use glutin::surface::{PbufferSurface, SurfaceAttributesBuilder};
use std::num::NonZeroU32;

/// Why no context could be made: what EGL said, per device tried.
#[derive(Debug, thiserror::Error)]
#[error(
    "no OpenGL context through EGL ({0}); headless rendering needs libEGL with a driver \
     (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1)"
)]
pub struct GlError(String);

/// A current context on this thread (it must stay on the thread that made it). Dropping it
/// releases it from the thread first: EGL only marks a context that is current when it is
/// destroyed, and a thread that then ends leaves it, with everything drawn in it, behind.
pub struct GlContext {
    /// Taken apart on drop (the context and surface go before the display is terminated).
    parts: Option<(PossiblyCurrentContext, Surface<PbufferSurface>)>,
    display: Option<Display>,
    /// Which device renders, for the log.
    pub device: String,
    _counted: crate::census::Counted,
}

/// Headless contexts alive in the process. They share one EGL display per device, which is
/// terminated when the last goes: only then does the driver free what it keeps per display
/// (Mesa's llvmpipe screen, its rasterizer threads and compiled shaders: about 100 MB).
static LIVE: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

impl GlContext {
    /// A context on the first EGL device that gives one.
    pub fn headless() -> Result<Self, GlError> {
        // Held while the context is made: a display is not terminated under it.
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        let devices = Device::query_devices().map_err(|e| GlError(e.to_string()))?;
        let mut problems = Vec::new();
        for device in devices {
            let name = describe(&device);
            match Self::on(&device) {
                Ok((context, surface, display)) => {
                    *live += 1;
                    return Ok(Self {
                        parts: Some((context, surface)),
                        display: Some(display),
                        device: name,
                        _counted: crate::census::Counted::new(crate::census::Kind::GlContexts),
                    });
                }
                Err(e) => problems.push(format!("{name}: {e}")),
            }
        }
        if problems.is_empty() {
            problems.push("no EGL device".into());
        }
        Err(GlError(problems.join("; ")))
    }

    fn on(
        device: &Device,
    ) -> glutin::error::Result<(PossiblyCurrentContext, Surface<PbufferSurface>, Display)> {
        // SAFETY: the device comes from EGL's own list; no native display is involved.
        let display = unsafe { Display::with_device(device, None)? };
        let template = ConfigTemplateBuilder::new()
            .with_surface_type(ConfigSurfaceTypes::PBUFFER)
            .with_depth_size(24)
            .with_stencil_size(8)
            .build();
        // SAFETY: the display is initialized and the template holds plain attributes.
        let config = unsafe { display.find_configs(template)? }.next().ok_or(
            glutin::error::ErrorKind::NotSupported("no pbuffer configuration"),
        )?;
        // MuJoCo's renderer uses the compatibility profile (fixed-function calls).
        let attributes = ContextAttributesBuilder::new()
            .with_profile(GlProfile::Compatibility)
            .with_context_api(ContextApi::OpenGl(Some(Version::new(2, 0))))
            .build(None);
        // SAFETY: display and config belong together; the attributes are plain.
        let context = unsafe { display.create_context(&config, &attributes)? };
        let one = NonZeroU32::MIN;
        let surface_attributes = SurfaceAttributesBuilder::<PbufferSurface>::new().build(one, one);
        // SAFETY: as above, with a valid size.
        let surface = unsafe { display.create_pbuffer_surface(&config, &surface_attributes)? };
        let context = context.make_current(&surface)?;
        Ok((context, surface, display))
    }

    /// Makes the context current again (after another context was).
    pub fn make_current(&self) -> Result<(), GlError> {
        let Some((context, surface)) = &self.parts else {
            return Err(GlError("the context is gone".into()));
        };
        context
            .make_current(surface)
            .map_err(|e| GlError(e.to_string()))
    }
}

impl Drop for GlContext {
    fn drop(&mut self) {
        // Whatever the caller drew with it is gone by now (its render contexts drop first);
        // released from the thread, the context and surface are destroyed, not left marked.
        if let Some((context, surface)) = self.parts.take() {
            if let Err(e) = context.make_not_current_in_place() {
                log::warn!("releasing the GL context: {e}");
            }
            drop((context, surface));
        }
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        *live = live.saturating_sub(1);
        if *live == 0
            && let Some(display) = self.display.take()
        {
            // SAFETY: no headless context of this process is left on the display (counted
            // under the lock, which the next context's creation waits for); the viewer's
            // window uses a display of its own.
            unsafe { display.terminate() };
        }
    }
}

/// A device as the log names it.
fn describe(device: &Device) -> String {
    if let Some(path) = device.drm_device_node_path() {
        let vendor = device.vendor().unwrap_or("unknown vendor");
        format!("{} ({vendor})", path.display())
    } else if device.extensions().contains("EGL_MESA_device_software") {
        "Mesa software renderer".into()
    } else {
        device.name().unwrap_or("unnamed EGL device").into()
    }
}

/// Drops this process's hold on the resident code pages of the GL driver's shader compiler
/// (Mesa's LLVM: about 55 MB under llvmpipe). The driver runs it only while it compiles,
/// on a context's first frames and for a state it has not drawn before. The pages stay in
/// the system's file cache, so a later compile maps them again without reading the disk.
/// Only code that was never written is dropped (a mapping without anonymous pages), which
/// is the file's own content again when touched. Does nothing where no such library is
/// loaded, as on a GPU.
pub fn drop_shader_compiler_pages() {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return;
    };
    for (start, len) in code_mappings(&smaps, "libLLVM") {
        // SAFETY: a read-only, executable private mapping of this process with no written
        // page (checked in its smaps entry): dropping its pages loses nothing, the next
        // touch reads the same bytes from the file. A refusal leaves the pages as they were.
        unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
    }
}

/// The (start, length) of the code mappings (`r-xp`, no anonymous page) of libraries whose
/// file name starts with `library`, in the text of /proc/self/smaps.
fn code_mappings(smaps: &str, library: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else {
            continue;
        };
        if let Some(anonymous) = first.strip_prefix("Anonymous:").map(|_| fields.next()) {
            if let Some(mapping) = current.take()
                && anonymous == Some("0")
            {
                found.push(mapping);
            }
            continue;
        }
        let Some((start, end)) = first.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        // A mapping's first line: range, permissions, offset, device, inode, path.
        let perms = fields.next();
        let path = fields.nth(3);
        let named = path
            .and_then(|p| std::path::Path::new(p).file_name())
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with(library));
        current = (named && perms == Some("r-xp") && end > start).then_some((start, end - start));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::code_mappings;

    #[test]
    fn only_unwritten_code_of_the_named_library_is_found() {
        let smaps = "\
7f00000000-7f00001000 r-xp 00000000 fe:00 12 /usr/lib/libLLVM-15.so.1
Size:                  4 kB
Rss:                   4 kB
Anonymous:             0 kB
7f00001000-7f00002000 r--p 00001000 fe:00 12 /usr/lib/libLLVM-15.so.1
Anonymous:             4 kB
7f00002000-7f00004000 r-xp 00000000 fe:00 13 /usr/lib/libLLVM-16.so
Anonymous:             4 kB
7f00004000-7f00005000 r-xp 00000000 fe:00 14 /usr/lib/libc.so.6
Anonymous:             0 kB
7f00005000-7f00006000 rw-p 00000000 00:00 0
Anonymous:             0 kB
";
        assert_eq!(
            code_mappings(smaps, "libLLVM"),
            vec![(0x7f00000000, 0x1000)]
        );
    }
}
