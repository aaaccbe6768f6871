//! A scan's nearest hits, the answers of MuJoCo's `mj_multiRay` for less work. That function
//! tests every ray against every body's bounding sphere (Go1: 28,800 rays by 14 bodies a
//! scan, almost all of them its own robot's, hidden). Here it goes the other way: the rays,
//! fixed in the lidar's frame, are sorted once into cells of azimuth and elevation, and each
//! visible geom, from its bounding sphere as the lidar sees it, picks the cells it covers.
//! Only those rays meet the geom, through MuJoCo's own intersection functions
//! (`mju_rayGeom`, `mj_rayMesh`, `mj_rayHfield`), so every distance is MuJoCo's.
use mujoco_rs::mujoco_c::{mj_rayHfield, mj_rayMesh, mjModel, mjtGeom, mju_rayGeom};
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_model::traits::ModelType;
use nalgebra::{Matrix3, Vector3};
use std::f64::consts::{FRAC_PI_2, PI, TAU};

/// Azimuth cells a turn is cut into (one degree each).
const AZIMUTH_CELLS: usize = 360;
/// Elevation cells over the fan's own span.
const ELEVATION_CELLS: usize = 64;
/// Widening of every cone and cell bound, radians: rounding never drops a grazing ray.
const SLACK: f64 = 1e-9;

/// A lidar's rays in its frame, sorted into cells of azimuth x elevation.
pub struct RayFan {
    rays: Vec<Vector3<f64>>,
    lowest: f64,
    /// Elevation per cell row, and the rows (one for a planar scan).
    row_height: f64,
    rows: usize,
    /// Per cell (row after row), where its rays start in `by_cell`, and the end.
    starts: Vec<u32>,
    by_cell: Vec<u32>,
}

impl RayFan {
    pub fn new(rays: &[[f64; 3]]) -> Self {
        let rays: Vec<Vector3<f64>> = rays.iter().map(|r| Vector3::from(*r)).collect();
        let elevations = rays.iter().map(elevation);
        let lowest = elevations.clone().fold(f64::INFINITY, f64::min);
        let highest = elevations.fold(f64::NEG_INFINITY, f64::max);
        let span = highest - lowest;
        let (rows, row_height) = if span > 1e-6 {
            (ELEVATION_CELLS, span / ELEVATION_CELLS as f64)
        } else {
            (1, 1.0)
        };
        let mut fan = Self {
            rays,
            lowest: if lowest.is_finite() { lowest } else { 0.0 },
            row_height,
            rows,
            starts: vec![0; rows * AZIMUTH_CELLS + 1],
            by_cell: Vec::new(),
        };
        let cells: Vec<usize> = fan.rays.iter().map(|r| fan.cell_of(r)).collect();
        for &cell in &cells {
            fan.starts[cell + 1] += 1;
        }
        for cell in 0..rows * AZIMUTH_CELLS {
            fan.starts[cell + 1] += fan.starts[cell];
        }
        let mut next = fan.starts.clone();
        fan.by_cell = vec![0; cells.len()];
        for (ray, &cell) in cells.iter().enumerate() {
            fan.by_cell[next[cell] as usize] = ray as u32;
            next[cell] += 1;
        }
        fan
    }

    pub fn rays(&self) -> usize {
        self.rays.len()
    }

    fn row(&self, elevation: f64) -> usize {
        let row = ((elevation - self.lowest) / self.row_height).floor();
        row.clamp(0.0, (self.rows - 1) as f64) as usize
    }

    fn cell_of(&self, ray: &Vector3<f64>) -> usize {
        self.row(elevation(ray)) * AZIMUTH_CELLS + column(azimuth(ray)).clamp(0, 359) as usize
    }

    /// Calls `each` with every ray whose direction lies within `half_angle` of the unit
    /// vector `axis` (lidar frame), and maybe a few more.
    fn within_cone(&self, axis: &Vector3<f64>, half_angle: f64, mut each: impl FnMut(usize)) {
        let centre = elevation(axis);
        let (low, high) = (centre - half_angle, centre + half_angle);
        let top = match self.rows {
            1 => self.lowest,
            rows => self.lowest + self.row_height * rows as f64,
        };
        if high < self.lowest - SLACK || low > top + SLACK {
            return;
        }
        // Over a pole the cone spans every azimuth; elsewhere its half-width in azimuth is
        // asin(sin(half angle) / cos(elevation of its axis)).
        let columns = if high >= FRAC_PI_2 || low <= -FRAC_PI_2 {
            None
        } else {
            let half_width = (half_angle.sin() / centre.cos()).min(1.0).asin() + SLACK;
            let (first, last) = (
                column(azimuth(axis) - half_width),
                column(azimuth(axis) + half_width),
            );
            (last - first + 1 < AZIMUTH_CELLS as i64).then_some((first, last))
        };
        let cos_half = half_angle.cos();
        for row in self.row(low - SLACK)..=self.row(high + SLACK) {
            let mut cell_rays = |column: usize| {
                let cell = row * AZIMUTH_CELLS + column;
                let rays = self.starts[cell] as usize..self.starts[cell + 1] as usize;
                for &ray in &self.by_cell[rays] {
                    if self.rays[ray as usize].dot(axis) >= cos_half {
                        each(ray as usize);
                    }
                }
            };
            match columns {
                Some((first, last)) => (first..=last)
                    .for_each(|c| cell_rays(c.rem_euclid(AZIMUTH_CELLS as i64) as usize)),
                None => (0..AZIMUTH_CELLS).for_each(&mut cell_rays),
            }
        }
    }
}

