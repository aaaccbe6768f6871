//! Per-link contact friction of `<gazebo reference="LINK">` blocks: gazebo_ros's `<mu1>` and
//! `<mu2>`, or SDF's `<collision><surface><friction><ode><mu>`/`<mu2>`. MuJoCo's contact has
//! one sliding friction where ODE's has one per direction: the larger of the two is taken
//! (a wheel that ODE lets slide sideways grips both ways here).
use super::values::number;
use crate::model::xml::Element;

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
}
