//! The one conversion between config values (JSON, as the config serializes) and ROS
//! parameter values.
use crate::messages::rcl_interfaces::msg::{ParameterValue, parameter_type as kind};
use serde_json::Value;

/// A scalar, or an array of one scalar kind, as a parameter value; None for what a
/// parameter cannot hold (null, an empty or mixed array, an object).
pub fn from_json(value: &Value) -> Option<ParameterValue> {
    let mut out = ParameterValue::default();
    match value {
        Value::Bool(b) => (out.type_, out.bool_value) = (kind::BOOL, *b),
        Value::Number(n) if n.is_i64() => {
            (out.type_, out.integer_value) = (kind::INTEGER, n.as_i64()?)
        }
        Value::Number(n) => (out.type_, out.double_value) = (kind::DOUBLE, n.as_f64()?),
        Value::String(s) => (out.type_, out.string_value) = (kind::STRING, s.clone()),
        Value::Array(items) if !items.is_empty() => {
            if let Some(v) = items.iter().map(Value::as_bool).collect::<Option<Vec<_>>>() {
                (out.type_, out.bool_array_value) = (kind::BOOL_ARRAY, v);
            } else if let Some(v) = items.iter().map(Value::as_i64).collect::<Option<Vec<_>>>() {
                (out.type_, out.integer_array_value) = (kind::INTEGER_ARRAY, v);
            } else if let Some(v) = items.iter().map(Value::as_f64).collect::<Option<Vec<_>>>() {
                (out.type_, out.double_array_value) = (kind::DOUBLE_ARRAY, v);
            } else if let Some(v) = items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
            {
                (out.type_, out.string_array_value) = (kind::STRING_ARRAY, v);
            } else {
                return None;
            }
        }
        _ => return None,
    }
    Some(out)
}

pub fn double(value: f64) -> ParameterValue {
    ParameterValue {
        type_: kind::DOUBLE,
        double_value: value,
        ..Default::default()
    }
}

pub fn string(value: &str) -> ParameterValue {
    ParameterValue {
        type_: kind::STRING,
        string_value: value.to_string(),
        ..Default::default()
    }
}

pub fn boolean(value: bool) -> ParameterValue {
    ParameterValue {
        type_: kind::BOOL,
        bool_value: value,
        ..Default::default()
    }
}

/// A number given for a double parameter: a double, or an integer (`ros2 param set` sends
/// `2` as an integer).
pub fn as_number(value: &ParameterValue) -> Option<f64> {
    match value.type_ {
        kind::DOUBLE => Some(value.double_value),
        kind::INTEGER => Some(value.integer_value as f64),
        _ => None,
    }
}

/// The name of a parameter type, for refusals.
pub fn type_name(type_: u8) -> &'static str {
    match type_ {
        kind::NOT_SET => "not set",
        kind::BOOL => "bool",
        kind::INTEGER => "integer",
        kind::DOUBLE => "double",
        kind::STRING => "string",
        kind::BYTE_ARRAY => "byte array",
        kind::BOOL_ARRAY => "bool array",
        kind::INTEGER_ARRAY => "integer array",
        kind::DOUBLE_ARRAY => "double array",
        kind::STRING_ARRAY => "string array",
        _ => "unknown type",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_values_become_typed_parameters() {
        assert_eq!(from_json(&json!(true)).unwrap().type_, kind::BOOL);
        assert_eq!(from_json(&json!(3)).unwrap().integer_value, 3);
        assert_eq!(from_json(&json!(0.5)).unwrap().double_value, 0.5);
        assert_eq!(
            from_json(&json!([1, 2])).unwrap().integer_array_value,
            [1, 2]
        );
        assert_eq!(
            from_json(&json!([1, 2.5])).unwrap().double_array_value,
            [1.0, 2.5]
        );
        assert_eq!(from_json(&json!(["a"])).unwrap().string_array_value, ["a"]);
        for nothing in [json!(null), json!([]), json!([1, "a"]), json!({"a": 1})] {
            assert!(from_json(&nothing).is_none(), "{nothing}");
        }
        assert_eq!(as_number(&from_json(&json!(2)).unwrap()), Some(2.0));
        assert_eq!(as_number(&string("2")), None);
    }
}
