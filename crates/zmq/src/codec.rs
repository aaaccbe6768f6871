//! The legacy URLab ZMQ protocol as pure functions: bytes <-> values, no sockets. Layouts
//! (little-endian, packed) follow docs/legacy-zmq-protocol.md exactly; clients check the
//! lengths, so nothing here may add a field.
use serde::Serialize;

pub const JOINT_ROW_LEN: usize = 16;
pub const BASE_STATE_ROW_LEN: usize = 52;
pub const TWIST_ROW_LEN: usize = 12;
pub const ACTIONS_ROW_LEN: usize = 4;

/// `{A}/joint/{joint}`: int32 joint id, float32 qpos, qvel, qacc.
pub fn joint_row(joint_id: i32, qpos: f64, qvel: f64, qacc: f64) -> [u8; JOINT_ROW_LEN] {
    let mut out = [0u8; JOINT_ROW_LEN];
    out[..4].copy_from_slice(&joint_id.to_le_bytes());
    for (k, v) in [qpos, qvel, qacc].iter().enumerate() {
        out[4 + 4 * k..8 + 4 * k].copy_from_slice(&(*v as f32).to_le_bytes());
    }
    out
}

/// `{A}/base_state/{free_joint}`: position, quaternion x y z w (MuJoCo stores w x y z: the
/// reorder happens here and nowhere else), linear velocity (world frame) and angular
/// velocity (body frame) exactly as MuJoCo's qvel holds them.
pub fn base_state_row(qpos_xyz_wxyz: &[f64], qvel: &[f64]) -> [u8; BASE_STATE_ROW_LEN] {
    let [x, y, z, qw, qx, qy, qz] = [0, 1, 2, 3, 4, 5, 6].map(|i| qpos_xyz_wxyz[i]);
    let values = [
        x, y, z, qx, qy, qz, qw, qvel[0], qvel[1], qvel[2], qvel[3], qvel[4], qvel[5],
    ];
    let mut out = [0u8; BASE_STATE_ROW_LEN];
    for (k, v) in values.iter().enumerate() {
        out[4 * k..4 * k + 4].copy_from_slice(&(*v as f32).to_le_bytes());
    }
    out
}

/// `{A}/sensor/{sensor}`: int32 sensor id, int32 dim, dim float32 (raw sensordata).
pub fn sensor_row(out: &mut Vec<u8>, sensor_id: i32, values: &[f64]) {
    out.clear();
    out.extend_from_slice(&sensor_id.to_le_bytes());
    out.extend_from_slice(&(values.len() as i32).to_le_bytes());
    for v in values {
        out.extend_from_slice(&(*v as f32).to_le_bytes());
    }
}

/// `{A}/twist`: vx (m/s), vy (m/s), yaw rate (rad/s) as float32.
pub fn twist_row(twist: [f64; 3]) -> [u8; TWIST_ROW_LEN] {
    let mut out = [0u8; TWIST_ROW_LEN];
    for (k, v) in twist.iter().enumerate() {
        out[4 * k..4 * k + 4].copy_from_slice(&(*v as f32).to_le_bytes());
    }
    out
}

/// `{A}/actions`: int32 bitmask of held action keys; sent only when non-zero.
pub fn actions_row(mask: i32) -> Option<[u8; ACTIONS_ROW_LEN]> {
    (mask != 0).then(|| mask.to_le_bytes())
}

/// Why an incoming message was dropped.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// Not `[topic, payload]`.
    FrameCount(usize),
    /// The topic is not `{A}/control` or `{A}/set_gains` of a known articulation.
    UnknownTopic(String),
    TooShort {
        needed: usize,
        got: usize,
    },
    NegativeCount(i32),
    /// A pair names an actuator id outside 0..nu.
    UnknownActuator(i32),
    NotFinite {
        actuator: i32,
    },
    BadJson(String),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::FrameCount(n) => {
                write!(f, "a message has {n} frames, [topic, payload] expected")
            }
            DecodeError::UnknownTopic(t) => write!(f, "unknown topic '{t}'"),
            DecodeError::TooShort { needed, got } => {
                write!(f, "payload of {got} bytes, {needed} needed")
            }
            DecodeError::NegativeCount(n) => write!(f, "negative pair count {n}"),
            DecodeError::UnknownActuator(id) => write!(f, "unknown actuator id {id}"),
            DecodeError::NotFinite { actuator } => {
                write!(f, "NaN or infinite value for actuator {actuator}")
            }
            DecodeError::BadJson(e) => {
                write!(f, "set_gains payload is not a JSON object of gains: {e}")
            }
        }
    }
}

/// What an incoming topic asks for, with the articulation it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    Control,
    SetGains,
}

