//! `world.classes`: the semantic classes that segmentation cameras label pixels with (the
//! label Gazebo's label system gives a model or a visual). A class names its members by
//! their MuJoCo names: whole robots, bodies (their geoms) or single geoms. A geom no class
//! names takes the class its MJCF `user` data starts with, when that is a whole number from
//! 1 to 255; any other is unlabeled (class 0, the background). A class whose `id` is such a
//! label names it (members or not); a class without an `id` takes one that neither another
//! class nor the model's user data takes.
use serde::Deserialize;

/// The most classes a world has: labels are one byte, and 0 is the background.
pub const MAX_CLASS_ID: u16 = 255;

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SemanticClass {
    pub name: String,
    /// The label, 1 to 255; default: the lowest one no other class takes.
    #[serde(default)]
    pub id: Option<u16>,
    /// Robots, by their names in the config.
    #[serde(default)]
    pub robots: Vec<String>,
    /// Bodies and geoms, by their names in the world's model or by a robot's own names for
    /// them (the first robot that has one).
    #[serde(default)]
    pub bodies: Vec<String>,
    #[serde(default)]
    pub geoms: Vec<String>,
}

/// Why `classes` cannot be used: the field under `world.classes` and the message.
pub fn problem(classes: &[SemanticClass]) -> Option<(String, String)> {
    for (k, class) in classes.iter().enumerate() {
        if class.name.is_empty() || class.name == "background" {
            let message = "needs a name other than 'background' (label 0's)".into();
            return Some((format!("[{k}].name"), message));
        }
        let members = class.robots.len() + class.bodies.len() + class.geoms.len();
        if members == 0 && class.id.is_none() {
            let message = "names no robots, bodies or geoms (or, with an id, an MJCF label)".into();
            return Some((format!("[{k}]"), message));
        }
        if let Some(id) = class.id
            && !(1..=MAX_CLASS_ID).contains(&id)
        {
            let message = format!("must be 1 to {MAX_CLASS_ID} (0 is the background), got {id}");
            return Some((format!("[{k}].id"), message));
        }
        let earlier = &classes[..k];
        if earlier.iter().any(|c| c.name == class.name) {
            return Some((
                format!("[{k}].name"),
                format!("'{}' is named twice", class.name),
            ));
        }
        if class.id.is_some() && earlier.iter().any(|c| c.id == class.id) {
            let message = format!("{} is taken by an earlier class", class.id.unwrap_or(0));
            return Some((format!("[{k}].id"), message));
        }
    }
    if classes.len() > MAX_CLASS_ID as usize {
        let message = format!("at most {MAX_CLASS_ID} classes, got {}", classes.len());
        return Some((String::new(), message));
    }
    None
}

/// Each class's label: its `id`, else the lowest one free of the other classes' and of
/// `reserved` (the model's user-data labels), in the order given.
pub fn labels(classes: &[SemanticClass], reserved: &[u8]) -> Vec<u8> {
    let mut taken: Vec<u16> = classes.iter().filter_map(|c| c.id).collect();
    taken.extend(reserved.iter().map(|&l| l as u16));
    classes
        .iter()
        .map(|class| {
            let id = class.id.unwrap_or_else(|| {
                let free = (1..=MAX_CLASS_ID)
                    .find(|id| !taken.contains(id))
                    .unwrap_or(0);
                taken.push(free);
                free
            });
            id as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, id: Option<u16>) -> SemanticClass {
        SemanticClass {
            name: name.into(),
            id,
            robots: Vec::new(),
            bodies: Vec::new(),
            geoms: Vec::new(),
        }
    }

    #[test]
    fn classes_without_an_id_take_the_lowest_free_one() {
        let mut classes = [class("a", None), class("b", Some(1)), class("c", None)];
        for class in classes.iter_mut() {
            class.geoms.push("g".into());
        }
        assert_eq!(labels(&classes, &[]), [2, 1, 3]);
        // The model's user data labels some geoms 2: the classes go round it.
        assert_eq!(labels(&classes, &[2]), [3, 1, 4]);
        assert!(problem(&classes).is_none());
    }

    #[test]
    fn bad_classes_are_named() {
        let (field, _) = problem(&[class("background", Some(3))]).unwrap();
        assert_eq!(field, "[0].name");
        let (field, message) = problem(&[class("a", None)]).unwrap();
        assert_eq!(field, "[0]");
        assert!(message.contains("names no"), "{message}");
        let (field, message) = problem(&[class("a", Some(0))]).unwrap();
        assert_eq!(field, "[0].id");
        assert!(message.contains("0 is the background"), "{message}");
        let (field, _) = problem(&[class("a", Some(3)), class("b", Some(3))]).unwrap();
        assert_eq!(field, "[1].id");
        let (field, _) = problem(&[class("a", Some(1)), class("a", Some(2))]).unwrap();
        assert_eq!(field, "[1].name");
    }
}
