//! Physically sound inertials from what real-world URDFs carry. MuJoCo refuses an inertia
//! that is not positive definite or breaks the triangle inequality, and a moving link whose
//! whole subtree has no mass makes its joint's mass matrix singular. Gazebo and MuJoCo's own
//! options (`balanceinertia`, `boundmass`, `boundinertia`) repair these silently; here each
//! repair is reported with the old and new values.
use super::reader::Inertial;
use nalgebra::{Matrix3, Rotation3, SymmetricEigen, UnitQuaternion, Vector3};

/// The least mass of a moving link whose subtree has none, in kg (0.1 g).
pub const MIN_MOVING_MASS: f64 = 1e-4;
/// Density of the solid sphere that stands in for a missing inertia, in kg/m^3 (water).
const STAND_IN_DENSITY: f64 = 1000.0;

/// An inertial in the body frame, as MJCF's `<inertial pos quat mass diaginertia>` takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyInertial {
    pub pos: [f64; 3],
    /// Principal axes, MuJoCo order (w, x, y, z).
    pub quat: [f64; 4],
    pub mass: f64,
    pub diag: [f64; 3],
}

/// Principal moments of a solid sphere of `mass` at the stand-in density.
fn sphere_moments(mass: f64) -> f64 {
    let radius = (3.0 * mass / (4.0 * std::f64::consts::PI * STAND_IN_DENSITY)).cbrt();
    0.4 * mass * radius * radius
}

fn format_moments(m: &[f64; 3]) -> String {
    format!("[{:.4e}, {:.4e}, {:.4e}]", m[0], m[1], m[2])
}

/// Turns a URDF inertial into a body-frame one, repairing what physics cannot take.
/// `needs_mass`: the link moves and nothing in its subtree has mass. Returns the inertial
/// (None for a massless link that needs none) and, when something was changed, what.
pub fn body_inertial(
    inertial: Option<&Inertial>,
    needs_mass: bool,
) -> Result<(Option<BodyInertial>, Option<String>), String> {
    let (origin, mass, i) = match inertial {
        Some(inertial) => (inertial.origin, inertial.mass, inertial.inertia),
        None => (Default::default(), 0.0, [0.0; 6]),
    };
    if mass < 0.0 {
        return Err(format!("mass {mass} is negative"));
    }
    let mut notes = Vec::new();
    let mut mass_used = mass;
    if needs_mass && mass < MIN_MOVING_MASS {
        mass_used = MIN_MOVING_MASS;
        notes.push(format!(
            "a moving link with no mass in its subtree: mass {mass} -> {MIN_MOVING_MASS} kg"
        ));
    }
    if mass_used == 0.0 {
        if i.iter().any(|v| *v != 0.0) {
            notes.push("an inertia without mass is dropped (massless link)".to_string());
        }
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        return Ok((None, note));
    }
    let (axes, old) = principal_axes(&i);
    let moments = physical_moments(old, mass, mass_used, &mut notes);
    // URDF's inertial frame (origin rpy) rotated into the body frame.
    let frame = UnitQuaternion::from_euler_angles(origin.rpy[0], origin.rpy[1], origin.rpy[2]);
    let principal =
        frame * UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(axes));
    let note = (!notes.is_empty()).then(|| {
        format!(
            "{} (mass {mass} kg, ixx {} iyy {} izz {} ixy {} ixz {} iyz {})",
            notes.join("; "),
            i[0],
            i[1],
            i[2],
            i[3],
            i[4],
            i[5]
        )
    });
    Ok((
        Some(BodyInertial {
            pos: Vector3::from(origin.xyz).into(),
            quat: [principal.w, principal.i, principal.j, principal.k],
            mass: mass_used,
            diag: moments,
        }),
        note,
    ))
}

/// The principal axes (a rotation: right-handed) and moments of the inertia tensor `i`
/// (ixx iyy izz ixy ixz iyz) in the inertial frame.
fn principal_axes(i: &[f64; 6]) -> (Matrix3<f64>, [f64; 3]) {
    let tensor = Matrix3::new(i[0], i[3], i[4], i[3], i[1], i[5], i[4], i[5], i[2]);
    let eigen = SymmetricEigen::new(tensor);
    let mut axes = eigen.eigenvectors;
    if axes.determinant() < 0.0 {
        axes.set_column(2, &(-axes.column(2)));
    }
    let moments = [
        eigen.eigenvalues[0],
        eigen.eigenvalues[1],
        eigen.eigenvalues[2],
    ];
    (axes, moments)
}