/// Parses `{A}/control ` or `{A}/set_gains ` (trailing whitespace trimmed) into the
/// articulation name and the kind.
pub fn parse_command_topic(topic: &[u8]) -> Result<(&str, CommandKind), DecodeError> {
    let text = std::str::from_utf8(topic)
        .map_err(|_| DecodeError::UnknownTopic(String::from_utf8_lossy(topic).into()))?;
    let trimmed = text.trim_end();
    let unknown = || DecodeError::UnknownTopic(trimmed.to_string());
    let (robot, kind) = trimmed.rsplit_once('/').ok_or_else(unknown)?;
    let kind = match kind {
        "control" => CommandKind::Control,
        "set_gains" => CommandKind::SetGains,
        _ => return Err(unknown()),
    };
    if robot.is_empty() || robot.contains('/') {
        return Err(unknown());
    }
    Ok((robot, kind))
}

/// Decodes a `control` payload: int32 N, then N pairs (int32 actuator id, float32 value).
/// Extra trailing bytes are ignored. A payload shorter than 4 + 8 N bytes or a negative N
/// drops the message; a pair with an unknown id or a NaN / infinite value is skipped and
/// returned, the others are kept (as a legacy server loops over the pairs).
pub fn decode_control(
    payload: &[u8],
    actuator_count: usize,
    out: &mut Vec<(u32, f32)>,
) -> Result<Vec<DecodeError>, DecodeError> {
    out.clear();
    if payload.len() < 4 {
        return Err(DecodeError::TooShort {
            needed: 4,
            got: payload.len(),
        });
    }
    let n = i32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]);
    if n < 0 {
        return Err(DecodeError::NegativeCount(n));
    }
    let needed = 4usize.saturating_add((n as usize).saturating_mul(8));
    if payload.len() < needed {
        return Err(DecodeError::TooShort {
            needed,
            got: payload.len(),
        });
    }
    let mut skipped = Vec::new();
    for pair in payload[4..needed].chunks_exact(8) {
        let id = i32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]);
        let value = f32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]);
        if id < 0 || id as usize >= actuator_count {
            skipped.push(DecodeError::UnknownActuator(id));
        } else if !value.is_finite() {
            skipped.push(DecodeError::NotFinite { actuator: id });
        } else {
            out.push((id as u32, value));
        }
    }
    Ok(skipped)
}

/// Encodes a `control` payload (what a legacy client sends).
pub fn encode_control(pairs: &[(i32, f32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 8 * pairs.len());
    out.extend_from_slice(&(pairs.len() as i32).to_le_bytes());
    for (id, value) in pairs {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&value.to_le_bytes());
    }
    out
}

/// One entry of a `set_gains` message; every inner key is optional.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GainsEntry {
    pub kp: Option<f64>,
    pub kv: Option<f64>,
    pub torque_limit: Option<f64>,
}

/// Decodes `{"name": {"kp": .., "kv": .., "torque_limit": ..}, ...}`. Unknown inner keys
/// are ignored; values must be finite numbers >= 0.
pub fn decode_set_gains(payload: &[u8]) -> Result<Vec<(String, GainsEntry)>, DecodeError> {
    let bad = |m: String| DecodeError::BadJson(m);
    let value: serde_json::Value =
        serde_json::from_slice(payload).map_err(|e| bad(e.to_string()))?;
    let object = value
        .as_object()
        .ok_or_else(|| bad("not an object".into()))?;
    let mut out = Vec::with_capacity(object.len());
    for (name, gains) in object {
        let gains = gains
            .as_object()
            .ok_or_else(|| bad(format!("'{name}' is not an object")))?;
        let field = |key: &str| -> Result<Option<f64>, DecodeError> {
            match gains.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(v) => match v.as_f64() {
                    Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                    _ => Err(bad(format!("'{name}'.{key} must be a number >= 0"))),
                },
            }
        };
        out.push((
            name.clone(),
            GainsEntry {
                kp: field("kp")?,
                kv: field("kv")?,
                torque_limit: field("torque_limit")?,
            },
        ));
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CameraStream {
    pub name: String,
    pub endpoint: String,
}

/// The discovery message of one articulation, keys in the legacy order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActuatorList {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub robot: String,
    /// Full names, with the `{A}_` prefix.
    pub names: Vec<String>,
    pub ids: Vec<i32>,
    pub mins: Vec<f64>,
    pub maxs: Vec<f64>,
    pub camera_list: Vec<CameraStream>,
}

/// The ctrlrange bounds a legacy client expects for an unlimited actuator.
pub const UNLIMITED_RANGE: [f64; 2] = [-100.0, 100.0];

