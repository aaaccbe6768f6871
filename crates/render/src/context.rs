//! MuJoCo's render context (`mjrContext`) made from the world's shared model as it is, with
//! this thread's own offscreen size, multisampling and shadow map: MuJoCo takes those from
//! the model's `<visual>`, so the context is made from a copy of the model's header only
//! (its sizes and settings; every array stays the shared model's) instead of a copy of the
//! whole model per setting.
use mujoco_rs::mujoco_c::{
    mjModel, mjr_defaultContext, mjr_freeContext, mjr_makeContext, mjr_readPixels, mjr_render,
    mjr_setBuffer, mjrContext,
};
use mujoco_rs::prelude::*;

/// How the offscreen buffer and the shadow map of one context are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offscreen {
    pub width: usize,
    pub height: usize,
    /// Multisampling: the model's (None) or none at all.
    pub multisample: bool,
    /// Shadows: the model's shadow map, or none (a context that never draws shadows).
    pub shadows: bool,
}

/// A render context on the GL context current on this thread; it must be dropped there,
/// with that GL context still current.
pub struct RenderContext {
    raw: Box<mjrContext>,
    _counted: crate::census::Counted,
}

/// Why pixels could not be read.
#[derive(Debug, thiserror::Error)]
#[error("the {what} buffer holds {len} values, {needed} needed")]
pub struct PixelsError {
    what: &'static str,
    len: usize,
    needed: usize,
}

impl RenderContext {
    /// # Safety
    /// A GL context must be current on this thread, and stay current on it until this
    /// drops.
    pub unsafe fn new(model: &MjModel, offscreen: Offscreen) -> Self {
        // The header only: its array pointers are the shared model's, read during the call.
        let mut header: mjModel = model.ffi().clone();
        let global = &mut header.vis.global;
        global.offwidth = global.offwidth.max(offscreen.width as i32);
        global.offheight = global.offheight.max(offscreen.height as i32);
        if !offscreen.multisample {
            header.vis.quality.offsamples = 0;
        }
        if !offscreen.shadows {
            header.vis.quality.shadowsize = 0;
        }
        // SAFETY: all zeros is the state mjr_defaultContext expects to overwrite; the header's
        // arrays belong to `model`, which outlives the call; the caller made a GL context
        // current.
        let raw = unsafe {
            let mut raw: Box<mjrContext> = Box::new(std::mem::zeroed());
            mjr_defaultContext(&mut *raw);
            mjr_makeContext(&header, &mut *raw, MjtFontScale::mjFONTSCALE_100 as i32);
            mjr_setBuffer(MjtFramebuffer::mjFB_OFFSCREEN as i32, &mut *raw);
            raw
        };
        Self {
            raw,
            _counted: crate::census::Counted::new(crate::census::Kind::RenderContexts),
        }
    }

    /// Depth read back as 1 at the near plane and 0 at the far one (reversed): far more
    /// precision at a distance.
    pub fn reverse_depth(&mut self) {
        self.raw.readDepthMap = MjtDepthMap::mjDEPTH_ZEROFAR as i32;
    }

    /// Draws `scene` into the offscreen buffer.
    pub fn render(&mut self, scene: &mut MjvScene, viewport: &MjrRectangle) {
        // SAFETY: a scene and context made for the same model, on this thread's GL context.
        unsafe { mjr_render(*viewport, scene.ffi_mut(), &*self.raw) };
    }

    /// Reads the offscreen buffer's colour (RGB) and depth into the buffers given.
    pub fn read_pixels(
        &mut self,
        rgb: Option<&mut [u8]>,
        depth: Option<&mut [f32]>,
        viewport: &MjrRectangle,
    ) -> Result<(), PixelsError> {
        let pixels = (viewport.width.max(0) as usize) * (viewport.height.max(0) as usize);
        let check = |what, len, needed| {
            if len < needed {
                Err(PixelsError { what, len, needed })
            } else {
                Ok(())
            }
        };
        if let Some(rgb) = &rgb {
            check("colour", rgb.len(), 3 * pixels)?;
        }
        if let Some(depth) = &depth {
            check("depth", depth.len(), pixels)?;
        }
        let rgb = rgb.map_or(std::ptr::null_mut(), |b| b.as_mut_ptr());
        let depth = depth.map_or(std::ptr::null_mut(), |b| b.as_mut_ptr());
        // SAFETY: the buffers hold the viewport's pixels (checked above), or are null.
        unsafe { mjr_readPixels(rgb, depth, *viewport, &*self.raw) };
        Ok(())
    }
}

impl Drop for RenderContext {
    fn drop(&mut self) {
        // SAFETY: made by mjr_makeContext on this thread, whose GL context is still current.
        unsafe { mjr_freeContext(&mut *self.raw) };
    }
}
