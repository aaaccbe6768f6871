//! Live counts of what a run holds that a leak would pile up: world generations, GL
//! contexts, MuJoCo render contexts and `MjData` mirrors. Each holder carries a `Counted`
//! token, so the count goes up when it is made and down when it goes, whichever way it goes;
//! `/diagnostics` and the console show the counts, so a leak is visible in the field. Also
//! the process's resident memory, and how freed memory goes back to the system.
use std::sync::atomic::{AtomicUsize, Ordering};

/// What is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// World generations alive (the current one, and any an adapter still holds).
    Worlds,
    /// OpenGL contexts (render thread, viewer, screenshot).
    GlContexts,
    /// MuJoCo render contexts (`mjrContext`) on those GL contexts.
    RenderContexts,
    /// `MjData` copies of the state that render, ray-casting and viewer threads draw from.
    Mirrors,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Worlds,
        Kind::GlContexts,
        Kind::RenderContexts,
        Kind::Mirrors,
    ];

    /// The name `/diagnostics` and the console give the count.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Worlds => "live_worlds",
            Kind::GlContexts => "live_gl_contexts",
            Kind::RenderContexts => "live_render_contexts",
            Kind::Mirrors => "live_mirrors",
        }
    }

    fn counter(self) -> &'static AtomicUsize {
        static COUNTS: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];
        &COUNTS[self as usize]
    }
}

/// How many of `kind` are alive now.
pub fn live(kind: Kind) -> usize {
    kind.counter().load(Ordering::Relaxed)
}

/// One counted thing: counts while it lives.
#[derive(Debug)]
pub struct Counted(&'static AtomicUsize);

impl Counted {
    pub fn new(kind: Kind) -> Self {
        Self::on(kind.counter())
    }

    fn on(counter: &'static AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Self(counter)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The process's resident memory in bytes (Linux: /proc/self/statm), None where unknown.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf with a valid name has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * page.max(0) as u64)
}

/// Blocks at least this large get pages of their own from the system and give them back
/// when freed: a world's model and `MjData` arena, camera frames and their messages.
const OWN_PAGES_FROM: libc::c_int = 256 * 1024;

/// Sets the allocator up for a process that runs for days while worlds, render contexts and
/// frames come and go. glibc raises its threshold for blocks that get pages of their own
/// each time such a block is freed (up to 32 MB), so from the first world change on, models,
/// arenas and frames landed in the heaps, left holes there that later small blocks pinned, and
/// the resident memory a phase settled at scattered by megabytes. A fixed threshold keeps
/// them out of the heaps (default robot in the soak: idle 99 -> 87 MB, streaming 138 -> 124 MB,
/// phase-to-phase scatter about 4 -> 0.5 MB). Call before any thread starts.
pub fn tune_allocator() {
    // SAFETY: mallopt with a valid parameter has no preconditions; no other thread runs yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_PAGES_FROM);
    }
}

/// Hands memory that was freed back to the system (glibc keeps freed blocks in its arenas):
/// after a GL context or a world's render memory goes.
pub fn return_freed_memory() {
    // SAFETY: malloc_trim has no preconditions; it only releases free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Hands freed memory back to the system when it goes. Declared as the last field of a
/// struct, it drops after the others: what they held (a world's model, its state arrays) is
/// free by then, on whichever thread let go of the struct last.
#[derive(Debug, Default)]
pub struct ReturnsMemory;

impl Drop for ReturnsMemory {
    fn drop(&mut self) {
        return_freed_memory();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_counts_while_it_lives() {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let a = Counted::on(&COUNT);
        let b = Counted::on(&COUNT);
        assert_eq!(COUNT.load(Ordering::Relaxed), 2);
        drop(a);
        assert_eq!(COUNT.load(Ordering::Relaxed), 1);
        drop(b);
        assert_eq!(COUNT.load(Ordering::Relaxed), 0);
        assert!(resident_bytes().is_some_and(|b| b > 0));
    }
}
