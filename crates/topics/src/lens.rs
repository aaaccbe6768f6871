//! A camera's lens: the plumb-bob distortion of `cameras[i].distortion` applied to the
//! pinhole frame MuJoCo renders, as a real lens with those coefficients would show it. Each
//! pixel of the distorted image looks up where its ray falls in the pinhole image (the
//! coefficients' inverse, by fixed-point iteration, once per image size and K) and takes
//! the colour there, bilinear, and the depth and segment of the nearest pixel (a blend of
//! two depths is a distance nothing lies at). What falls outside the pinhole image is black,
//! sees nothing (+inf) and no geom. K stays the pinhole's; CameraInfo's D holds the
//! coefficients, so `image_proc` undoes it.
use crate::config::LensDistortion;
use crate::render::{Frame, Intrinsics};

pub struct Lens {
    coefficients: LensDistortion,
    /// The size and K the map was made for.
    made_for: Option<(usize, usize, Intrinsics)>,
    /// Per distorted pixel, its source in the pinhole image, (column, row); NaN: outside.
    sources: Vec<[f32; 2]>,
    rgb: Vec<u8>,
    depth: Vec<f32>,
    segments: Vec<i32>,
}

impl Lens {
    pub fn new(coefficients: LensDistortion) -> Self {
        Self {
            coefficients,
            made_for: None,
            sources: Vec::new(),
            rgb: Vec::new(),
            depth: Vec::new(),
            segments: Vec::new(),
        }
    }

    /// CameraInfo's D.
    pub fn d(&self) -> [f64; 5] {
        self.coefficients.coefficients()
    }

    /// Per pixel of the last frame `apply` distorted, where its ray falls in the pinhole
    /// image (NaN: outside it): what a point cloud back-projects through K.
    pub fn sources(&self) -> &[[f32; 2]] {
        &self.sources
    }

    /// The frame as seen through the lens.
    pub fn apply(&mut self, frame: &mut Frame) {
        let key = (frame.width, frame.height, frame.intrinsics);
        if self.made_for != Some(key) {
            self.sources = sources(
                &self.coefficients,
                frame.width,
                frame.height,
                &frame.intrinsics,
            );
            self.made_for = Some(key);
        }
        let width = frame.width;
        self.rgb.clear();
        for source in &self.sources {
            self.rgb
                .extend_from_slice(&bilinear(&frame.rgb, width, frame.height, *source));
        }
        std::mem::swap(&mut frame.rgb, &mut self.rgb);
        remap_nearest(
            &mut frame.depth,
            &mut self.depth,
            &self.sources,
            width,
            f32::INFINITY,
        );
        remap_nearest(
            &mut frame.segments,
            &mut self.segments,
            &self.sources,
            width,
            -1,
        );
    }
}

/// Where in the pinhole image each pixel of the distorted one comes from.
fn sources(lens: &LensDistortion, width: usize, height: usize, k: &Intrinsics) -> Vec<[f32; 2]> {
    let (w, h) = (width as f64, height as f64);
    (0..width * height)
        .map(|pixel| {
            let (u, v) = ((pixel % width) as f64, (pixel / width) as f64);
            let seen = undistort(lens, (u - k.cx) / k.fx, (v - k.cy) / k.fy);
            let at = seen.map(|(x, y)| (x * k.fx + k.cx, y * k.fy + k.cy));
            match at {
                Some((su, sv)) if su > -0.5 && sv > -0.5 && su < w - 0.5 && sv < h - 0.5 => {
                    [su as f32, sv as f32]
                }
                _ => [f32::NAN; 2],
            }
        })
        .collect()
}

/// The undistorted normalized point the lens puts at (xd, yd), or None where the iteration
/// does not settle (far outside the coefficients' useful field).
fn undistort(lens: &LensDistortion, xd: f64, yd: f64) -> Option<(f64, f64)> {
    let (mut x, mut y) = (xd, yd);
    for _ in 0..50 {
        let (fx, fy) = lens.distort(x, y);
        let (ex, ey) = (fx - xd, fy - yd);
        if ex.abs() < 1e-10 && ey.abs() < 1e-10 {
            return Some((x, y));
        }
        // The distortion near (x, y) is close to a scaling: step by the error over it.
        let r2 = x * x + y * y;
        let radial = 1.0 + r2 * (lens.k1 + r2 * (lens.k2 + r2 * lens.k3));
        if !(radial.is_finite() && radial > 0.05) {
            return None;
        }
        (x, y) = (x - ex / radial, y - ey / radial);
    }
    let (fx, fy) = lens.distort(x, y);
    ((fx - xd).abs() < 1e-6 && (fy - yd).abs() < 1e-6).then_some((x, y))
}