impl ActuatorList {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Whether the info message goes out at this tick (counted in physics steps): after 50,
/// then every 50 until 2500, then every 500.
pub fn info_due(tick: u64) -> bool {
    tick > 0
        && if tick <= 2500 {
            tick.is_multiple_of(50)
        } else {
            tick.is_multiple_of(500)
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_layouts() {
        let row = joint_row(3, 0.5, -1.0, 2.0);
        assert_eq!(&row[..4], &3i32.to_le_bytes());
        assert_eq!(f32::from_le_bytes(row[4..8].try_into().unwrap()), 0.5);
        let base = base_state_row(
            &[1.0, 2.0, 3.0, 0.9, 0.1, 0.2, 0.3],
            &[4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        );
        let f = |k: usize| f32::from_le_bytes(base[4 * k..4 * k + 4].try_into().unwrap());
        assert_eq!(
            [f(3), f(4), f(5), f(6)],
            [0.1, 0.2, 0.3, 0.9],
            "quaternion x y z w"
        );
        assert_eq!(f(12), 9.0);
        let mut sensor = Vec::new();
        sensor_row(&mut sensor, 7, &[1.0, 2.0, 3.0]);
        assert_eq!(sensor.len(), 8 + 12);
        assert_eq!(actions_row(0), None);
        assert_eq!(twist_row([0.0; 3]).len(), 12);
    }

    #[test]
    fn control_decoding_rules() {
        let mut out = Vec::new();
        let batch = encode_control(&[(0, 0.25), (3, -1.5)]);
        decode_control(&batch, 5, &mut out).unwrap();
        assert_eq!(out, [(0, 0.25), (3, -1.5)]);
        let mut longer = batch.clone();
        longer.extend_from_slice(&[9, 9, 9]);
        decode_control(&longer, 5, &mut out).unwrap();
        assert_eq!(out.len(), 2, "trailing bytes ignored");
        assert!(matches!(
            decode_control(&batch[..11], 5, &mut out),
            Err(DecodeError::TooShort { .. })
        ));
        assert!(matches!(
            decode_control(&(-1i32).to_le_bytes(), 5, &mut out),
            Err(DecodeError::NegativeCount(-1))
        ));
        let mixed = encode_control(&[(5, 1.0), (2, 0.5), (1, f32::NAN), (-3, 0.0)]);
        let skipped = decode_control(&mixed, 5, &mut out).unwrap();
        assert_eq!(out, [(2, 0.5)], "the valid pair is kept");
        assert_eq!(
            skipped,
            [
                DecodeError::UnknownActuator(5),
                DecodeError::NotFinite { actuator: 1 },
                DecodeError::UnknownActuator(-3)
            ]
        );
        let huge = i32::MAX.to_le_bytes();
        assert!(decode_control(&huge, 5, &mut out).is_err());
    }

    #[test]
    fn topics_and_gains() {
        assert_eq!(
            parse_command_topic(b"g1/control ").unwrap(),
            ("g1", CommandKind::Control)
        );
        assert_eq!(
            parse_command_topic(b"g1/set_gains \t").unwrap(),
            ("g1", CommandKind::SetGains)
        );
        assert!(parse_command_topic(b"g1/control x").is_err());
        assert!(parse_command_topic(b"a/b/control").is_err());
        assert!(parse_command_topic(&[0xff, 0xfe]).is_err());
        let gains =
            decode_set_gains(br#"{"left_knee": {"kp": 120.0, "kv": 6}, "g1_hip": {}}"#).unwrap();
        assert_eq!(
            gains[0],
            (
                "left_knee".into(),
                GainsEntry {
                    kp: Some(120.0),
                    kv: Some(6.0),
                    torque_limit: None
                }
            )
        );
        assert_eq!(gains[1].1, GainsEntry::default());
        assert!(decode_set_gains(br#"{"a": {"kp": -1}}"#).is_err());
        assert!(decode_set_gains(b"[1,2]").is_err());
    }

    #[test]
    fn discovery_json_and_schedule() {
        let list = ActuatorList {
            kind: "actuator_list",
            robot: "g1".into(),
            names: vec!["g1_a".into()],
            ids: vec![0],
            mins: vec![-2.53],
            maxs: vec![2.88],
            camera_list: vec![],
        };
        assert_eq!(
            list.to_json(),
            r#"{"type":"actuator_list","robot":"g1","names":["g1_a"],"ids":[0],"mins":[-2.53],"maxs":[2.88],"camera_list":[]}"#
        );
        let due: Vec<u64> = (0..4000).filter(|t| info_due(*t)).collect();
        assert_eq!(&due[..3], &[50, 100, 150]);
        assert!(due.contains(&2500) && !due.contains(&2550) && due.contains(&3000));
    }
}
