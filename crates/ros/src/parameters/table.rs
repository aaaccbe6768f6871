//! The node's declared parameters: every config field as the node loaded it, read-only
//! (a change needs a restart), and the live ones, which a set applies at once: `sim.speed`,
//! `sim.mode`, `ros.rates.*`, each robot's `control.gains.*`, `ros.wrench_duration`, and the
//! standard `use_sim_time`.
use super::value;
use crate::config::{Config, SimMode};
use crate::control::PdGains;
use crate::messages::rcl_interfaces::msg::{
    ListParametersResult, ParameterDescriptor, ParameterValue, parameter_type as kind,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// A parameter that takes effect when set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Live {
    Speed,
    Mode,
    /// A field of `ros.rates`.
    Rate(&'static str),
    Gain {
        robot: usize,
        field: GainField,
    },
    WrenchDuration,
    /// Accepted; every stamp of the node is sim time whatever it says.
    UseSimTime,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GainField {
    Kp,
    Kv,
    TorqueLimit,
}

/// What an accepted set does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Change {
    Speed(f64),
    Mode(SimMode),
    Rate(&'static str, f64),
    Gains { robot: usize, gains: PdGains },
    WrenchDuration(f64),
    Nothing,
}

pub struct Declared {
    pub value: ParameterValue,
    pub descriptor: ParameterDescriptor,
    pub live: Option<Live>,
}

/// Why a set was refused.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("parameter '{0}' is not declared")]
    Undeclared(String),
    #[error(
        "parameter '{0}' is read-only: it takes effect at start (give it with -p {0}:=VALUE or in a params file)"
    )]
    ReadOnly(String),
    #[error("parameter '{name}' takes a {expected}, not a {given}")]
    Type {
        name: String,
        expected: &'static str,
        given: &'static str,
    },
    #[error("parameter '{name}': {value} is not a finite number")]
    NotFinite { name: String, value: f64 },
    #[error("parameter '{name}': {value} is out of range ({rule})")]
    Range {
        name: String,
        value: f64,
        rule: &'static str,
    },
    #[error("parameter '{name}': '{given}' is not one of realtime, fast, paused")]
    Mode { name: String, given: String },
    #[error("parameter 'use_sim_time': the node's clock is the simulation's; it stays true")]
    WallTime,
}

/// The config could not be turned into parameters.
#[derive(Debug, thiserror::Error)]
#[error("the config as parameters: {0}")]
pub struct TableError(#[from] serde_json::Error);

pub struct Table {
    entries: BTreeMap<String, Declared>,
}

/// A name segment a parameter name may hold; maps with other keys (regular expressions,
/// package names with dashes) become one string parameter.
fn plain_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Every leaf of the config as (dotted name, value).
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, ParameterValue)>) {
    let name = |key: &str| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    match value {
        Value::Object(map) if map.keys().all(|k| plain_key(k)) => {
            for (key, item) in map {
                flatten(&name(key), item, out);
            }
        }
        Value::Object(map) if !map.is_empty() => {
            out.push((prefix.to_string(), value::string(&value.to_string())));
        }
        Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
            for (index, item) in items.iter().enumerate() {
                flatten(&name(&index.to_string()), item, out);
            }
        }
        _ => {
            if let Some(parameter) = value::from_json(value) {
                out.push((prefix.to_string(), parameter));
            }
        }
    }
}

fn live_of(name: &str) -> Option<(Live, &'static str, &'static str)> {
    const RATE: &str = "Hz: 0 (off) or 0.001 to 100000";
    const GAIN: &str = ">= 0";
    let live = match name {
        "sim.speed" => (
            Live::Speed,
            "real-time factor target in realtime mode",
            "0.001 to 1000",
        ),
        "sim.mode" => (
            Live::Mode,
            "what the simulation does",
            "realtime | fast | paused",
        ),
        "ros.wrench_duration" => (
            Live::WrenchDuration,
            "seconds of sim time one ~/wrench message acts",
            "> 0",
        ),
        "use_sim_time" => (
            Live::UseSimTime,
            "standard; the node stamps everything with sim time",
            "true only",
        ),
        _ => {
            if let Some(field) = name.strip_prefix("ros.rates.") {
                let field = crate::config::RosRates::default()
                    .fields()
                    .into_iter()
                    .map(|(f, _)| f)
                    .find(|f| *f == field)?;
                return Some((Live::Rate(field), "publisher rate", RATE));
            }
            let rest = name.strip_prefix("robots.")?;
            let (robot, field) = rest.split_once(".control.gains.")?;
            let robot = robot.parse().ok()?;
            let field = match field {
                "kp" => GainField::Kp,
                "kv" => GainField::Kv,
                "torque_limit" => GainField::TorqueLimit,
                _ => return None,
            };
            (
                Live::Gain { robot, field },
                "PD gain of every actuator of the robot",
                GAIN,
            )
        }
    };
    Some(live)
}