/// The colour at `source` of an rgb image, blended from its four nearest pixels.
fn bilinear(rgb: &[u8], width: usize, height: usize, source: [f32; 2]) -> [u8; 3] {
    if source[0].is_nan() || rgb.len() < 3 * width * height {
        return [0; 3];
    }
    let (u, v) = (source[0].max(0.0), source[1].max(0.0));
    let (u0, v0) = ((u as usize).min(width - 1), (v as usize).min(height - 1));
    let (u1, v1) = ((u0 + 1).min(width - 1), (v0 + 1).min(height - 1));
    let (a, b) = (u - u0 as f32, v - v0 as f32);
    let at = |u: usize, v: usize, c: usize| rgb[3 * (v * width + u) + c] as f32;
    std::array::from_fn(|c| {
        let top = at(u0, v0, c) * (1.0 - a) + at(u1, v0, c) * a;
        let bottom = at(u0, v1, c) * (1.0 - a) + at(u1, v1, c) * a;
        (top * (1.0 - b) + bottom * b).round() as u8
    })
}

/// `values` (one per pixel, rows of `width`) remapped through `sources` to the nearest
/// pixel, `outside` where a source is NaN; `scratch` takes the old buffer.
fn remap_nearest<T: Copy>(
    values: &mut Vec<T>,
    scratch: &mut Vec<T>,
    sources: &[[f32; 2]],
    width: usize,
    outside: T,
) {
    if values.len() != sources.len() {
        return;
    }
    scratch.clear();
    scratch.extend(sources.iter().map(|s| {
        if s[0].is_nan() {
            return outside;
        }
        let (u, v) = (
            s[0].round().max(0.0) as usize,
            s[1].round().max(0.0) as usize,
        );
        values.get(v * width + u).copied().unwrap_or(outside)
    }));
    std::mem::swap(values, scratch);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn barrel() -> LensDistortion {
        LensDistortion {
            k1: -0.25,
            k2: 0.1,
            k3: -0.01,
            p1: 0.002,
            p2: -0.001,
        }
    }

    #[test]
    fn undistorting_inverts_the_plumb_bob_equations() {
        let lens = barrel();
        for (x, y) in [(0.0, 0.0), (0.3, -0.2), (-0.5, 0.4), (0.7, 0.5)] {
            let (xd, yd) = lens.distort(x, y);
            let (ux, uy) = undistort(&lens, xd, yd).expect("settles");
            assert!(
                (ux - x).abs() < 1e-8 && (uy - y).abs() < 1e-8,
                "{x} {y}: {ux} {uy}"
            );
        }
    }

    #[test]
    fn no_distortion_maps_each_pixel_to_itself() {
        let k = Intrinsics {
            fx: 50.0,
            fy: 50.0,
            cx: 3.5,
            cy: 2.5,
        };
        let map = sources(&LensDistortion::default(), 8, 6, &k);
        let at_itself = |(p, s): (usize, &[f32; 2])| {
            (s[0] - (p % 8) as f32).abs() < 1e-4 && (s[1] - (p / 8) as f32).abs() < 1e-4
        };
        assert!(map.iter().enumerate().all(at_itself), "{map:?}");
    }

    #[test]
    fn barrel_distortion_pulls_the_edges_in() {
        let k = Intrinsics {
            fx: 100.0,
            fy: 100.0,
            cx: 49.5,
            cy: 49.5,
        };
        let map = sources(&barrel(), 100, 100, &k);
        // The corner pixel of the distorted image sees a ray beyond the pinhole's corner.
        assert!(map[0][0].is_nan());
        // A pixel halfway out sees farther out than itself.
        let s = map[49 * 100 + 80];
        assert!(s[0] > 80.0 && (s[1] - 49.0).abs() < 1.0, "{s:?}");
    }
}
