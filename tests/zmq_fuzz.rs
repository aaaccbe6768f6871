//! The legacy decoders against generated input: random bytes and mutations of valid
//! messages, more than a million in all. No input may panic; valid batches must decode to
//! what was encoded (a property check), and every accepted batch must obey the length and
//! value rules.
use mujoco_bridge::zmq::codec::{
    decode_control, decode_set_gains, encode_control, parse_command_topic,
};

/// xorshift64*: a small, seeded generator (no dependency, reproducible).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// Up to `max_len` random bytes.
    fn bytes(&mut self, max_len: u64) -> Vec<u8> {
        let len = self.below(max_len);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

const ACTUATORS: usize = 29;

/// What the protocol says a control payload decodes to, written independently of the
/// decoder: None when the message is dropped (shorter than 4 + 8 N bytes, or N < 0), else
/// the kept pairs (known id, finite value) and the number skipped.
fn oracle(payload: &[u8]) -> Option<(Vec<(u32, f32)>, usize)> {
    let n = i32::from_le_bytes(payload.get(..4)?.try_into().ok()?);
    let n = usize::try_from(n).ok()?;
    let pairs = payload.get(4..4 + 8 * n)?;
    let (mut kept, mut skipped) = (Vec::new(), 0);
    for pair in pairs.chunks(8) {
        let id = i32::from_le_bytes(pair[..4].try_into().unwrap());
        let value = f32::from_le_bytes(pair[4..].try_into().unwrap());
        match u32::try_from(id) {
            Ok(id) if (id as usize) < ACTUATORS && value.is_finite() => kept.push((id, value)),
            _ => skipped += 1,
        }
    }
    Some((kept, skipped))
}

#[test]
fn a_million_generated_inputs_never_panic_and_valid_ones_round_trip() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    let (mut inputs, mut accepted, mut expected_accepted) = (0u64, 0u64, 0u64);
    // Random bytes of every short length.
    for _ in 0..600_000 {
        let mut payload = rng.bytes(48);
        if payload.len() >= 4 && rng.below(2) == 0 {
            // A plausible count, so that random pairs get decoded too.
            let n = rng.below(6) as i32;
            payload[..4].copy_from_slice(&n.to_le_bytes());
        }
        let expected = oracle(&payload);
        expected_accepted += u64::from(expected.is_some());
        match (decode_control(&payload, ACTUATORS, &mut out), expected) {
            (Ok(skipped), Some((kept, skipped_count))) => {
                accepted += 1;
                assert_eq!(out, kept, "kept pairs of {payload:?}");
                assert_eq!(skipped.len(), skipped_count, "skipped pairs of {payload:?}");
            }
            (Err(_), None) => {}
            (got, want) => panic!("{payload:?}: decoded {got:?}, the protocol says {want:?}"),
        }
        let _ = parse_command_topic(&payload);
        inputs += 2;
    }
    // Valid batches, then mutated: truncated, a flipped byte, trailing bytes.
    for _ in 0..150_000 {
        let count = rng.below(8);
        let pairs: Vec<(i32, f32)> = (0..count)
            .map(|_| {
                (
                    rng.below(ACTUATORS as u64) as i32,
                    (rng.below(2000) as f32 - 1000.0) / 10.0,
                )
            })
            .collect();
        let payload = encode_control(&pairs);
        decode_control(&payload, ACTUATORS, &mut out).unwrap();
        let decoded: Vec<(i32, f32)> = out.iter().map(|(id, v)| (*id as i32, *v)).collect();
        assert_eq!(decoded, pairs, "round trip");
        let mut truncated = payload.clone();
        let keep = rng.below(payload.len() as u64) as usize;
        truncated.truncate(keep);
        assert!(
            decode_control(&truncated, ACTUATORS, &mut out).is_err(),
            "a short payload is refused"
        );
        let mut flipped = payload.clone();
        let at = rng.below(flipped.len() as u64) as usize;
        let bit = rng.below(8);
        flipped[at] ^= 1 << bit;
        let decoded = decode_control(&flipped, ACTUATORS, &mut out).is_ok();
        assert_eq!(decoded, oracle(&flipped).is_some(), "{flipped:?}");
        let mut longer = payload.clone();
        longer.extend(rng.bytes(16));
        decode_control(&longer, ACTUATORS, &mut out).unwrap();
        assert_eq!(out.len(), pairs.len(), "trailing bytes are ignored");
        inputs += 4;
    }
    // set_gains: random bytes, and JSON-shaped text with random pieces.
    let pieces = [
        "{",
        "}",
        "\"kp\"",
        ":",
        ",",
        "1.5",
        "-2",
        "\"a\"",
        "null",
        "[",
        "]",
        "1e999",
        "\"torque_limit\"",
        " ",
    ];
    for _ in 0..120_000 {
        let _ = decode_set_gains(&rng.bytes(40));
        let count = rng.below(16);
        let text: String = (0..count)
            .map(|_| pieces[rng.below(pieces.len() as u64) as usize])
            .collect();
        if let Ok(entries) = decode_set_gains(text.as_bytes()) {
            for (_, g) in entries {
                assert!(
                    [g.kp, g.kv, g.torque_limit]
                        .iter()
                        .flatten()
                        .all(|v| v.is_finite() && *v >= 0.0)
                );
            }
        }
        inputs += 2;
    }
    // Topics: random printable ones around the real shapes.
    let topics = [
        "g1/control ",
        "g1/set_gains ",
        "g1/control",
        "/control",
        "g1/",
        "a/b/control",
        "g1/control x",
    ];
    for _ in 0..60_000 {
        let mut topic = topics[rng.below(topics.len() as u64) as usize]
            .as_bytes()
            .to_vec();
        if rng.below(2) == 0 {
            let at = rng.below(topic.len() as u64 + 1) as usize;
            let byte = rng.next() as u8;
            topic.insert(at.min(topic.len()), byte);
        }
        let _ = parse_command_topic(&topic);
        inputs += 1;
    }
    println!("zmq_fuzz: {inputs} generated inputs, {accepted} random payloads accepted, no panic");
    // The generator's plausible counts make a good share decodable: the accepted count is
    // the one the protocol's rule gives, and the check above saw both outcomes often.
    assert_eq!(accepted, expected_accepted);
    assert!(
        accepted > 10_000 && accepted < 590_000,
        "{accepted} accepted"
    );
}