impl Table {
    /// The parameters of `config`; `timestep` is the model's, which `world.timestep` shows
    /// when the config leaves it to the model.
    pub fn new(config: &Config, timestep: f64) -> Result<Self, TableError> {
        let mut leaves = Vec::new();
        let mut tree = serde_json::to_value(config)?;
        if let Some(world) = tree.get_mut("world")
            && world.get("timestep").is_none_or(Value::is_null)
        {
            world["timestep"] = Value::from(timestep);
        }
        flatten("", &tree, &mut leaves);
        leaves.push(("config".into(), value::string(&config.origin)));
        leaves.push(("use_sim_time".into(), value::boolean(true)));
        let entries = leaves
            .into_iter()
            .map(|(name, value)| {
                let live = live_of(&name);
                let (description, constraints) = match &live {
                    Some((_, description, constraints)) => (*description, *constraints),
                    None if name == "config" => ("the robot config the node loaded", ""),
                    None => ("config field; set at start", ""),
                };
                let descriptor = ParameterDescriptor {
                    name: name.clone(),
                    type_: value.type_,
                    description: description.into(),
                    additional_constraints: constraints.into(),
                    read_only: live.is_none(),
                    ..Default::default()
                };
                let declared = Declared {
                    value,
                    descriptor,
                    live: live.map(|(live, _, _)| live),
                };
                (name, declared)
            })
            .collect();
        Ok(Self { entries })
    }

    /// The table of a world that `old` (this table's config) changed into: live values that
    /// were set carry over, a robot's under its new index.
    pub fn follow(&self, old: &Config, new: &Config, timestep: f64) -> Result<Self, TableError> {
        let mut table = Self::new(new, timestep)?;
        if old.origin != new.origin {
            // Another world was loaded: nothing set before applies to it.
            return Ok(table);
        }
        for (name, declared) in table.entries.iter_mut() {
            if declared.live.is_none() {
                continue;
            }
            let source = match name.strip_prefix("robots.").and_then(|r| r.split_once('.')) {
                Some((index, rest)) => {
                    let robot = index.parse::<usize>().ok().and_then(|i| new.robots.get(i));
                    let before =
                        robot.and_then(|r| old.robots.iter().position(|o| o.name == r.name));
                    match before {
                        Some(j) => format!("robots.{j}.{rest}"),
                        None => continue,
                    }
                }
                None => name.clone(),
            };
            if let Some(kept) = self.entries.get(&source) {
                declared.value = kept.value.clone();
            }
        }
        Ok(table)
    }

    pub fn get(&self, name: &str) -> Option<&Declared> {
        self.entries.get(name)
    }

    /// The names under `prefixes` (all when empty), at most `depth` levels below them
    /// (0: any depth), with the prefixes the names sit under, as rclcpp lists them.
    pub fn list(&self, prefixes: &[String], depth: u64) -> ListParametersResult {
        let mut result = ListParametersResult::default();
        for name in self.entries.keys() {
            let below = |prefix: &str| {
                let rest = if prefix.is_empty() || name == prefix {
                    Some(name.as_str().get(prefix.len()..).unwrap_or_default())
                } else {
                    name.strip_prefix(prefix)
                        .and_then(|rest| rest.strip_prefix('.'))
                };
                rest.is_some_and(|rest| depth == 0 || (rest.matches('.').count() as u64) < depth)
            };
            let listed = if prefixes.is_empty() {
                below("")
            } else {
                prefixes.iter().any(|p| below(p))
            };
            if !listed {
                continue;
            }
            result.names.push(name.clone());
            if let Some((prefix, _)) = name.rsplit_once('.')
                && !result.prefixes.iter().any(|p| p == prefix)
            {
                result.prefixes.push(prefix.to_string());
            }
        }
        result
    }

