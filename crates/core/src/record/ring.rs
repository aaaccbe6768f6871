//! A single-producer single-consumer ring of fixed-length rows: the physics thread pushes a
//! row (time, qpos, qvel) per step without waiting or allocating; the recorder thread pops
//! them. When the consumer falls behind, rows are dropped and counted; in a lossless run
//! (fast, stepped) the producer waits for room instead, as for the topics' samples.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest the producer waits for room in a lossless run: then the consumer is taken to
/// be stuck, and rows are dropped without waiting until it takes one again.
const LOSSLESS_PATIENCE: Duration = Duration::from_secs(2);

pub struct RecordRing {
    /// An eventfd written after each push, so the consumer can sleep in poll(2) and wake at
    /// once (the legacy publisher); None: the consumer polls on its own schedule.
    wake_fd: Option<std::os::fd::OwnedFd>,
    row_len: usize,
    capacity: u64,
    cells: Box<[AtomicU64]>,
    /// Rows pushed so far (only the producer writes it).
    head: AtomicU64,
    /// Rows popped so far (only the consumer writes it).
    tail: AtomicU64,
    dropped: AtomicU64,
    /// The producer's patience ran out; cleared when the consumer takes a row.
    stalled: AtomicBool,
}

impl RecordRing {
    pub fn new(row_len: usize, capacity: usize) -> Self {
        Self {
            wake_fd: None,
            row_len,
            capacity: capacity as u64,
            cells: (0..row_len * capacity).map(|_| AtomicU64::new(0)).collect(),
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            stalled: AtomicBool::new(false),
        }
    }

    /// A ring whose pushes also signal an eventfd (non-blocking: a push never waits).
    pub fn with_wakeup(row_len: usize, capacity: usize) -> std::io::Result<Self> {
        // SAFETY: eventfd has no preconditions; the result is checked before use.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor that nothing else owns.
        let owned = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        Ok(Self {
            wake_fd: Some(owned),
            ..Self::new(row_len, capacity)
        })
    }

    /// The eventfd to poll for new rows, if the ring has one.
    pub fn wake_fd(&self) -> Option<std::os::fd::RawFd> {
        self.wake_fd.as_ref().map(std::os::fd::AsRawFd::as_raw_fd)
    }

    /// Consumer: clears the eventfd before draining.
    pub fn clear_wakeup(&self) {
        if let Some(fd) = self.wake_fd() {
            let mut count = 0u64;
            // SAFETY: reads 8 bytes into a u64 from our non-blocking eventfd.
            unsafe { libc::read(fd, (&mut count as *mut u64).cast(), 8) };
        }
    }

    pub fn row_len(&self) -> usize {
        self.row_len
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Producer: pushes one row as `push` does; `lossless`: a full ring is first waited on
    /// (never for longer than `LOSSLESS_PATIENCE` in a row) rather than dropping a row.
    pub fn push_or_wait(&self, parts: &[&[f64]], lossless: bool) -> bool {
        if lossless {
            self.wait_for_room();
        }
        self.push(parts)
    }

    fn wait_for_room(&self) {
        let since = Instant::now();
        let mut spins = 0u32;
        while self.head.load(Ordering::Relaxed) - self.tail.load(Ordering::Acquire) >= self.capacity
        {
            if self.stalled.load(Ordering::Relaxed) {
                return;
            }
            if since.elapsed() > LOSSLESS_PATIENCE {
                self.stalled.store(true, Ordering::Relaxed);
                return;
            }
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// Producer: pushes one row made of the given parts (their lengths sum to `row_len`).
    pub fn push(&self, parts: &[&[f64]]) -> bool {
        let head = self.head.load(Ordering::Relaxed);
        if head - self.tail.load(Ordering::Acquire) >= self.capacity {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let start = (head % self.capacity) as usize * self.row_len;
        let mut cells = self.cells[start..start + self.row_len].iter();
        for part in parts {
            // The part drives the zip, so no cell is skipped when it ends.
            for (value, cell) in part.iter().zip(cells.by_ref()) {
                cell.store(value.to_bits(), Ordering::Relaxed);
            }
        }
        self.head.store(head + 1, Ordering::Release);
        if let Some(fd) = self.wake_fd() {
            let one = 1u64;
            // SAFETY: writes 8 bytes to our non-blocking eventfd; it never waits (a full
            // counter only fails the write, and the consumer is awake then anyway).
            unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
        }
        true
    }

    /// Consumer: copies the oldest row into `out`; false when empty.
    pub fn pop(&self, out: &mut [f64]) -> bool {
        let tail = self.tail.load(Ordering::Relaxed);
        if tail == self.head.load(Ordering::Acquire) {
            return false;
        }
        let start = (tail % self.capacity) as usize * self.row_len;
        for (value, cell) in out.iter_mut().zip(&self.cells[start..start + self.row_len]) {
            *value = f64::from_bits(cell.load(Ordering::Relaxed));
        }
        self.tail.store(tail + 1, Ordering::Release);
        self.stalled.store(false, Ordering::Relaxed);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_with_drop_when_full() {
        let ring = RecordRing::new(3, 2);
        assert!(ring.push(&[&[1.0], &[2.0, 3.0]]));
        assert!(ring.push(&[&[4.0, 5.0, 6.0]]));
        assert!(!ring.push(&[&[7.0, 8.0, 9.0]]), "full");
        assert_eq!(ring.dropped(), 1);
        let mut row = [0.0; 3];
        assert!(ring.pop(&mut row));
        assert_eq!(row, [1.0, 2.0, 3.0]);
        assert!(ring.pop(&mut row));
        assert_eq!(row, [4.0, 5.0, 6.0]);
        assert!(!ring.pop(&mut row));
    }

    #[test]
    fn a_lossless_push_waits_for_the_consumer() {
        let ring = Arc::new(RecordRing::new(1, 2));
        assert!(ring.push(&[&[1.0]]) && ring.push(&[&[2.0]]));
        let consumer = {
            let ring = ring.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                let mut row = [0.0];
                assert!(ring.pop(&mut row));
                row[0]
            })
        };
        assert!(
            ring.push_or_wait(&[&[3.0]], true),
            "room once the consumer took a row"
        );
        assert_eq!(consumer.join().unwrap(), 1.0);
        assert_eq!(ring.dropped(), 0);
    }
}
