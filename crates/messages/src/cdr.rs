//! CDR, the byte form of ROS 2 messages on DDS and in MCAP files: a 4-byte encapsulation header (the byte
//! order) and the fields in order, each aligned to its size from the start of the body.
use byteorder::{BigEndian, LittleEndian};

/// Encapsulation identifiers: plain CDR, big- or little-endian.
const CDR_BE: [u8; 2] = [0x00, 0x00];
const CDR_LE: [u8; 2] = [0x00, 0x01];

/// Bytes that are not the CDR of the message expected, or a value CDR cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CdrError {
    #[error("CDR encoding: {0}")]
    Encode(String),
    #[error("CDR message of {0} bytes, shorter than its header")]
    Short(usize),
    #[error("unknown CDR encapsulation {0:02x?}")]
    Encapsulation([u8; 2]),
    #[error("CDR decoding: {0}")]
    Decode(String),
}

/// `value` as a serialized ROS message (little-endian CDR with its header).
pub fn encode<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, CdrError> {
    let mut bytes = Vec::new();
    encode_into(value, &mut bytes)?;
    Ok(bytes)
}

/// `value` as a serialized ROS message in `bytes` (cleared first; its capacity is reused, so
/// a stream of messages of one size allocates once).
pub fn encode_into<T: serde::Serialize>(value: &T, bytes: &mut Vec<u8>) -> Result<(), CdrError> {
    bytes.clear();
    bytes.extend_from_slice(&[CDR_LE[0], CDR_LE[1], 0, 0]);
    cdr_encoding::to_writer::<T, LittleEndian, _>(bytes, value)
        .map_err(|e| CdrError::Encode(e.to_string()))
}

/// A serialized ROS message (CDR of either byte order, with its header) as a value.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, CdrError> {
    if bytes.len() < 4 {
        return Err(CdrError::Short(bytes.len()));
    }
    let (header, body) = bytes.split_at(4);
    let decoded = match [header[0], header[1]] {
        CDR_LE => cdr_encoding::from_bytes::<T, LittleEndian>(body),
        CDR_BE => cdr_encoding::from_bytes::<T, BigEndian>(body),
        other => return Err(CdrError::Encapsulation(other)),
    };
    decoded
        .map(|(value, _)| value)
        .map_err(|e| CdrError::Decode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin_interfaces::msg::Time;
    use crate::sensor_msgs::msg::JointState;
    use crate::std_msgs::msg::Header;

    #[test]
    fn joint_state_has_the_ros_layout() {
        let message = JointState {
            header: Header {
                stamp: Time { sec: 2, nanosec: 3 },
                frame_id: "a".into(),
            },
            name: vec!["j".into()],
            position: vec![1.5],
            velocity: vec![],
            effort: vec![],
        };
        let bytes = encode(&message).unwrap();
        let mut expected = vec![0, 1, 0, 0];
        expected.extend(2i32.to_le_bytes()); // stamp.sec
        expected.extend(3u32.to_le_bytes()); // stamp.nanosec
        expected.extend(2u32.to_le_bytes()); // frame_id: length with its NUL
        expected.extend(b"a\0");
        expected.extend([0, 0]); // align to 4
        expected.extend(1u32.to_le_bytes()); // name: one string
        expected.extend(2u32.to_le_bytes());
        expected.extend(b"j\0");
        expected.extend([0, 0]);
        expected.extend(1u32.to_le_bytes()); // position: one value at 32, 8-aligned
        expected.extend(1.5f64.to_le_bytes());
        expected.extend(0u32.to_le_bytes()); // velocity, effort: empty
        expected.extend(0u32.to_le_bytes());
        assert_eq!(bytes, expected);
        assert_eq!(decode::<JointState>(&bytes).unwrap(), message);
    }

    #[test]
    fn short_or_unknown_input_is_an_error() {
        assert!(decode::<Time>(&[0, 1]).is_err());
        assert!(decode::<Time>(&[7, 7, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]).is_err());
        assert!(decode::<Time>(&[0, 1, 0, 0, 1]).is_err());
    }
}