/// The principal moments `old` of a link of `mass` as MuJoCo accepts them for `mass_used`:
/// a stand-in sphere's where there are none or the mass was raised, non-positive ones lifted,
/// and the triangle inequality kept; each repair said in `notes`.
fn physical_moments(old: [f64; 3], mass: f64, mass_used: f64, notes: &mut Vec<String>) -> [f64; 3] {
    let mut moments = old;
    let largest = moments.iter().cloned().fold(0.0, f64::max);
    if largest <= 0.0 || mass_used != mass {
        let stand_in = sphere_moments(mass_used);
        if largest <= 0.0 {
            moments = [stand_in; 3];
            notes.push(format!(
                "no inertia for mass {mass_used} kg: a solid sphere's {stand_in:.4e} kg m^2 \
                 (density {STAND_IN_DENSITY} kg/m^3)"
            ));
        } else {
            moments = moments.map(|m| m.max(stand_in));
            notes.push(format!(
                "principal moments {} raised to at least {stand_in:.4e} kg m^2 for the new mass",
                format_moments(&old)
            ));
        }
    } else {
        // Non-positive principal moments are lifted to a thousandth of the largest.
        let floor = largest * 1e-3;
        if moments.iter().any(|m| *m < floor * 1e-3) {
            moments = moments.map(|m| m.max(floor));
        }
    }
    keep_triangle(&mut moments);
    let raised_for_mass = mass_used != mass && largest > 0.0;
    if largest > 0.0 && !raised_for_mass && moments != old {
        notes.push(format!(
            "principal moments {} are not physical (positive, each at most the sum of the \
             others): -> {}",
            format_moments(&old),
            format_moments(&moments)
        ));
    }
    moments
}

/// The triangle inequality: the two smaller moments raised to sum up to the largest.
fn keep_triangle(moments: &mut [f64; 3]) {
    let mut order = [0usize, 1, 2];
    order.sort_by(|a, b| moments[*a].total_cmp(&moments[*b]));
    let [a, b, c] = order;
    let excess = moments[c] - (moments[a] + moments[b]);
    if excess > 1e-9 * moments[c] {
        let raise = excess / 2.0 * (1.0 + 1e-6);
        moments[a] += raise;
        moments[b] += raise;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::urdf::reader::Pose;

    fn inertial(mass: f64, i: [f64; 6]) -> Inertial {
        Inertial {
            origin: Pose::default(),
            mass,
            inertia: i,
        }
    }

    #[test]
    fn sound_inertia_is_kept() {
        let (b, note) =
            body_inertial(Some(&inertial(2.0, [0.1, 0.2, 0.25, 0.0, 0.0, 0.0])), true).unwrap();
        let b = b.unwrap();
        assert_eq!(note, None);
        let mut diag = b.diag;
        diag.sort_by(f64::total_cmp);
        for (got, want) in diag.iter().zip([0.1, 0.2, 0.25]) {
            assert!((got - want).abs() < 1e-12, "{diag:?}");
        }
        assert_eq!(b.mass, 2.0);
    }

    #[test]
    fn triangle_inequality_is_restored() {
        let (b, note) = body_inertial(
            Some(&inertial(1.0, [0.01, 0.01, 0.5, 0.0, 0.0, 0.0])),
            false,
        )
        .unwrap();
        let mut d = b.unwrap().diag;
        d.sort_by(f64::total_cmp);
        assert!(d[0] + d[1] >= d[2], "{d:?}");
        assert!(
            (d[2] - 0.5).abs() < 1e-12,
            "the largest moment is kept: {d:?}"
        );
        assert!(note.unwrap().contains("-> ["));
    }

    #[test]
    fn negative_eigenvalue_is_lifted_and_zero_inertia_gets_a_sphere() {
        let (b, note) =
            body_inertial(Some(&inertial(1.0, [0.1, 0.1, 0.1, 0.2, 0.0, 0.0])), false).unwrap();
        assert!(b.unwrap().diag.iter().all(|m| *m > 0.0));
        assert!(note.is_some());
        let (b, note) = body_inertial(Some(&inertial(1.0, [0.0; 6])), false).unwrap();
        let b = b.unwrap();
        assert!((b.diag[0] - sphere_moments(1.0)).abs() < 1e-15);
        assert!(note.unwrap().contains("solid sphere"));
    }

    #[test]
    fn massless_moving_leaf_gets_a_small_mass_and_static_one_stays_massless() {
        let (b, note) = body_inertial(None, true).unwrap();
        assert_eq!(b.unwrap().mass, MIN_MOVING_MASS);
        assert!(note.unwrap().contains("no mass in its subtree"));
        assert_eq!(body_inertial(None, false).unwrap(), (None, None));
        assert!(body_inertial(Some(&inertial(-1.0, [0.0; 6])), false).is_err());
    }
}
