//! Memory the physics thread must find mapped. MuJoCo leaves mjData's arena (contacts,
//! constraint rows and its stack: 14.7 MB for Go1) unwritten until a step needs it, so the
//! kernel maps each page on its first touch, from inside a step. A fault can wait on
//! another thread (one changing the same mappings, as the world builder does when it maps and
//! unmaps whole model copies) that runs at normal priority beside the user's processes: a
//! real-time step then stands still for as long as the scheduler keeps that thread off the
//! CPU. Physics data is therefore made here, with every page of its arena written, off the
//! physics thread.
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_model::traits::ModelType;
use std::sync::Arc;

/// New physics data for `model`, its arena mapped (`touch_arena`); None when MuJoCo cannot
/// allocate it.
pub fn fresh_data(model: Arc<MjModel>) -> Option<MjData<Arc<MjModel>>> {
    let mut data = MjData::try_new(model).ok()?;
    touch_arena(&mut data);
    Some(data)
}

/// Writes every byte of `data`'s arena, so that its pages are mapped before the physics
/// thread steps it. Call it on fresh data only: the arena holds the contacts and constraint
/// rows of the last forward pass, which this clears.
fn touch_arena<M: ModelType>(data: &mut MjData<M>) {
    // SAFETY: only the arena pointer and size are read; the struct stays as MuJoCo made it.
    let raw = unsafe { data.ffi_mut() };
    let Ok(size) = usize::try_from(raw.narena) else {
        return;
    };
    if raw.arena.is_null() || size == 0 {
        return;
    }
    // SAFETY: MuJoCo allocated `narena` bytes at `arena` for this data, which owns them until
    // it is freed; `data` is borrowed mutably, so nothing else reads them now, and on fresh
    // data they hold nothing a step reads before writing.
    unsafe { std::ptr::write_bytes(raw.arena.cast::<u8>(), 0, size) };
}

/// Rewrites one element of every page of `buffer` with its own value, so that the calling
/// thread maps its pages. Memory allocated zeroed (calloc, which the compiler also makes of a
/// loop of zero stores) stays unmapped until its first write, and the thread that writes it
/// first takes the fault. The writes are volatile, which no compiler drops.
pub fn map_pages<T>(buffer: &mut [T]) {
    let stride = (PAGE / std::mem::size_of::<T>().max(1)).max(1);
    for element in buffer.iter_mut().step_by(stride) {
        let element: *mut T = element;
        // SAFETY: `element` points at an initialized T that `buffer` borrows mutably; the
        // value read is written back in place, so exactly one copy stays and nothing drops.
        unsafe { element.write_volatile(element.read_volatile()) };
    }
}

/// The smallest page size of the machines the bridge runs on (a larger one is mapped all the
/// same, by more writes than needed).
const PAGE: usize = 4096;

/// The page faults the calling thread has taken since it started (minor and major).
pub fn thread_page_faults() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage; RUSAGE_THREAD exists on Linux since 2.6.26.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return 0;
    }
    (usage.ru_minflt + usage.ru_majflt) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Page faults a fresh thread takes writing one word of every page of `buffer`.
    fn faults_writing(buffer: &mut [u32]) -> u64 {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let before = thread_page_faults();
                    for word in buffer.iter_mut().step_by(PAGE / 4) {
                        // SAFETY: a valid, exclusively borrowed word.
                        unsafe { std::ptr::write_volatile(word, 1) };
                    }
                    thread_page_faults() - before
                })
                .join()
                .unwrap()
        })
    }

    #[test]
    fn mapped_pages_take_no_fault_on_the_thread_that_writes_them() {
        // 64 MB allocated zeroed is a fresh mapping: nothing of it is mapped yet.
        const WORDS: usize = 16 << 20;
        let pages = (WORDS * 4 / PAGE) as u64;
        let mut unmapped = vec![0u32; WORDS];
        let first = faults_writing(&mut unmapped);
        assert!(first >= pages / 2, "{first} faults for {pages} fresh pages");
        drop(unmapped);
        let mut mapped = vec![0u32; WORDS];
        map_pages(&mut mapped);
        let later = faults_writing(&mut mapped);
        assert!(later < 16, "{later} faults for {pages} mapped pages");
    }

    #[test]
    fn a_touched_arena_is_mapped_before_the_first_step() {
        // 64 MB is above glibc's largest mmap threshold: the arena is a fresh mapping.
        let model = MjModel::from_xml_string(
            "<mujoco><size memory='64M'/><worldbody><body><freejoint/><geom size='0.1'/>\
             </body></worldbody></mujoco>",
        )
        .unwrap();
        let mut data = MjData::new(&model);
        let pages = data.ffi().narena as u64 / 4096;
        let before = thread_page_faults();
        touch_arena(&mut data);
        let first = thread_page_faults() - before;
        assert!(first >= pages / 2, "{first} faults for {pages} pages");
        // A step after it maps nothing new.
        let before = thread_page_faults();
        data.step();
        data.step();
        assert!(thread_page_faults() - before < 16);
        assert!(data.time() > 0.0);
    }
}
