//! The node sections of a ROS 2 params file, as rcl's parser reads them: keys name
//! namespaces and nodes, nested or joined with `/`, down to a `ros__parameters` map. So
//! `/**/controller_manager: {ros__parameters: ..}` and
//! `/**: {controller_manager: {ros__parameters: ..}}` are the same section, and a real
//! robot's file may put several nodes under one wildcard.
use serde_json::{Map, Value};

const PARAMETERS: &str = "ros__parameters";

/// A key on the way to a node that holds neither `ros__parameters` nor further names.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: needs ros__parameters")]
pub struct NoParameters {
    /// The key as written, its parents joined with `/` (`/**/controller_manager`).
    pub key: String,
}

/// One node's section: its full name pattern (`/**/controller_manager`) and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSection<'a> {
    pub key: String,
    pub params: &'a Map<String, Value>,
}

/// Every node section of a params file's top-level map, in the file's order.
pub fn node_sections(nodes: &Map<String, Value>) -> Result<Vec<NodeSection<'_>>, NoParameters> {
    let mut sections = Vec::new();
    for (key, value) in nodes {
        collect(key.clone(), value, &mut sections)?;
    }
    Ok(sections)
}

fn collect<'a>(
    key: String,
    value: &'a Value,
    into: &mut Vec<NodeSection<'a>>,
) -> Result<(), NoParameters> {
    let map = match value {
        Value::Object(map) if !map.is_empty() => map,
        _ => return Err(NoParameters { key }),
    };
    for (name, inner) in map {
        match (name.as_str(), inner) {
            (PARAMETERS, Value::Object(params)) => into.push(NodeSection {
                key: key.clone(),
                params,
            }),
            // A deeper namespace or node name.
            (_, Value::Object(_)) => collect(join(&key, name), inner, into)?,
            // A parameter where a node's name should be, or parameters that are no map.
            _ => return Err(NoParameters { key }),
        }
    }
    Ok(())
}

fn join(parent: &str, name: &str) -> String {
    format!(
        "{}/{}",
        parent.trim_end_matches('/'),
        name.trim_start_matches('/')
    )
}

/// Whether a section `key` (`name`, `/name`, `/ns/name`, `/**`, `/**/name`) applies to node
/// `node`.
pub fn applies_to(key: &str, node: &str) -> bool {
    let key = key.trim_start_matches('/');
    key == "**" || key == node || key.ends_with(&format!("/{node}"))
}

/// Whether a section `key` is the every-node wildcard `/**`.
pub fn is_every_node(key: &str) -> bool {
    key.trim_start_matches('/') == "**"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(text: &str) -> Result<Vec<(String, Vec<String>)>, NoParameters> {
        let tree: Value = serde_saphyr::from_str(text).unwrap();
        let nodes = tree.as_object().unwrap();
        Ok(node_sections(nodes)?
            .into_iter()
            .map(|s| (s.key, s.params.keys().cloned().collect()))
            .collect())
    }

    #[test]
    fn nested_names_join_down_to_their_parameters() {
        let text = "\
/**:
  controller_manager:
    ros__parameters: {update_rate: 20}
  diffdrive_controller:
    ros__parameters: {wheel_radius: 0.1}
/**/imu_broadcaster:
  ros__parameters: {sensor_name: imu}
robot1:
  /arm:
    ros__parameters: {x: 1}
";
        assert_eq!(
            sections(text).unwrap(),
            [
                ("/**/controller_manager".into(), vec!["update_rate".into()]),
                (
                    "/**/diffdrive_controller".into(),
                    vec!["wheel_radius".into()]
                ),
                ("/**/imu_broadcaster".into(), vec!["sensor_name".into()]),
                ("robot1/arm".into(), vec!["x".into()]),
            ]
        );
        assert!(applies_to("/**/controller_manager", "controller_manager"));
        assert!(!applies_to(
            "/**/diffdrive_controller",
            "controller_manager"
        ));
    }

    #[test]
    fn a_name_without_parameters_is_named() {
        assert_eq!(
            sections("/**:\n  controller_manager:\n    update_rate: 20\n"),
            Err(NoParameters {
                key: "/**/controller_manager".into()
            })
        );
        assert_eq!(
            sections("node: {}\n"),
            Err(NoParameters { key: "node".into() })
        );
    }
}
