//! Monotonic time and precise waiting for the physics thread: an absolute-deadline sleep on
//! CLOCK_MONOTONIC that wakes a little early, then a short spin to the deadline. Timer slack
//! is set to 1 ns so the kernel does not add its default 50 us to every wake-up.

/// Nanoseconds on CLOCK_MONOTONIC.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `deadline_ns - spin_ns`, then spins until `deadline_ns`.
pub fn wait_until(deadline_ns: u64, spin_ns: u64) {
    let wake = deadline_ns.saturating_sub(spin_ns);
    if now_ns() < wake {
        let ts = libc::timespec {
            tv_sec: (wake / 1_000_000_000) as libc::time_t,
            tv_nsec: (wake % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: valid timespec; an interrupted sleep simply returns early and we spin.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
    }
    while now_ns() < deadline_ns {
        std::hint::spin_loop();
    }
}

/// Tunes the calling thread for pacing. Returns a warning when the real-time priority could
/// not be set (it needs CAP_SYS_NICE).
pub fn tune_physics_thread(realtime_priority: u8) -> Option<String> {
    // SAFETY: prctl with PR_SET_TIMERSLACK only changes this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    if realtime_priority == 0 {
        return None;
    }
    let param = libc::sched_param {
        sched_priority: realtime_priority.min(99) as i32,
    };
    // SAFETY: valid sched_param; 0 means the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    (rc != 0).then(|| {
        format!(
            "could not set SCHED_FIFO priority {realtime_priority} for the physics thread: {}",
            std::io::Error::last_os_error()
        )
    })
}

/// Lowers the calling thread's scheduling weight to niceness `nice` (threads it starts
/// inherit it): under CPU contention the physics thread, at the normal weight or above,
/// comes first. Returns why not, when the system refused.
pub fn give_way(nice: u8) -> Result<(), std::io::Error> {
    if nice == 0 {
        return Ok(());
    }
    // SAFETY: setpriority on this thread (its id from gettid) with a plain value.
    let done = unsafe {
        let thread = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, thread, nice as libc::c_int)
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
