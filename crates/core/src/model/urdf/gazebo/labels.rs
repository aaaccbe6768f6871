//! The plugins of `<gazebo reference="LINK">` blocks: gz-sim's Label system
//! (`gz-sim-label-system`, `<label>N</label>`, directly in the block or in its `<visual>`)
//! gives the link's geoms class N in every segmentation camera and bounding-box camera, as
//! the MJCF `user` label; any other plugin there is named as left out.
use super::values::number;
use crate::model::xml::Element;

/// A link's segmentation class.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub link: String,
    pub class: u8,
}

/// The labels of the robot's links; each other plugin of a reference block, with why not.
pub fn read(robot: &Element) -> (Vec<Label>, Vec<String>) {
    let (mut labels, mut left_out) = (Vec::new(), Vec::new());
    for block in robot.children_named("gazebo") {
        let Some(link) = block.attr("reference") else {
            continue;
        };
        let visuals = block.children_named("visual");
        let plugins = block
            .children_named("plugin")
            .chain(visuals.flat_map(|v| v.children_named("plugin")));
        for plugin in plugins {
            let file = plugin.attr("filename").unwrap_or("");
            let at = format!("{} on '{link}'", super::plugins::place(plugin));
            if !file.to_ascii_lowercase().contains("label") {
                left_out.push(format!("{at}: not read"));
                continue;
            }
            match class(plugin) {
                Ok(class) => labels.push(Label {
                    link: link.to_string(),
                    class,
                }),
                Err(why) => left_out.push(format!("{at}: {why}")),
            }
        }
    }
    (labels, left_out)
}

fn class(plugin: &Element) -> Result<u8, String> {
    let label = number(Some(plugin), "label", f64::NAN)?;
    if label.fract() == 0.0 && (1.0..=255.0).contains(&label) {
        Ok(label as u8)
    } else {
        Err(format!(
            "<label> {label} is not a whole number from 1 to 255 (0 is the background)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::model::xml;

    #[test]
    fn a_label_plugin_gives_its_link_a_class_and_other_plugins_are_named() {
        let robot = xml::parse(
            "<robot name='r'><gazebo reference='crate'><plugin filename='gz-sim-label-system' \
             name='gz::sim::systems::Label'><label>10</label></plugin></gazebo>\
             <gazebo reference='cone'><visual><plugin filename='ignition-gazebo-label-system' \
             name='l'><label>7</label></plugin></visual></gazebo>\
             <gazebo reference='rock'><plugin filename='gz-sim-label-system' name='l'>\
             <label>0</label></plugin><plugin filename='libmine.so' name='m'/></gazebo></robot>",
        )
        .unwrap();
        let (labels, left_out) = super::read(&robot);
        let found: Vec<_> = labels.iter().map(|l| (l.link.as_str(), l.class)).collect();
        assert_eq!(found, [("crate", 10), ("cone", 7)]);
        assert_eq!(left_out.len(), 2, "{left_out:?}");
        assert!(left_out[0].contains("<label> 0 is not"), "{left_out:?}");
        assert!(
            left_out[1].starts_with("plugin 'm' (libmine.so"),
            "{left_out:?}"
        );
    }
}
