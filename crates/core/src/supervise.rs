//! No thread ends silently. A panic is logged (with its thread) wherever it happens; a thread
//! the run cannot go on without (physics, the ROS node, a legacy server) is run under
//! `essential`, which turns its panic into a clean stop of the whole run (the main thread
//! sees `failure` and ends it, exit code 1), never a freeze. Threads that can start over
//! (the render and lidar workers, the frames publisher) catch their own panics and go on.
use std::sync::OnceLock;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

static FAILURE: OnceLock<String> = OnceLock::new();

/// Routes panic messages to the log (and so to /rosout), naming the thread.
pub fn install_panic_log() {
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("unnamed");
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        log::error!("thread '{name}' panicked{at}: {message}");
    }));
}

/// Runs `work` (the body of thread `name`); a panic records the failure, which stops the
/// run, and gives None.
pub fn essential<T>(name: &str, work: impl FnOnce() -> T) -> Option<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(value) => Some(value),
        Err(_) => {
            let _ = FAILURE.set(format!("the {name} thread failed (see the log above)"));
            None
        }
    }
}

/// Why the run must stop, once an essential thread failed.
pub fn failure() -> Option<&'static str> {
    FAILURE.get().map(String::as_str)
}

/// Joins `thread` if it ends within `limit`; false (and the thread detached) if it does not.
pub fn joined_within(thread: JoinHandle<()>, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while !thread.is_finished() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = thread.join();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_outlives_the_limit_is_left_behind_and_one_that_ends_is_joined() {
        let quick = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(20)));
        assert!(joined_within(quick, Duration::from_secs(5)));
        let (release, held) = std::sync::mpsc::channel::<()>();
        let stuck = std::thread::spawn(move || {
            let _ = held.recv();
        });
        let started = Instant::now();
        assert!(!joined_within(stuck, Duration::from_millis(100)));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        drop(release);
    }
}
