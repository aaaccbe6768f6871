//! Drawing one MuJoCo camera into a frame: the scene from the mirror's state, MuJoCo's
//! renderer into the offscreen buffer, pixels read back, rows turned top to bottom and depth
//! turned into metres.
use super::frame::{Frame, Intrinsics};
use crate::config::RenderQuality;
use crate::model::sensors::CameraSpec;
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// A camera with its buffers.
pub(super) struct View {
    pub spec: CameraSpec,
    camera: MjvCamera,
    frame: Frame,
    /// The segmentation pass's colours, and the geom each colour stands for.
    segment_colours: Vec<u8>,
    geom_of_colour: Vec<i32>,
}

impl View {
    pub fn new(spec: CameraSpec) -> Self {
        Self {
            camera: MjvCamera::new_fixed(spec.camera),
            spec,
            frame: Frame::default(),
            segment_colours: Vec::new(),
            geom_of_colour: Vec::new(),
        }
    }

    /// Draws the mirror's state as this camera sees it; the frame is then `self.frame()`.
    pub fn draw(
        &mut self,
        scene: &mut MjvScene,
        context: &mut super::RenderContext,
        data: &mut MjData<Arc<MjModel>>,
        option: &MjvOption,
    ) -> Result<(), super::context::PixelsError> {
        scene.update(data, option, &MjvPerturb::default(), &mut self.camera);
        let full = self.spec.quality == RenderQuality::Full;
        // SAFETY: plain flag bytes and clip distances of a scene that `update` just filled.
        let (near, far, orthographic) = unsafe {
            let raw = scene.ffi_mut();
            raw.flags[MjtRndFlag::mjRND_SHADOW as usize] = full as u8;
            raw.flags[MjtRndFlag::mjRND_REFLECTION as usize] = full as u8;
            for eye in raw.camera.iter_mut() {
                if let Some(near) = self.spec.near {
                    // The frustum's sides are given at the near plane: moving it keeps the
                    // field of view only when they scale with it.
                    let scale = near as f32 / eye.frustum_near;
                    eye.frustum_center *= scale;
                    eye.frustum_width *= scale;
                    eye.frustum_bottom *= scale;
                    eye.frustum_top *= scale;
                    eye.frustum_near = near as f32;
                }
                if let Some(far) = self.spec.far {
                    eye.frustum_far = far as f32;
                }
            }
            let eye = &raw.camera[0];
            (eye.frustum_near, eye.frustum_far, eye.orthographic != 0)
        };
        // The buffers travel between this view, the slot and the reader: each is sized the
        // first time it comes here (no allocation after the first few frames).
        let pixels = self.spec.width * self.spec.height;
        self.frame.width = self.spec.width;
        self.frame.height = self.spec.height;
        self.frame.rgb.resize(3 * pixels, 0);
        self.frame
            .depth
            .resize(if self.spec.depth { pixels } else { 0 }, 0.0);
        self.frame.intrinsics = intrinsics(&scene.camera()[0], self.spec.width, self.spec.height);
        let viewport = MjrRectangle::new(0, 0, self.spec.width as i32, self.spec.height as i32);
        context.render(scene, &viewport);
        let depth = self.spec.depth.then_some(self.frame.depth.as_mut_slice());
        context.read_pixels(Some(&mut self.frame.rgb), depth, &viewport)?;
        flip_rows(&mut self.frame.rgb, self.spec.width * 3);
        if self.spec.depth {
            flip_rows(&mut self.frame.depth, self.spec.width);
            let to_metres = DepthScale::new(near, far, orthographic);
            for value in self.frame.depth.iter_mut() {
                *value = to_metres.metres(*value);
            }
        }
        if self.spec.segmentation {
            self.draw_segments(scene, context, &viewport)?;
        } else {
            self.frame.segments.clear();
        }
        self.frame.time = data.time();
        Ok(())
    }

    /// Draws the scene again with each of its geoms in one flat colour that numbers it
    /// (MuJoCo's segmentation rendering: no lighting, no blending), and reads back which
    /// model geom each pixel sees.
    fn draw_segments(
        &mut self,
        scene: &mut MjvScene,
        context: &mut super::RenderContext,
        viewport: &MjrRectangle,
    ) -> Result<(), super::context::PixelsError> {
        set_segmenting(scene, true);
        context.render(scene, viewport);
        set_segmenting(scene, false);
        let (width, pixels) = (self.spec.width, self.spec.width * self.spec.height);
        self.segment_colours.resize(3 * pixels, 0);
        context.read_pixels(Some(&mut self.segment_colours), None, viewport)?;
        // Colour k + 1 is the scene's geom k; 0 is the cleared background.
        self.geom_of_colour.clear();
        self.geom_of_colour.resize(scene.geoms().len() + 1, -1);
        for drawn in scene.geoms() {
            let colour = drawn.segid as usize + 1;
            if drawn.segid >= 0
                && drawn.objtype == MjtObj::mjOBJ_GEOM as i32
                && let Some(geom) = self.geom_of_colour.get_mut(colour)
            {
                *geom = drawn.objid;
            }
        }
        let segments = &mut self.frame.segments;
        segments.clear();
        // Rows come bottom to top.
        for row in self.segment_colours.chunks_exact(3 * width).rev() {
            segments.extend(row.chunks_exact(3).map(|c| {
                let colour = c[0] as usize | (c[1] as usize) << 8 | (c[2] as usize) << 16;
                self.geom_of_colour.get(colour).copied().unwrap_or(-1)
            }));
        }
        Ok(())
    }

