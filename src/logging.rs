//! The log backend: records go to stderr (env_logger's format, `RUST_LOG` filter) and, once
//! the ROS 2 node runs, also into a bounded queue that the node drains onto /rosout. A full
//! queue drops the record for /rosout only; logging never waits for the node.
use crossbeam_queue::ArrayQueue;
use std::sync::OnceLock;

/// One record on its way to /rosout.
pub struct LogLine {
    pub level: log::Level,
    pub message: String,
    pub file: String,
    pub line: u32,
    pub function: String,
}

const QUEUE: usize = 1024;
static ROSOUT: OnceLock<ArrayQueue<LogLine>> = OnceLock::new();

struct Backend {
    stderr: env_logger::Logger,
}

impl log::Log for Backend {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        self.stderr.enabled(metadata)
    }

    fn log(&self, record: &log::Record) {
        if !self.stderr.matches(record) {
            return;
        }
        self.stderr.log(record);
        if let Some(queue) = ROSOUT.get() {
            let _ = queue.push(LogLine {
                level: record.level(),
                message: record.args().to_string(),
                file: record.file().unwrap_or_default().to_string(),
                line: record.line().unwrap_or(0),
                function: record.target().to_string(),
            });
        }
    }

    fn flush(&self) {
        self.stderr.flush();
    }
}

/// Installs the backend; `default_filter` applies when RUST_LOG is not set.
pub fn init(default_filter: &str) {
    let stderr =
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default_filter))
            .format_target(false)
            .build();
    let max = stderr.filter();
    if log::set_boxed_logger(Box::new(Backend { stderr })).is_ok() {
        log::set_max_level(max);
    }
}

/// Starts queueing records for /rosout (called by the ROS 2 node).
pub fn start_rosout_queue() {
    let _ = ROSOUT.set(ArrayQueue::new(QUEUE));
}

/// The next record queued for /rosout.
pub fn next_rosout_line() -> Option<LogLine> {
    ROSOUT.get()?.pop()
}
