//! MuJoCo's asset cache (meshes and textures as decoded and processed by its compiler),
//! held while the world changes and let go of when it stops. Each compile otherwise decodes
//! every mesh again and builds its bounding volumes: a Go1 spawn took 0.36-0.48 s without
//! the cache, and beside the soak's busy processes its spawns and deletes fell behind. Held
//! for good, the cache costs a world of meshes its whole decoded size (Go1 76 MB, G1 147 MB),
//! so the start's build keeps none and the cache empties `HOLD` after the last change.
use mujoco_rs::wrappers::mj_cache::MjCache;
use std::sync::Mutex;
use std::sync::mpsc::{RecvTimeoutError, Sender};
use std::time::Duration;

/// How long the cache outlives the last world change.
pub const HOLD: Duration = Duration::from_secs(30);

/// The keeper's inbox: one message per world change.
static KEEPER: Mutex<Option<Sender<usize>>> = Mutex::new(None);

/// Keeps none: MuJoCo's default holds 500 MB of whatever was compiled, for good.
pub fn keep_none() {
    MjCache::current().set_capacity(0);
}

/// Before a world change's build: keep up to `megabytes` (0: none) until `HOLD` after the
/// last change.
pub fn hold_for_changes(megabytes: u32) {
    let bytes = megabytes as usize * (1 << 20);
    MjCache::current().set_capacity(bytes);
    if bytes == 0 {
        return;
    }
    let mut keeper = KEEPER.lock().unwrap_or_else(|p| p.into_inner());
    if keeper.as_ref().is_some_and(|k| k.send(bytes).is_ok()) {
        return;
    }
    let (changes, inbox) = std::sync::mpsc::channel::<usize>();
    let started = std::thread::Builder::new()
        .name("asset-cache".into())
        .spawn(move || {
            // Ends with the process (the sender is static); each change moves the deadline.
            loop {
                match inbox.recv_timeout(HOLD) {
                    Ok(_) => continue,
                    Err(RecvTimeoutError::Timeout) => keep_none(),
                    Err(RecvTimeoutError::Disconnected) => return,
                }
                if inbox.recv().is_err() {
                    return;
                }
            }
        });
    if started.is_ok() {
        *keeper = Some(changes);
    }
}