    /// The change that setting `name` to `value` makes, and the value to keep; nothing is
    /// kept yet (`store` does, once the change took).
    pub fn check(
        &self,
        name: &str,
        value: &ParameterValue,
    ) -> Result<(Change, ParameterValue), Refusal> {
        let declared = self
            .entries
            .get(name)
            .ok_or_else(|| Refusal::Undeclared(name.into()))?;
        let live = declared
            .live
            .ok_or_else(|| Refusal::ReadOnly(name.into()))?;
        let type_error = || Refusal::Type {
            name: name.into(),
            expected: value::type_name(declared.value.type_),
            given: value::type_name(value.type_),
        };
        let number = |rule: &'static str, ok: fn(f64) -> bool| {
            let number = value::as_number(value).ok_or_else(type_error)?;
            if !number.is_finite() {
                return Err(Refusal::NotFinite {
                    name: name.into(),
                    value: number,
                });
            }
            if !ok(number) {
                return Err(Refusal::Range {
                    name: name.into(),
                    value: number,
                    rule,
                });
            }
            Ok(number)
        };
        let change = match live {
            Live::Speed => Change::Speed(number("0.001 to 1000", |v| {
                crate::config::SPEED_RANGE.contains(&v)
            })?),
            Live::WrenchDuration => Change::WrenchDuration(number("> 0", |v| v > 0.0)?),
            Live::Rate(field) => Change::Rate(
                field,
                number("0, or 0.001 to 100000", crate::config::RosRates::valid)?,
            ),
            Live::Gain { robot, field } => {
                let given = number(">= 0", |v| v >= 0.0)?;
                let current = |f: &str| {
                    self.entries
                        .get(&format!("robots.{robot}.control.gains.{f}"))
                        .and_then(|d| value::as_number(&d.value))
                        .unwrap_or_default()
                };
                let mut gains = PdGains {
                    kp: current("kp"),
                    kv: current("kv"),
                    torque_limit: current("torque_limit"),
                };
                match field {
                    GainField::Kp => gains.kp = given,
                    GainField::Kv => gains.kv = given,
                    GainField::TorqueLimit => gains.torque_limit = given,
                }
                Change::Gains { robot, gains }
            }
            Live::Mode => {
                if value.type_ != kind::STRING {
                    return Err(type_error());
                }
                let mode = serde_json::from_value(Value::String(value.string_value.clone()))
                    .map_err(|_| Refusal::Mode {
                        name: name.into(),
                        given: value.string_value.clone(),
                    })?;
                Change::Mode(mode)
            }
            Live::UseSimTime if value.type_ == kind::BOOL && value.bool_value => Change::Nothing,
            Live::UseSimTime if value.type_ == kind::BOOL => return Err(Refusal::WallTime),
            Live::UseSimTime => return Err(type_error()),
        };
        // Numbers are kept as the declared type (an integer given for a double).
        let kept = match declared.value.type_ {
            kind::DOUBLE => value::double(value::as_number(value).unwrap_or_default()),
            _ => value.clone(),
        };
        Ok((change, kept))
    }

    pub fn store(&mut self, name: &str, value: ParameterValue) {
        if let Some(declared) = self.entries.get_mut(name) {
            declared.value = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let config = Config::embedded_default(&[]).expect("the embedded default config");
        Table::new(&config, 0.002).unwrap()
    }

    #[test]
    fn every_config_field_is_declared_and_only_the_live_ones_can_change() {
        let table = table();
        let names = table.list(&[], 0).names;
        for name in [
            "sim.speed",
            "sim.mode",
            "world.timestep",
            "ros.rates.clock",
            "robots.0.name",
        ] {
            assert!(
                names.iter().any(|n| n == name),
                "{name} missing from {names:?}"
            );
        }
        assert!(
            table
                .get("sim.speed")
                .unwrap()
                .descriptor
                .read_only
                .eq(&false)
        );
        assert!(table.get("sim.substeps").unwrap().descriptor.read_only);
        assert_eq!(
            table
                .check("sim.substeps", &value::double(2.0))
                .unwrap_err(),
            Refusal::ReadOnly("sim.substeps".into())
        );
        assert!(matches!(
            table.check("nope", &value::double(1.0)),
            Err(Refusal::Undeclared(_))
        ));
    }

    #[test]
    fn live_sets_are_checked_and_integers_stand_for_doubles() {
        let table = table();
        let two = ParameterValue {
            type_: kind::INTEGER,
            integer_value: 2,
            ..Default::default()
        };
        let (change, kept) = table.check("sim.speed", &two).unwrap();
        assert_eq!(change, Change::Speed(2.0));
        assert_eq!((kept.type_, kept.double_value), (kind::DOUBLE, 2.0));
        assert!(matches!(
            table.check("sim.speed", &value::double(f64::NAN)),
            Err(Refusal::NotFinite { .. })
        ));
        assert!(matches!(
            table.check("sim.speed", &value::double(0.0)),
            Err(Refusal::Range { .. })
        ));
        assert!(matches!(
            table.check("sim.speed", &value::string("fast")),
            Err(Refusal::Type { .. })
        ));
        assert_eq!(
            table.check("sim.mode", &value::string("fast")).unwrap().0,
            Change::Mode(SimMode::Fast)
        );
        assert!(matches!(
            table.check("sim.mode", &value::string("sideways")),
            Err(Refusal::Mode { .. })
        ));
        assert_eq!(
            table
                .check("ros.rates.joint_states", &value::double(25.0))
                .unwrap()
                .0,
            Change::Rate("joint_states", 25.0)
        );
        let Change::Gains { robot: 0, gains } = table
            .check("robots.0.control.gains.kp", &value::double(50.0))
            .unwrap()
            .0
        else {
            panic!("a gain set changes the robot's gains")
        };
        assert_eq!((gains.kp, gains.kv, gains.torque_limit), (50.0, 5.0, 200.0));
    }

    #[test]
    fn listing_follows_prefixes_and_depth() {
        let table = table();
        let rates = table.list(&["ros.rates".into()], 1);
        assert!(rates.names.iter().all(|n| n.starts_with("ros.rates.")));
        assert!(rates.names.iter().any(|n| n == "ros.rates.tf"));
        assert_eq!(rates.prefixes, ["ros.rates"]);
        let top = table.list(&[], 1);
        assert!(
            top.names.iter().all(|n| !n.contains('.')),
            "{:?}",
            top.names
        );
        assert!(top.names.iter().any(|n| n == "use_sim_time"));
    }
}
