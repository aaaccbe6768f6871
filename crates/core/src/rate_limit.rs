//! Warnings that could repeat at the rate of a client's messages are logged at most once a
//! second per kind, with the number held back.
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Logs a message per key at most once a second, with the count of those held back.
#[derive(Default)]
pub struct RateLimiter {
    last: Mutex<HashMap<String, (Instant, u64)>>,
}

impl RateLimiter {
    pub fn warn(&self, key: &str, message: &str) {
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        let now = Instant::now();
        let entry = last
            .entry(key.to_string())
            .or_insert((now - Duration::from_secs(2), 0));
        if now.duration_since(entry.0) >= Duration::from_secs(1) {
            if entry.1 > 0 {
                log::warn!("{message} ({} more like it in the last second)", entry.1);
            } else {
                log::warn!("{message}");
            }
            *entry = (now, 0);
        } else {
            entry.1 += 1;
        }
    }
}
