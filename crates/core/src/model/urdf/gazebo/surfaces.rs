//! Per-link contact friction of `<gazebo reference="LINK">` blocks: gazebo_ros's `<mu1>` and
//! `<mu2>`, or SDF's `<collision><surface><friction><ode><mu>`/`<mu2>`. MuJoCo's contact has
//! one sliding friction where ODE's has one per direction: the larger of the two is taken
//! (a wheel that ODE lets slide sideways grips both ways here).
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
    pub friction: f64,
    /// As written, for the notes.
    pub mu: [f64; 2],
}

pub fn read(robot: &Element) -> Result<Vec<Surface>, String> {
    let mut surfaces = Vec::new();
    for block in robot.children_named("gazebo") {
        let Some(link) = block.attr("reference") else {
            continue;
        };
        let ode = block
            .child("collision")
            .and_then(|c| c.child("surface"))
            .and_then(|s| s.child("friction"))
            .and_then(|f| f.child("ode"));
        let (first, second) = match ode {
            Some(ode) => ("mu", Some(ode)),
            None => ("mu1", Some(block)),
        };
        let mu = [
            number(second, first, f64::NAN)?,
            number(second, "mu2", f64::NAN)?,
        ];
        let given: Vec<f64> = mu.iter().copied().filter(|m| !m.is_nan()).collect();
        let Some(friction) = given.iter().copied().reduce(f64::max) else {
            continue;
        };
        if given.iter().any(|m| *m < 0.0) {
            return Err(format!(
                "<gazebo reference='{link}'>: a negative friction {mu:?}"
            ));
        }
        surfaces.push(Surface {
            link: link.to_string(),
            friction,
            mu: mu.map(|m| if m.is_nan() { friction } else { m }),
        });
    }
    Ok(surfaces)
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
        assert_eq!(frictions, [("caster", 0.01), ("wheel", 1.0)]);
        assert_eq!(found[1].mu, [1.0, 0.0]);
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
