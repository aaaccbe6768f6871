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

/// What RUST_LOG cannot raise by a general level: the DDS stack that sends /clock in every
/// build speaks at info and warn about every peer that comes and goes (and its socket layer
/// errs on a loopback without multicast). Naming them in RUST_LOG still raises them.
const QUIET: &str = "rustdds=error,rustdds::network::udp_listener=off,ros2_client=error";

/// Installs the backend; `default_filter` applies when RUST_LOG is not set.
pub fn init(default_filter: &str) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(asked) if !asked.trim().is_empty() => format!("{QUIET},{asked}"),
        _ => format!("{QUIET},{default_filter}"),
    };
    let stderr = env_logger::Builder::new()
        .parse_filters(&filter)
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

/// MuJoCo's messages (routed here by `model::init_mujoco`), under the target `mujoco`:
/// errors and warnings at their level; its info messages, which are timings (a 12-line
/// "compile time" block at every world build), at debug; its debug messages at trace.
/// Text that is not UTF-8 is shown with replacement characters rather than stopping.
pub fn mujoco_message(message: &mujoco_rs::prelude::MjLogMessage) {
    use mujoco_rs::prelude::MjtLogLevel;
    let level = match message.level() {
        MjtLogLevel::mjLOG_ERROR => log::Level::Error,
        MjtLogLevel::mjLOG_WARNING => log::Level::Warn,
        MjtLogLevel::mjLOG_INFO => log::Level::Debug,
        MjtLogLevel::mjLOG_DEBUG => log::Level::Trace,
    };
    if level > log::max_level() {
        return;
    }
    // The fields as MuJoCo lays them out (mjLogMessage in mujoco.h): the crate's accessors
    // panic on text that is not UTF-8, and a panic here would abort the process.
    #[repr(C)]
    struct Raw {
        level: std::ffi::c_int,
        topic: std::ffi::c_int,
        subject: [std::ffi::c_char; 1024],
        body: *const std::ffi::c_char,
        func: *const std::ffi::c_char,
    }
    let raw = std::ptr::from_ref(message).cast::<Raw>();
    let text = |pointer: *const std::ffi::c_char| {
        // SAFETY: MuJoCo's optional fields are null or NUL-terminated strings that live for
        // the whole call.
        if pointer.is_null() {
            std::borrow::Cow::Borrowed("")
        } else {
            unsafe { std::ffi::CStr::from_ptr(pointer) }.to_string_lossy()
        }
    };
    // SAFETY: `Raw` is the start of mjLogMessage's C layout, and the message lives for the
    // call; `subject` is NUL-terminated within its 1024 bytes.
    let (subject, function, body) = unsafe {
        (
            text((*raw).subject.as_ptr()),
            text((*raw).func),
            text((*raw).body),
        )
    };
    let function = if function.is_empty() {
        String::new()
    } else {
        format!("{function}: ")
    };
    let body = if body.is_empty() {
        String::new()
    } else {
        format!("\n{body}")
    };
    log::log!(target: "mujoco", level, "{function}{subject}{body}");
}
