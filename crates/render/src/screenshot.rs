//! `--screenshot`: one picture of the latest state, from a model camera or the model's free
//! camera, drawn headless (EGL) at full quality and written as PNG. Made on the calling
//! thread with a GL context and a mirror of its own.
use super::camera::flip_rows;
use super::gl::{GlContext, GlError};
use super::mirror::{self, Mirror};
use super::{Offscreen, RenderContext};
use crate::sim::{StateSnapshot, WorldGeneration};
use mujoco_rs::prelude::*;
use std::path::Path;

/// What to draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScreenshotSpec {
    /// A model camera id; None: the free camera, looking at the world's centre of mass.
    pub camera: Option<usize>,
    /// The free camera's azimuth and elevation (degrees) and distance (metres); None: the
    /// model's `<visual>` defaults.
    pub view: Option<[f64; 3]>,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum ScreenshotError {
    #[error(transparent)]
    Gl(#[from] GlError),
    #[error(transparent)]
    Memory(#[from] mirror::NoMemory),
    #[error("reading the pixels: {0}")]
    Pixels(String),
    #[error("{path}: {error}")]
    File { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Png {
        path: String,
        error: png::EncodingError,
    },
}

/// Draws the newest state of `world` as `spec` says and writes it to `path`.
pub fn take(
    world: &WorldGeneration,
    spec: &ScreenshotSpec,
    path: &Path,
) -> Result<(), ScreenshotError> {
    let rgb = draw(world, spec)?;
    // Its GL context is gone: the shader compiler's pages are not needed any more.
    super::gl::drop_shader_compiler_pages();
    write_png(path, spec.width, spec.height, &rgb)
}

/// The picture as RGB rows, top first.
pub fn draw(world: &WorldGeneration, spec: &ScreenshotSpec) -> Result<Vec<u8>, ScreenshotError> {
    let gl = GlContext::headless()?;
    let model = &world.model;
    let offscreen = Offscreen {
        width: spec.width as usize,
        height: spec.height as usize,
        multisample: true,
        shadows: true,
    };
    // SAFETY: the context made above is current on this thread until both drop, in this
    // function, the MuJoCo context first.
    let mut context = unsafe { RenderContext::new(model, offscreen) };
    let mut mirror = Mirror::new(model.clone())?;
    let data = &mut mirror.data;
    let mut state = StateSnapshot::with_layout(&world.layout());
    mirror::update(world, &mut state, data);
    mirror::set_motion(&state, data);
    data.forward();
    let mut scene = MjvScene::new(model, 2 * model.ffi().ngeom as usize + 1000);
    let mut camera = match spec.camera {
        Some(id) => MjvCamera::new_fixed(id),
        None => {
            // Where the robots are now, not where the model's bounding box was at start.
            let mut free = MjvCamera::new_free(model);
            free.lookat = data.subtree_com()[0];
            if let Some([azimuth, elevation, distance]) = spec.view {
                (free.azimuth, free.elevation, free.distance) = (azimuth, elevation, distance);
            }
            free
        }
    };
    scene.update(
        data,
        &MjvOption::default(),
        &MjvPerturb::default(),
        &mut camera,
    );
    let viewport = MjrRectangle::new(0, 0, spec.width as i32, spec.height as i32);
    context.render(&mut scene, &viewport);
    let mut rgb = vec![0u8; 3 * spec.width as usize * spec.height as usize];
    context
        .read_pixels(Some(&mut rgb), None, &viewport)
        .map_err(|e| ScreenshotError::Pixels(e.to_string()))?;
    flip_rows(&mut rgb, 3 * spec.width as usize);
    drop(scene);
    drop(mirror);
    drop(context);
    drop(gl);
    Ok(rgb)
}

/// Writes 8-bit RGB rows (top first) as a PNG file.
pub fn write_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> Result<(), ScreenshotError> {
    let shown = || path.display().to_string();
    let file = std::fs::File::create(path).map_err(|error| ScreenshotError::File {
        path: shown(),
        error,
    })?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let png = |error| ScreenshotError::Png {
        path: shown(),
        error,
    };
    let mut writer = encoder.write_header().map_err(png)?;
    writer.write_image_data(rgb).map_err(png)?;
    writer.finish().map_err(png)
}