fn azimuth(ray: &Vector3<f64>) -> f64 {
    ray.y.atan2(ray.x)
}

fn elevation(ray: &Vector3<f64>) -> f64 {
    ray.z.atan2(ray.x.hypot(ray.y))
}

/// The azimuth cell of an angle, unwrapped (a turn further on is AZIMUTH_CELLS more).
fn column(azimuth: f64) -> i64 {
    ((azimuth + PI) / TAU * AZIMUTH_CELLS as f64).floor() as i64
}

/// The geoms a ray can hit, as `mj_ray` chooses them (visible: alpha above 0, by material
/// where it has one; no group filter; static ones too), less those hidden from this lidar.
pub struct Targets {
    geoms: Vec<Target>,
    /// The model has what only `mj_multiRay` casts against (a visible SDF geom, a flex).
    pub needs_mujoco: bool,
}

struct Target {
    geom: usize,
    kind: i32,
    size: [f64; 3],
    /// Bounding sphere about the geom's frame; None where every ray may meet it (a plane,
    /// a height field).
    radius: Option<f64>,
}

impl Targets {
    pub fn new(model: &MjModel, hidden: &[bool]) -> Self {
        let (kinds, matids, rgba) = (model.geom_type(), model.geom_matid(), model.geom_rgba());
        let (materials, radii, sizes) = (model.mat_rgba(), model.geom_rbound(), model.geom_size());
        let unbounded = [mjtGeom::mjGEOM_PLANE as i32, mjtGeom::mjGEOM_HFIELD as i32];
        let visible = |geom: usize| match usize::try_from(matids[geom]) {
            Ok(material) => materials[material][3] != 0.0,
            Err(_) => rgba[geom][3] != 0.0,
        };
        let geoms: Vec<Target> = (0..kinds.len())
            .filter(|&geom| !hidden.get(geom).copied().unwrap_or(false) && visible(geom))
            .map(|geom| {
                let kind = kinds[geom] as i32;
                let bounded = !unbounded.contains(&kind) && radii[geom] > 0.0;
                Target {
                    geom,
                    kind,
                    size: sizes[geom],
                    radius: bounded.then_some(radii[geom]),
                }
            })
            .collect();
        let sdf = mjtGeom::mjGEOM_SDF as i32;
        let needs_mujoco = model.ffi().nflex > 0 || geoms.iter().any(|t| t.kind == sdf);
        Self {
            geoms,
            needs_mujoco,
        }
    }

    /// Casts every ray of `fan` from the lidar at `origin` turned by `rotation` (world frame)
    /// in `data`'s geom poses: per ray the nearest geom hit (-1: none) and its distance
    /// (-1: none). `world_rays` holds the rays turned into the world. Geoms whose bounding
    /// sphere lies wholly beyond `cutoff` are passed over.
    #[allow(clippy::too_many_arguments)]
    pub fn cast<M: ModelType>(
        &self,
        header: &mjModel,
        data: &MjData<M>,
        fan: &RayFan,
        origin: &Vector3<f64>,
        rotation: &Matrix3<f64>,
        world_rays: &[[f64; 3]],
        geoms: &mut [i32],
        distances: &mut [f64],
        cutoff: f64,
    ) {
        geoms.fill(-1);
        distances.fill(-1.0);
        let (positions, orientations) = (data.geom_xpos(), data.geom_xmat());
        let pnt = [origin.x, origin.y, origin.z];
        for target in &self.geoms {
            let geom = target.geom;
            let hit = |ray: usize| -> f64 {
                let vec = &world_rays[ray];
                // SAFETY: the arrays are the model's and data's for this geom, the points
                // and directions three numbers each; no normal is asked for.
                unsafe {
                    match target.kind {
                        k if k == mjtGeom::mjGEOM_MESH as i32 => mj_rayMesh(
                            header,
                            data.ffi(),
                            geom as i32,
                            &pnt,
                            vec,
                            std::ptr::null_mut(),
                        ),
                        k if k == mjtGeom::mjGEOM_HFIELD as i32 => mj_rayHfield(
                            header,
                            data.ffi(),
                            geom as i32,
                            &pnt,
                            vec,
                            std::ptr::null_mut(),
                        ),
                        kind => mju_rayGeom(
                            &positions[geom],
                            &orientations[geom],
                            &target.size,
                            &pnt,
                            vec,
                            kind,
                            std::ptr::null_mut(),
                        ),
                    }
                }
            };
            let mut nearer = |ray: usize| {
                let distance = hit(ray);
                if distance >= 0.0 && (distances[ray] < 0.0 || distance < distances[ray]) {
                    distances[ray] = distance;
                    geoms[ray] = geom as i32;
                }
            };
            let centre = rotation.transpose() * (Vector3::from(positions[geom]) - origin);
            let away = centre.norm();
            match target.radius.map(|r| r * (1.0 + SLACK) + SLACK) {
                Some(radius) if away > radius => {
                    if away - radius <= cutoff {
                        let half_angle = (radius / away).asin() + SLACK;
                        fan.within_cone(&(centre / away), half_angle, &mut nearer);
                    }
                }
                _ => (0..fan.rays()).for_each(&mut nearer),
            }
        }
    }
}
