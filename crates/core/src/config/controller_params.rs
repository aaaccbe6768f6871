//! Reading one controller's parameters (its `ros__parameters` in a controllers file): a
//! number, a flag, a list of names, each refused with its dotted name when it is not one.
use serde_json::{Map, Value};

/// Parameter `name` of `params`, which messages call `{path}{name}`: a finite number, if
/// given.
pub fn number_in(
    params: &Map<String, Value>,
    path: &str,
    name: &str,
) -> Result<Option<f64>, String> {
    match params.get(name) {
        None => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| format!("'{path}{name}' must be a number, got {v}")),
    }
}

/// Parameter `name`: a finite number, if given.
pub fn number(params: &Map<String, Value>, name: &str) -> Result<Option<f64>, String> {
    number_in(params, "", name)
}

/// Parameter `name`: true or false, `default` if not given.
pub fn flag(params: &Map<String, Value>, name: &str, default: bool) -> Result<bool, String> {
    match params.get(name) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(format!("'{name}' must be true or false, got {v}")),
    }
}

/// Parameter `name`: a list of names, if given.
pub fn names(params: &Map<String, Value>, name: &str) -> Result<Option<Vec<String>>, String> {
    let Some(value) = params.get(name) else {
        return Ok(None);
    };
    let wrong = || format!("'{name}' must be a list of names");
    let list = value.as_array().ok_or_else(wrong)?;
    list.iter()
        .map(|v| v.as_str().map(str::to_string).ok_or_else(wrong))
        .collect::<Result<_, _>>()
        .map(Some)
}
