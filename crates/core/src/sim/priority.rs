//! How the threads that keep time (the physics thread, and the one that sends `/clock`)
//! ask the kernel to come first: SCHED_FIFO where the process may (root, CAP_SYS_NICE or an
//! rtprio limit), else a raised niceness, else the normal weight. What was granted is said
//! in one log line at start.
use std::fmt;

/// The niceness asked for when SCHED_FIFO is refused.
const RAISED_NICE: i32 = -10;

/// What the kernel granted a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granted {
    /// SCHED_FIFO at this priority.
    Fifo(u8),
    /// The normal scheduler at this (raised) niceness.
    Nice(i32),
    /// The normal scheduler at the normal weight.
    Normal,
}

impl fmt::Display for Granted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Granted::Fifo(p) => write!(f, "SCHED_FIFO priority {p}"),
            Granted::Nice(n) => write!(f, "niceness {n}"),
            Granted::Normal => write!(f, "the normal priority"),
        }
    }
}

/// Whether a grant puts a thread above the normal weight (SCHED_FIFO or a raised niceness).
pub fn raised_above_normal(granted: &Option<Granted>) -> bool {
    match granted {
        Some(Granted::Fifo(_)) => true,
        Some(Granted::Nice(n)) => *n < 0,
        _ => false,
    }
}

/// The start's one line on what the threads that keep time got: `asked` the configured
/// SCHED_FIFO priority, `got` the physics thread's grant, `refused` why it fell short.
pub fn describe(asked: u8, got: Granted, refused: Option<&std::io::Error>) -> String {
    let why = refused.map_or(String::new(), |e| format!(" ({e})"));
    match got {
        Granted::Fifo(p) => format!(
            "real time: the physics thread steps at SCHED_FIFO priority {p} in realtime mode \
             (the normal scheduler in fast mode), /clock is sent at {}",
            p.saturating_sub(1).max(1)
        ),
        Granted::Nice(n) if asked > 0 => format!(
            "real time: SCHED_FIFO {asked} refused{why}; the physics and /clock threads run at \
             niceness {n} (grant CAP_SYS_NICE or an rtprio limit for SCHED_FIFO)"
        ),
        Granted::Nice(n) => {
            format!("real time: the physics and /clock threads run at niceness {n}")
        }
        Granted::Normal => format!(
            "real time: the physics and /clock threads run at the normal priority: SCHED_FIFO \
             and a raised niceness were refused{why} (grant CAP_SYS_NICE or an rtprio limit); \
             other processes on busy cores can delay steps and /clock"
        ),
    }
}

/// Raises the calling thread: SCHED_FIFO at `priority` (0: not asked), else niceness
/// `RAISED_NICE`. Returns what it got and, when it fell short, the kernel's reason.
pub fn raise(priority: u8) -> (Granted, Option<std::io::Error>) {
    let mut refused = None;
    if priority > 0 {
        let priority = priority.min(99);
        if set_fifo(priority) {
            return (Granted::Fifo(priority), None);
        }
        refused = Some(std::io::Error::last_os_error());
    }
    if set_nice(RAISED_NICE) {
        return (Granted::Nice(RAISED_NICE), refused);
    }
    let reason = refused.or_else(|| Some(std::io::Error::last_os_error()));
    (Granted::Normal, reason)
}

/// SCHED_FIFO at `priority` for the calling thread; whether the kernel agreed.
pub fn set_fifo(priority: u8) -> bool {
    let param = libc::sched_param {
        sched_priority: i32::from(priority),
    };
    // SAFETY: a valid sched_param; 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// The normal scheduler at niceness `nice` for the calling thread; whether it was set.
pub fn set_normal(nice: i32) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: a valid sched_param; 0 is the calling thread.
    let normal = unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) == 0 };
    normal && set_nice(nice)
}

/// Lowers the calling thread's scheduling weight to niceness `nice` (threads it starts
/// inherit it): under CPU contention the threads that keep time come first. Returns why
/// not, when the system refused.
pub fn give_way(nice: u8) -> Result<(), std::io::Error> {
    if nice == 0 || set_nice(i32::from(nice)) {
        return Ok(());
    }
    Err(std::io::Error::last_os_error())
}

/// Niceness `nice` for the calling thread (by its thread id: setpriority on a thread).
fn set_nice(nice: i32) -> bool {
    // SAFETY: setpriority on this thread's id with a plain value.
    unsafe {
        let thread = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, thread, nice) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_gets_what_the_kernel_grants_and_can_go_back_to_normal() {
        std::thread::spawn(|| {
            let (granted, reason) = raise(10);
            match granted {
                Granted::Fifo(p) => {
                    assert_eq!(p, 10);
                    // SAFETY: reads this thread's policy.
                    assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_FIFO);
                }
                Granted::Nice(n) => assert_eq!(n, RAISED_NICE),
                Granted::Normal => assert!(reason.is_some()),
            }
            assert!(set_normal(0) || granted == Granted::Normal);
            // SAFETY: reads this thread's policy.
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
        })
        .join()
        .unwrap();
    }
}
