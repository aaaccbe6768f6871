//! The world on the earth, as Gazebo's spherical coordinates place it (gz-math's
//! `SphericalCoordinates` on the WGS84 ellipsoid): a world point is turned by the heading
//! into east, north, up about the origin, that local tangent plane is carried into
//! earth-centred, earth-fixed coordinates, and those back to latitude, longitude and height
//! above the ellipsoid by Bowring's closed form (well under a millimetre near the surface).
use crate::config::GeoOrigin;
use nalgebra::{Matrix3, Vector3};

/// WGS84's semi-major and semi-minor axes in metres.
const A: f64 = 6_378_137.0;
const B: f64 = 6_356_752.314_245;

/// The world's origin on the earth and the turn from world axes to east, north, up.
#[derive(Debug, Clone)]
pub struct Earth {
    origin_ecef: Vector3<f64>,
    /// East, north, up at the origin into earth-fixed axes.
    enu_to_ecef: Matrix3<f64>,
    /// World axes into east, north, up (a turn by the heading about up).
    world_to_enu: Matrix3<f64>,
}

/// The first eccentricity squared, and the second.
fn eccentricities() -> (f64, f64) {
    (1.0 - B * B / (A * A), A * A / (B * B) - 1.0)
}

/// The prime vertical radius of curvature at latitude `lat` (radians).
fn prime_vertical(lat: f64) -> f64 {
    let (e2, _) = eccentricities();
    A / (1.0 - e2 * lat.sin().powi(2)).sqrt()
}

impl Earth {
    pub fn new(origin: &GeoOrigin) -> Self {
        let (lat, lon) = (origin.latitude.to_radians(), origin.longitude.to_radians());
        let n = prime_vertical(lat);
        let h = origin.altitude;
        let origin_ecef = Vector3::new(
            (n + h) * lat.cos() * lon.cos(),
            (n + h) * lat.cos() * lon.sin(),
            (B * B / (A * A) * n + h) * lat.sin(),
        );
        let (sl, cl, sp, cp) = (lon.sin(), lon.cos(), lat.sin(), lat.cos());
        let enu_to_ecef = Matrix3::new(-sl, -cl * sp, cl * cp, cl, -sl * sp, sl * cp, 0.0, cp, sp);
        let (sh, ch) = origin.heading.to_radians().sin_cos();
        let world_to_enu = Matrix3::new(ch, -sh, 0.0, sh, ch, 0.0, 0.0, 0.0, 1.0);
        Self {
            origin_ecef,
            enu_to_ecef,
            world_to_enu,
        }
    }

    /// A world vector (a velocity, an offset) in east, north, up.
    pub fn enu(&self, world: [f64; 3]) -> [f64; 3] {
        let v = self.world_to_enu * Vector3::from(world);
        [v.x, v.y, v.z]
    }

    /// Latitude and longitude in degrees and height above the ellipsoid in metres of the
    /// point `enu` metres east, north and up of the origin.
    pub fn geodetic(&self, enu: [f64; 3]) -> [f64; 3] {
        let ecef = self.origin_ecef + self.enu_to_ecef * Vector3::from(enu);
        let (e2, ep2) = eccentricities();
        let p = ecef.x.hypot(ecef.y);
        let theta = (ecef.z * A).atan2(p * B);
        let lat = (ecef.z + ep2 * B * theta.sin().powi(3)).atan2(p - e2 * A * theta.cos().powi(3));
        let lon = ecef.y.atan2(ecef.x);
        let alt = p / lat.cos() - prime_vertical(lat);
        [lat.to_degrees(), lon.to_degrees(), alt]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(latitude: f64, longitude: f64, altitude: f64, heading: f64) -> GeoOrigin {
        GeoOrigin {
            latitude,
            longitude,
            altitude,
            heading,
        }
    }

    #[test]
    fn the_origin_is_where_the_config_puts_it() {
        let earth = Earth::new(&origin(47.3977, 8.5456, 488.0, 0.0));
        let [lat, lon, alt] = earth.geodetic([0.0; 3]);
        assert!(
            (lat - 47.3977).abs() < 1e-10 && (lon - 8.5456).abs() < 1e-10,
            "{lat} {lon}"
        );
        assert!((alt - 488.0).abs() < 1e-6, "{alt}");
    }

    #[test]
    fn a_metre_north_and_east_is_the_earths_radii_of_curvature() {
        // At 45 N a degree of latitude is 111,132 m and of longitude 78,847 m (WGS84).
        let earth = Earth::new(&origin(45.0, 10.0, 0.0, 0.0));
        let [lat, lon, _] = earth.geodetic([0.0, 1000.0, 0.0]);
        assert!((1000.0 / (lat - 45.0) - 111_132.0).abs() < 5.0, "{lat}");
        assert!((lon - 10.0).abs() < 1e-12);
        let [lat, lon, alt] = earth.geodetic([1000.0, 0.0, 0.0]);
        assert!((1000.0 / (lon - 10.0) - 78_847.0).abs() < 5.0, "{lon}");
        // The tangent plane leaves the ellipsoid: 1 km off, 7.8 cm above it, a hair south.
        assert!((alt - 0.0785).abs() < 0.001 && lat < 45.0, "{alt} {lat}");
    }

    #[test]
    fn the_heading_turns_the_world_from_east_towards_north() {
        let earth = Earth::new(&origin(0.0, 0.0, 0.0, 90.0));
        let [e, n, u] = earth.enu([1.0, 2.0, 3.0]);
        assert!((e + 2.0).abs() < 1e-12 && (n - 1.0).abs() < 1e-12 && u == 3.0);
    }
}