    pub fn frame(&mut self) -> &mut Frame {
        &mut self.frame
    }
}

/// Turns MuJoCo's segmentation rendering (colours that number the geoms) on or off.
fn set_segmenting(scene: &mut MjvScene, on: bool) {
    // SAFETY: plain flag bytes of a scene.
    let flags = unsafe { &mut scene.ffi_mut().flags };
    flags[MjtRndFlag::mjRND_SEGMENT as usize] = on as u8;
    flags[MjtRndFlag::mjRND_IDCOLOR as usize] = on as u8;
}

/// K of the pinhole the scene camera's frustum makes on a `width` x `height` image.
fn intrinsics(eye: &MjvGLCamera, width: usize, height: usize) -> Intrinsics {
    let (w, h) = (width as f64, height as f64);
    let near = eye.frustum_near as f64;
    let (bottom, top) = (eye.frustum_bottom as f64, eye.frustum_top as f64);
    // A zero width means "from the viewport's aspect ratio", as mjr_render does.
    let half_width = if eye.frustum_width > 0.0 {
        eye.frustum_width as f64
    } else {
        0.5 * (top - bottom) * w / h
    };
    let left = eye.frustum_center as f64 - half_width;
    Intrinsics {
        fx: near * w / (2.0 * half_width),
        fy: near * h / (top - bottom),
        // The optical axis crosses the image plane at frustum x = 0, y = 0; pixel centres
        // sit half a pixel in from the edges, rows counted from the top.
        cx: w * -left / (2.0 * half_width) - 0.5,
        cy: h * top / (top - bottom) - 0.5,
    }
}

/// MuJoCo renders with a reversed depth buffer (1 at the near plane, 0 at the far one); this
/// undoes its projection in f64, from the same f32 coefficients the GL matrix holds.
struct DepthScale {
    near: f64,
    far: f64,
    orthographic: bool,
    c: f64,
    d: f64,
}

impl DepthScale {
    fn new(near: f32, far: f32, orthographic: bool) -> Self {
        let c = -(far + near) / (far - near);
        let d = -(2.0 * far * near) / (far - near);
        Self {
            near: near as f64,
            far: far as f64,
            orthographic,
            c: (-0.5 * c - 0.5) as f64,
            d: (-0.5 * d) as f64,
        }
    }

    fn metres(&self, buffer: f32) -> f32 {
        // Nothing drawn there: the cleared buffer (the far plane).
        if buffer <= 0.0 {
            return f32::INFINITY;
        }
        let z = buffer as f64;
        let metres = if self.orthographic {
            self.far - z * (self.far - self.near)
        } else {
            self.d / (z + self.c)
        };
        metres as f32
    }
}

/// Turns an image of rows of `row` values upside down (OpenGL reads bottom to top).
pub(super) fn flip_rows<T>(image: &mut [T], row: usize) {
    let rows = image.len() / row.max(1);
    for top in 0..rows / 2 {
        let bottom = rows - 1 - top;
        let (upper, lower) = image.split_at_mut(bottom * row);
        upper[top * row..(top + 1) * row].swap_with_slice(&mut lower[..row]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_turn_upside_down() {
        let mut image = vec![1, 1, 2, 2, 3, 3];
        flip_rows(&mut image, 2);
        assert_eq!(image, [3, 3, 2, 2, 1, 1]);
        let mut even = vec![1, 2, 3, 4];
        flip_rows(&mut even, 1);
        assert_eq!(even, [4, 3, 2, 1]);
    }

    #[test]
    fn the_reversed_buffer_maps_to_the_clip_planes() {
        let scale = DepthScale::new(0.1, 50.0, false);
        assert!((scale.metres(1.0) - 0.1).abs() < 1e-6);
        assert!((scale.metres(1e-9) - 50.0).abs() < 0.01);
        assert_eq!(scale.metres(0.0), f32::INFINITY);
        // 2 m lies where the buffer holds d / 2 - c.
        let buffer = scale.d / 2.0 - scale.c;
        assert!((scale.metres(buffer as f32) - 2.0).abs() < 1e-3);
    }

    #[test]
    fn a_symmetric_frustum_puts_the_axis_in_the_image_centre() {
        // SAFETY: a plain C struct of numbers, for which all zeros is a valid value.
        let mut eye: MjvGLCamera = unsafe { std::mem::zeroed() };
        let fovy = 45f64.to_radians();
        eye.frustum_near = 0.1;
        eye.frustum_top = (0.1 * (fovy / 2.0).tan()) as f32;
        eye.frustum_bottom = -eye.frustum_top;
        let k = intrinsics(&eye, 640, 480);
        let f = 240.0 / (fovy / 2.0).tan();
        assert!((k.fy - f).abs() < 1e-3 * f, "{k:?}");
        assert!((k.fx - f).abs() < 1e-3 * f, "{k:?}");
        assert!(
            (k.cx - 319.5).abs() < 1e-9 && (k.cy - 239.5).abs() < 1e-6,
            "{k:?}"
        );
    }
}
