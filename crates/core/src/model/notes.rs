//! What the import says of a robot (its base rule, its actuators, the servo gains it was
//! given, where its controllers come from): at info the first time the process says it, at
//! debug when a world change rebuilds the same robot and would say it again, so that the
//! log holds one line per world change rather than the whole import each time.
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;

/// Distinct notes remembered; past that the memory starts over (a note may then repeat).
const REMEMBERED: usize = 4096;

static SAID: Mutex<Option<HashSet<u64>>> = Mutex::new(None);

/// Logs `text` at info the first time, at debug after.
pub fn note(text: &str) {
    if first_time(text) {
        log::info!("{text}");
    } else {
        log::debug!("{text}");
    }
}

/// Logs `text` as a warning the first time, at debug after.
pub fn warn(text: &str) {
    if first_time(text) {
        log::warn!("{text}");
    } else {
        log::debug!("{text}");
    }
}

fn first_time(text: &str) -> bool {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let key = hasher.finish();
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    let said = said.get_or_insert_with(HashSet::new);
    if said.len() >= REMEMBERED {
        said.clear();
    }
    said.insert(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_new_once() {
        assert!(first_time("notes test: a robot's base"));
        assert!(!first_time("notes test: a robot's base"));
        assert!(first_time("notes test: another robot's base"));
    }
}
