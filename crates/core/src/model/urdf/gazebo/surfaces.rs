//! Per-link contact friction of `<gazebo reference="LINK">` blocks: gazebo_ros's `<mu1>` and
//! `<mu2>`, or SDF's `<collision><surface><friction><ode><mu>`/`<mu2>`. MuJoCo's contact has
//! one sliding friction where ODE's has one per direction: the larger of the two is taken
//! (a wheel that ODE lets slide sideways grips both ways here). `<kp>`/`<kd>` and `<minDepth>`
//! make the contact's softness: MuJoCo's solref and solimp width.
use super::values::{number, text};
use crate::model::xml::Element;

/// The links whose `<gazebo reference="LINK">` block turns gravity off: Classic's
/// `<turnGravityOff>true</turnGravityOff>` or SDF's `<gravity>false</gravity>`.
pub fn weightless(robot: &Element) -> Result<Vec<String>, String> {
    let mut links = Vec::new();
    for block in robot.children_named("gazebo") {
        let Some(link) = block.attr("reference") else {
            continue;
        };
        let off = match (
            text(Some(block), "turnGravityOff"),
            text(Some(block), "gravity"),
        ) {
            (Some(turned_off), _) => flag(&turned_off, "turnGravityOff")?,
            (None, Some(gravity)) => !flag(&gravity, "gravity")?,
            (None, None) => false,
        };
        if off {
            links.push(link.to_string());
        }
    }
    Ok(links)
}

/// SDF's boolean words.
fn flag(written: &str, element: &str) -> Result<bool, String> {
    match written {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        other => Err(format!("<{element}> '{other}' is not true or false")),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Surface {
    pub link: String,
    /// The sliding friction its collision geoms get.
    pub friction: Option<f64>,
    /// As written, for the notes.
    pub mu: [f64; 2],
    /// `<kp>` and `<kd>` as written, with MuJoCo's solref (timeconst, dampratio) they become.
    pub softness: Option<Softness>,
    /// `<minDepth>`: solimp's width, the penetration over which the contact stiffens.
    pub min_depth: Option<f64>,
    /// `<maxVel>`: ODE's cap on the correcting speed, which MuJoCo has no counterpart for.
    pub max_vel: Option<f64>,
    /// What of the block was not taken, in words.
    pub left_out: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Softness {
    pub kp: f64,
    pub kd: f64,
    pub mass: f64,
    pub solref: [f64; 2],
}

impl Surface {
    /// What the link's contacts became, in words.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(friction) = self.friction {
            let [mu1, mu2] = self.mu;
            parts.push(format!("friction {friction} (mu1 {mu1}, mu2 {mu2})"));
        }
        if let Some(Softness {
            kp,
            kd,
            mass,
            solref,
        }) = self.softness
        {
            let [timeconst, dampratio] = solref.map(|v| (v * 1e6).round() / 1e6);
            parts.push(format!(
                "solref {timeconst} {dampratio} (kp {kp}, kd {kd} on {mass} kg; \
                 timeconst {STIFFEST_TIMECONST} s or more)"
            ));
        }
        if let Some(width) = self.min_depth {
            parts.push(format!("solimp width {width} (minDepth)"));
        }
        format!("surface of '{}': {}", self.link, parts.join(", "))
    }
}

/// The stiffest contact a `<kp>` makes: 5 of MuJoCo's default 2 ms steps. At MuJoCo's own
/// limit of 2 steps the TurtleBot 4 rocked back 5.3 degrees after spawning on its wheels and
/// caster (kp 1e6), where 5 steps and the default 0.02 s settle under 0.35 degrees.
pub const STIFFEST_TIMECONST: f64 = 0.01;

/// `<kp>` N/m and `<kd>` N s/m on a link of `mass` kg, as MuJoCo's solref: the same mass on
/// the same spring has natural frequency sqrt(kp/m) and damping ratio kd/(2 sqrt(kp m)).
/// Below critical damping the contact is made critical (an underdamped MuJoCo contact rings
/// and gains energy at a stiffness ODE's per-step solve would absorb).
pub fn solref(kp: f64, kd: f64, mass: f64) -> [f64; 2] {
    let frequency = (kp / mass).sqrt();
    let dampratio = (kd / (2.0 * (kp * mass).sqrt())).max(1.0);
    let timeconst = (1.0 / (dampratio * frequency)).max(STIFFEST_TIMECONST);
    [timeconst, dampratio]
}

/// The `<inertial><mass value>` of the URDF link named `link`.
fn link_mass(robot: &Element, link: &str) -> Option<f64> {
    robot
        .children_named("link")
        .find(|l| l.attr("name") == Some(link))?
        .child("inertial")?
        .child("mass")?
        .attr("value")?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|m| m.is_finite() && *m > 0.0)
}

