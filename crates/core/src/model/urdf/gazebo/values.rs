//! What every kind of `<gazebo>` sensor reads alike: numbers, its `<pose>`, `<noise>`, the
//! Classic `libgazebo_ros_*` plugin inside it, and the topic and frame its users read.
use crate::config::{NoiseConfig, NoiseType};
use crate::model::xml::Element;

/// gz-sim's word for "no topic given": the sensor publishes on a scoped gz topic that no
/// ROS node reads without a bridge entry.
const DEFAULT_TOPIC: &str = "__default_topic__";

/// A number child's value; `default` when absent; an error naming it when not a number.
pub fn number(parent: Option<&Element>, name: &str, default: f64) -> Result<f64, String> {
    let Some(text) = parent.and_then(|p| p.child(name)).map(|c| c.text.trim()) else {
        return Ok(default);
    };
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("<{name}> '{text}' is not a finite number"))
}

/// A child's text, trimmed; none when absent or empty.
pub fn text(parent: Option<&Element>, name: &str) -> Option<String> {
    parent
        .and_then(|p| p.child(name))
        .map(|c| c.text.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// `<pose>x y z roll pitch yaw</pose>` on the link (none: the link's frame).
pub fn pose(sensor: &Element) -> Result<([f64; 3], [f64; 3]), String> {
    let Some(text) = sensor.child("pose").map(|p| p.text.trim()) else {
        return Ok(([0.0; 3], [0.0; 3]));
    };
    let values: Option<Vec<f64>> = text
        .split_whitespace()
        .map(|v| v.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect();
    match values.as_deref() {
        Some(&[x, y, z, roll, pitch, yaw]) => Ok(([x, y, z], [roll, pitch, yaw])),
        _ => Err(format!("<pose> '{text}' is not six finite numbers")),
    }
}

/// `update_rate` in Hz; 0 ("as fast as it can" in Gazebo) and none are `default`.
pub fn rate(sensor: &Element, default: f64) -> Result<f64, String> {
    let rate = number(Some(sensor), "update_rate", 0.0)?;
    Ok(if rate > 0.0 { rate } else { default })
}

/// `<noise>` (gz-sim writes its type as an attribute, SDF's `<ray>` and Classic as a child).
pub fn noise(element: &Element) -> Result<NoiseConfig, String> {
    let written = element
        .attr("type")
        .map(str::trim)
        .or_else(|| element.child("type").map(|t| t.text.trim()));
    let kind = match written {
        Some("gaussian") | None => NoiseType::Gaussian,
        Some("gaussian_quantized") => NoiseType::GaussianQuantized,
        Some("none") => NoiseType::None,
        Some(other) => return Err(format!("<noise> type '{other}' is not known")),
    };
    let at = Some(element);
    Ok(NoiseConfig {
        kind,
        mean: number(at, "mean", 0.0)?,
        stddev: number(at, "stddev", 0.0)?,
        bias_mean: number(at, "bias_mean", 0.0)?,
        bias_stddev: number(at, "bias_stddev", 0.0)?,
        dynamic_bias_stddev: number(at, "dynamic_bias_stddev", 0.0)?,
        dynamic_bias_correlation_time: number(at, "dynamic_bias_correlation_time", 0.0)?,
        precision: number(at, "precision", 0.0)?,
    })
}

/// A Classic `libgazebo_ros_*` plugin inside the sensor.
pub fn ros_plugin(sensor: &Element) -> Option<&Element> {
    sensor
        .children_named("plugin")
        .find(|p| p.attr("filename").is_some_and(|f| f.contains("gazebo_ros")))
}

/// A Classic sensor plugin's topic naming: its `<ros><namespace>` and `<remapping>`s.
pub struct ClassicTopics<'a> {
    plugin: &'a Element,
    namespace: Option<String>,
}

impl<'a> ClassicTopics<'a> {
    /// The naming of the Classic plugin inside `sensor`, if it has one.
    pub fn of(sensor: &'a Element) -> Option<Self> {
        ros_plugin(sensor).map(Self::of_plugin)
    }

    /// The naming of `plugin` (a sensor's, or a model plugin such as a drive).
    pub fn of_plugin(plugin: &'a Element) -> Self {
        let namespace = text(plugin.child("ros"), "namespace")
            .map(|ns| ns.trim_end_matches('/').to_string())
            .filter(|ns| !ns.is_empty());
        Self { plugin, namespace }
    }

    /// The plugin's name (its node's name).
    pub fn plugin_name(&self) -> Option<&str> {
        self.plugin.attr("name")
    }

    /// The plugin's own parameter `name`.
    pub fn param(&self, name: &str) -> Option<String> {
        text(Some(self.plugin), name)
    }

    /// Where topic `relative` (as the plugin names it, `~/out` or `camera/image_raw`) goes: a
    /// remapping of it, else itself, under the namespace unless absolute.
    pub fn resolve(&self, relative: &str) -> String {
        let topic = self.remapping(relative).unwrap_or_else(|| bare(relative));
        self.under_namespace(topic)
    }

    /// What a `<remapping>` of topic `relative` makes it.
    fn remapping(&self, relative: &str) -> Option<String> {
        self.plugin
            .child("ros")
            .into_iter()
            .flat_map(|r| r.children_named("remapping"))
            .find_map(|r| {
                let (from, to) = r.text.trim().split_once(":=")?;
                (bare(from) == bare(relative)).then(|| to.trim().to_string())
            })
    }

    fn under_namespace(&self, topic: String) -> String {
        match &self.namespace {
            Some(ns) if !topic.starts_with('/') => format!("{ns}/{topic}"),
            _ => topic,
        }
    }
}

/// A topic name without its leading `~/` or `/`, as remappings are matched.
fn bare(name: &str) -> String {
    name.trim_start_matches("~/")
        .trim_start_matches('/')
        .to_string()
}

/// gz-sim's `<topic>` (as ros_gz_bridge carries it under the same name); none when absent
/// or gz's "default topic".
pub fn gz_topic(sensor: &Element) -> Option<String> {
    text(Some(sensor), "topic").filter(|t| t != DEFAULT_TOPIC)
}

/// The topic of a sensor with one output: a Classic plugin's `~/out` (remapped, under its
/// namespace; unremapped, the plugin node's `out`), else gz-sim's `<topic>`, else `fallback`.
pub fn single_topic(sensor: &Element, fallback: String) -> String {
    if let Some(classic) = ClassicTopics::of(sensor) {
        let node_out = || format!("{}/out", classic.plugin_name().unwrap_or("plugin"));
        let out = classic.remapping("~/out").unwrap_or_else(node_out);
        return classic.under_namespace(out);
    }
    gz_topic(sensor).unwrap_or(fallback)
}

/// The frame its messages name: gz-sim's `<gz_frame_id>` (or Fortress's
/// `<ignition_frame_id>`), a Classic plugin's `<frame_name>`, else `more` (a camera's
/// `<optical_frame_id>`), else the link's, as Gazebo names them.
pub fn frame(sensor: &Element, link: &str, more: Option<String>) -> String {
    text(Some(sensor), "gz_frame_id")
        .or_else(|| text(Some(sensor), "ignition_frame_id"))
        .or_else(|| ros_plugin(sensor).and_then(|p| text(Some(p), "frame_name")))
        .or(more)
        .unwrap_or_else(|| link.to_string())
}
