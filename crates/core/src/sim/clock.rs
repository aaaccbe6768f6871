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

/// Sets the calling thread's timer slack to 1 ns, so that the kernel does not add its
/// default 50 us to every wake-up of a paced step.
pub fn tighten_timer_slack() {
    // SAFETY: prctl with PR_SET_TIMERSLACK only changes this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}