pub fn read(robot: &Element) -> Result<Vec<Surface>, String> {
    let mut surfaces = Vec::new();
    for block in robot.children_named("gazebo") {
        let Some(link) = block.attr("reference") else {
            continue;
        };
        let at = |why: String| format!("<gazebo reference='{link}'>: {why}");
        let surface = read_one(robot, block, link).map_err(at)?;
        let given = surface.friction.is_some()
            || surface.softness.is_some()
            || surface.min_depth.is_some()
            || !surface.left_out.is_empty();
        if given {
            surfaces.push(surface);
        }
    }
    Ok(surfaces)
}

fn read_one(robot: &Element, block: &Element, link: &str) -> Result<Surface, String> {
    let ode_surface = block.child("collision").and_then(|c| c.child("surface"));
    let ode_friction = ode_surface
        .and_then(|s| s.child("friction"))
        .and_then(|f| f.child("ode"));
    let (first, friction_parent) = match ode_friction {
        Some(ode) => ("mu", Some(ode)),
        None => ("mu1", Some(block)),
    };
    let mu = [
        number(friction_parent, first, f64::NAN)?,
        number(friction_parent, "mu2", f64::NAN)?,
    ];
    let given: Vec<f64> = mu.iter().copied().filter(|m| !m.is_nan()).collect();
    if given.iter().any(|m| *m < 0.0) {
        return Err(format!("a negative friction {mu:?}"));
    }
    let friction = given.iter().copied().reduce(f64::max);
    // Classic writes the contact beside mu1; SDF under <surface><contact><ode>.
    let contact_parent = ode_surface
        .and_then(|s| s.child("contact"))
        .and_then(|c| c.child("ode"))
        .or(Some(block));
    let positive = |name: &str| -> Result<Option<f64>, String> {
        let value = number(contact_parent, name, f64::NAN)?;
        if value < 0.0 {
            return Err(format!("<{name}> {value} is negative"));
        }
        Ok(Some(value).filter(|v| !v.is_nan()))
    };
    // SDF spells them min_depth and max_vel.
    let min_depth = positive("minDepth")?.or(positive("min_depth")?);
    let max_vel = positive("maxVel")?.or(positive("max_vel")?);
    let mut left_out = Vec::new();
    if let Some(max_vel) = max_vel {
        left_out.push(format!(
            "surface of '{link}': maxVel {max_vel} (MuJoCo does not cap the correcting speed)"
        ));
    }
    let softness = match (positive("kp")?, positive("kd")?.unwrap_or(0.0)) {
        (Some(kp), kd) if kp > 0.0 => match link_mass(robot, link) {
            Some(mass) => Some(Softness {
                kp,
                kd,
                mass,
                solref: solref(kp, kd, mass),
            }),
            None => {
                left_out.push(format!(
                    "surface of '{link}': kp {kp} (the link has no <inertial><mass> to \
                     set the spring against; MuJoCo's default softness kept)"
                ));
                None
            }
        },
        _ => None,
    };
    Ok(Surface {
        link: link.to_string(),
        friction,
        mu: mu.map(|m| match (m.is_nan(), friction) {
            (true, Some(friction)) => friction,
            _ => m,
        }),
        softness,
        min_depth: min_depth.filter(|d| *d > 0.0),
        max_vel,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use crate::model::xml;

    #[test]
    fn friction_comes_from_either_spelling_the_larger_of_the_two() {
        let found = super::read(
            &xml::parse(
                "<robot name='r'><gazebo reference='caster'><mu1>0.01</mu1><mu2>0.01</mu2></gazebo>\
                 <gazebo reference='wheel'><collision><surface><friction><ode><mu>1.0</mu>\
                 <mu2>0.0</mu2></ode></friction></surface></collision></gazebo>\
                 <gazebo reference='plain'><material>Gazebo/White</material></gazebo></robot>",
            )
            .unwrap(),
        )
        .unwrap();
        let frictions: Vec<_> = found
            .iter()
            .map(|s| (s.link.as_str(), s.friction))
            .collect();
        assert_eq!(frictions, [("caster", Some(0.01)), ("wheel", Some(1.0))]);
        assert_eq!(found[1].mu, [1.0, 0.0]);
    }

    #[test]
    fn kp_and_kd_become_the_solref_of_that_spring_on_the_links_mass() {
        // An overdamped contact keeps its ratio: 10 rad/s, ratio 5, timeconst 1/(5*10).
        assert_eq!(super::solref(100.0, 100.0, 1.0), [0.02, 5.0]);
        let robot = xml::parse(
            "<robot name='r'><link name='wheel'><inertial><mass value='0.2'/></inertial></link>\
             <gazebo reference='wheel'><kp>1000000.0</kp><kd>100.0</kd>\
             <minDepth>0.0001</minDepth><maxVel>1.0</maxVel></gazebo>\
             <gazebo reference='ghost'><kp>1000</kp></gazebo></robot>",
        )
        .unwrap();
        let found = super::read(&robot).unwrap();
        let ghost = &found[1];
        assert_eq!((ghost.link.as_str(), ghost.softness), ("ghost", None));
        assert!(
            ghost.left_out[0].contains("'ghost': kp 1000 (the link has no <inertial><mass>"),
            "{:?}",
            ghost.left_out
        );
        assert!(
            found[0].left_out[0].contains("maxVel 1"),
            "{:?}",
            found[0].left_out
        );
        let robot = xml::parse(
            "<robot name='r'><link name='wheel'><inertial><mass value='0.2'/></inertial></link>\
             <gazebo reference='wheel'><kp>1000000.0</kp><kd>100.0</kd>\
             <minDepth>0.0001</minDepth><maxVel>1.0</maxVel></gazebo></robot>",
        )
        .unwrap();
        let wheel = &super::read(&robot).unwrap()[0];
        // Underdamped (ratio 0.11) is made critical, and 1/sqrt(kp/m) = 0.00045 s is held
        // at the stiffest time constant.
        let [timeconst, dampratio] = wheel.softness.unwrap().solref;
        assert_eq!([timeconst, dampratio], [super::STIFFEST_TIMECONST, 1.0]);
        // A soft spring keeps its own: 1000 N/m on 0.2 kg is 70.7 rad/s, critical.
        let [timeconst, _] = super::solref(1000.0, 0.0, 0.2);
        assert!(
            (timeconst - 1.0 / 5000.0_f64.sqrt()).abs() < 1e-12,
            "{timeconst}"
        );
        assert_eq!(
            (wheel.friction, wheel.min_depth, wheel.max_vel),
            (None, Some(0.0001), Some(1.0))
        );
        let said = wheel.describe();
        assert!(
            said.contains("solref 0.01 1") && said.contains("width 0.0001"),
            "{said}"
        );
    }

    #[test]
    fn gravity_is_off_for_turn_gravity_off_and_gravity_false() {
        let robot = xml::parse(
            "<robot name='r'><gazebo reference='balloon'><turnGravityOff>true</turnGravityOff>\
             </gazebo><gazebo reference='drone'><gravity>false</gravity></gazebo>\
             <gazebo reference='rock'><gravity>true</gravity></gazebo></robot>",
        )
        .unwrap();
        assert_eq!(super::weightless(&robot).unwrap(), ["balloon", "drone"]);
        let broken = xml::parse(
            "<robot name='r'><gazebo reference='x'><turnGravityOff>yes</turnGravityOff>\
             </gazebo></robot>",
        )
        .unwrap();
        let why = super::weightless(&broken).unwrap_err();
        assert!(why.contains("<turnGravityOff> 'yes'"), "{why}");
    }
}
