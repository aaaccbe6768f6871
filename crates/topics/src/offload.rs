//! Messages too big for the sampler's loop (camera frames, point clouds): filled and sent on
//! a thread of their own, so that a frame going out never delays the state topics. An output
//! keeps what it sends with (its message buffers) in a `Wire`, which that thread holds while
//! it works; a frame that comes while the previous one is still going out is not asked for
//! (the output looks again next cycle).
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

/// The publishing thread; dropping it lets the queued work finish and waits for it.
pub struct Offload {
    jobs: Option<crossbeam_channel::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Offload {
    /// Starts the thread; it inherits the calling thread's niceness (the node's).
    pub fn start() -> std::io::Result<Self> {
        let (jobs, queue) = crossbeam_channel::unbounded::<Job>();
        let thread = std::thread::Builder::new()
            .name("frames".into())
            .spawn(move || {
                for job in queue {
                    // One output's failure must not take the others' thread with it.
                    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
                        log::error!("a camera or lidar message failed to go out (see above)");
                    }
                }
            })?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    fn run(&self, job: Job) {
        if let Some(jobs) = &self.jobs
            && let Err(unsent) = jobs.send(job)
        {
            // The thread is gone: the work is done here instead.
            (unsent.into_inner())();
        }
    }
}

impl Drop for Offload {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What an output publishes with, shared with the publishing thread.
pub struct Wire<W> {
    inner: Arc<Mutex<Option<W>>>,
    busy: Arc<AtomicBool>,
}

impl<W: Send + 'static> Wire<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Some(inner))),
            busy: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether work handed over is still going on.
    pub fn busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// What it holds, while no work is going on (None while busy, or once retired): the
    /// node's thread reads its publishers' subscriber counts through it.
    pub fn idle(&self) -> Option<MutexGuard<'_, Option<W>>> {
        if self.busy() {
            return None;
        }
        self.inner.try_lock().ok()
    }

    /// Runs `work` on what it holds, on `offload`'s thread (here without one). False, and
    /// nothing done, while earlier work is still going on.
    pub fn send(
        &self,
        offload: Option<&Offload>,
        work: impl FnOnce(&mut W) + Send + 'static,
    ) -> bool {
        if self.busy.swap(true, Ordering::AcqRel) {
            return false;
        }
        let (inner, busy) = (self.inner.clone(), self.busy.clone());
        let job = move || {
            // Cleared however the work ends.
            struct Done(Arc<AtomicBool>);
            impl Drop for Done {
                fn drop(&mut self) {
                    self.0.store(false, Ordering::Release);
                }
            }
            let _done = Done(busy);
            let mut held = inner.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(held) = held.as_mut() {
                work(held);
            }
        };
        match offload {
            Some(offload) => offload.run(Box::new(job)),
            None => job(),
        }
        true
    }

    /// What it holds, once work going on is done (a retired output hands its publishers
    /// back); work still queued then finds nothing and does nothing.
    pub fn take(&self) -> Option<W> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_goes_out_on_the_thread_one_at_a_time_and_the_holdings_come_back() {
        let offload = Offload::start().unwrap();
        let wire = Wire::new(Vec::<u32>::new());
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let wait = Mutex::new(wait);
        assert!(wire.send(Some(&offload), move |v| {
            let _ = wait.lock().unwrap().recv();
            v.push(1);
        }));
        // The first is still going: the second is refused and nothing is read meanwhile.
        assert!(wire.busy());
        assert!(!wire.send(Some(&offload), |v| v.push(2)));
        assert!(wire.idle().is_none());
        go.send(()).unwrap();
        while wire.busy() {
            std::thread::yield_now();
        }
        assert_eq!(wire.idle().unwrap().as_deref(), Some(&[1][..]));
        assert!(wire.send(None, |v| v.push(3)));
        assert_eq!(wire.take(), Some(vec![1, 3]));
        // Retired: later work finds nothing.
        assert!(wire.send(Some(&offload), |v| v.push(4)));
        drop(offload);
        assert_eq!(wire.take(), None);
    }
}
