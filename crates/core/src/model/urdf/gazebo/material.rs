//! The colour a `<gazebo reference="LINK">` block gives the link's visuals, over the URDF's:
//! Classic's `<material>Gazebo/NAME</material>` (a script of Gazebo's media), or SDF's
//! `<visual><material><diffuse>`.
use crate::model::xml::Element;

/// The diffuse colours of Gazebo's stock material scripts (`gazebo.material`).
const SCRIPTS: &[(&str, [f64; 3])] = &[
    ("Black", [0.0, 0.0, 0.0]),
    ("Blue", [0.0, 0.0, 1.0]),
    ("DarkGrey", [0.175, 0.175, 0.175]),
    ("DarkYellow", [0.7, 0.7, 0.0]),
    ("FlatBlack", [0.1, 0.1, 0.1]),
    ("Green", [0.0, 1.0, 0.0]),
    ("Grey", [0.7, 0.7, 0.7]),
    ("Indigo", [0.33, 0.0, 0.5]),
    ("Orange", [1.0, 0.5088, 0.0468]),
    ("Purple", [1.0, 0.0, 1.0]),
    ("Red", [1.0, 0.0, 0.0]),
    ("RedBright", [0.87, 0.26, 0.07]),
    ("Turquoise", [0.0, 1.0, 1.0]),
    ("White", [1.0, 1.0, 1.0]),
    ("Yellow", [1.0, 1.0, 0.0]),
    ("ZincYellow", [0.9725, 0.9529, 0.2078]),
];

#[derive(Debug, Clone, PartialEq)]
pub struct Colour {
    pub link: String,
    pub rgba: [f64; 4],
    /// Where it came from, for the notes.
    pub from: String,
}

/// Each link's colour; each block whose colour is not read, with why.
pub fn read(robot: &Element) -> (Vec<Colour>, Vec<String>) {
    let (mut colours, mut left_out) = (Vec::new(), Vec::new());
    for block in robot.children_named("gazebo") {
        let Some(link) = block.attr("reference") else {
            continue;
        };
        let diffuse = block
            .child("visual")
            .and_then(|v| v.child("material"))
            .and_then(|m| m.child("diffuse"));
        let found = match (diffuse, block.child("material")) {
            (Some(diffuse), _) => rgba(&diffuse.text).map(|rgba| (rgba, "diffuse".to_string())),
            (None, Some(script)) => scripted(script.text.trim()),
            (None, None) => continue,
        };
        match found {
            Ok((rgba, from)) => colours.push(Colour {
                link: link.to_string(),
                rgba,
                from,
            }),
            Err(why) => left_out.push(format!("colour of '{link}': {why}; the URDF's kept")),
        }
    }
    (colours, left_out)
}

fn scripted(name: &str) -> Result<([f64; 4], String), String> {
    let stock = name.strip_prefix("Gazebo/").unwrap_or(name);
    SCRIPTS
        .iter()
        .find(|(script, _)| *script == stock)
        .map(|&(_, [r, g, b])| ([r, g, b, 1.0], name.to_string()))
        .ok_or_else(|| format!("material '{name}' is not a stock Gazebo colour"))
}

/// SDF's "r g b" or "r g b a", each in 0..=1.
fn rgba(text: &str) -> Result<[f64; 4], String> {
    let values: Option<Vec<f64>> = text
        .split_whitespace()
        .map(|v| v.parse::<f64>().ok().filter(|v| (0.0..=1.0).contains(v)))
        .collect();
    match values.as_deref() {
        Some(&[r, g, b]) => Ok([r, g, b, 1.0]),
        Some(&[r, g, b, a]) => Ok([r, g, b, a]),
        _ => Err(format!(
            "<diffuse> '{}' is not 3 or 4 numbers in 0..1",
            text.trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::model::xml;

    #[test]
    fn stock_scripts_and_sdf_diffuse_colour_a_link_and_unknown_names_are_said() {
        let robot = xml::parse(
            "<robot name='r'><gazebo reference='wheel'><material>Gazebo/DarkGrey</material>\
             </gazebo><gazebo reference='body'><visual><material><diffuse>0.2 0.4 0.6 1\
             </diffuse></material></visual></gazebo><gazebo reference='logo'>\
             <material>Custom/Shiny</material></gazebo><gazebo reference='plain'>\
             <mu1>1</mu1></gazebo></robot>",
        )
        .unwrap();
        let (colours, left_out) = super::read(&robot);
        let found: Vec<_> = colours.iter().map(|c| (c.link.as_str(), c.rgba)).collect();
        assert_eq!(
            found,
            [
                ("wheel", [0.175, 0.175, 0.175, 1.0]),
                ("body", [0.2, 0.4, 0.6, 1.0])
            ]
        );
        assert_eq!(left_out.len(), 1);
        assert!(left_out[0].contains("'logo'") && left_out[0].contains("Custom/Shiny"));
    }
}
