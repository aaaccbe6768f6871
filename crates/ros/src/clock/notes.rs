//! What the /clock thread has to say, written by a thread of its own. Formatting a line
//! allocates, and writing it takes the log's locks; either can wait on a thread of lower
//! priority. In a Go1 soak with every core busy, the line about a 21.9 ms gap held the clock
//! thread 3.7 s: its timestamp came 3.7 s after the gap it reported, and /clock was silent
//! all that time. So the clock thread only pushes a note onto a queue made in advance, which
//! never waits and never allocates (a full queue drops the note), and the writer thread
//! takes the notes off every `POLL`.
use super::super::Error;
use crate::rate_limit::RateLimiter;
use crossbeam_queue::ArrayQueue;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Notes held before new ones are dropped.
const QUEUE: usize = 64;
/// How often the writer takes the notes off: a line comes at most this late.
const POLL: Duration = Duration::from_millis(100);

/// One thing the clock thread says, with its figures.
#[derive(Debug)]
pub(super) enum Note {
    /// A message followed the last by more than ten periods while the simulation ran.
    Gap {
        interval: Duration,
        /// Seconds of sim time between the two messages.
        sim_moved: f64,
        /// How late the thread woke for the message.
        late: Duration,
        /// How long the send of the message before took.
        last_send: Duration,
    },
    SpareFailed(Error),
    /// The spare took over after this many remote endpoints came and went.
    TookOver {
        gone: u32,
    },
    /// `WINDOW` messages wait for acknowledgements: the spare took over, or (without one)
    /// the writer was made anew.
    WindowFull {
        handed_over: bool,
    },
    /// A new participant did not find `missing` readers in `waited`.
    GaveUp {
        missing: usize,
        waited: Duration,
        renew_after: u32,
    },
    NodeFailed(Error),
    WriterFailed(Error),
}

/// The clock thread's end of the queue.
#[derive(Clone)]
pub(super) struct Notes(Arc<ArrayQueue<Note>>);

impl Notes {
    /// Queues `note`; drops it when the queue is full.
    pub fn say(&self, note: Note) {
        let _ = self.0.push(note);
    }
}

/// The writer thread; dropping it writes what is queued and ends it.
pub(super) struct NoteWriter {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for NoteWriter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts the writer (at the priority of the thread that calls this, not the clock's).
pub(super) fn start() -> std::io::Result<(Notes, NoteWriter)> {
    let queue = Arc::new(ArrayQueue::new(QUEUE));
    let stop = Arc::new(AtomicBool::new(false));
    let (notes, stopping) = (queue.clone(), stop.clone());
    let thread = std::thread::Builder::new()
        .name("ros-clock-log".into())
        .spawn(move || {
            let lines = RateLimiter::default();
            loop {
                // Read before draining: notes pushed before a stop are all written.
                let last = stopping.load(Ordering::Relaxed);
                while let Some(note) = notes.pop() {
                    write(note, &lines);
                }
                if last {
                    return;
                }
                std::thread::sleep(POLL);
            }
        })?;
    Ok((
        Notes(queue),
        NoteWriter {
            stop,
            thread: Some(thread),
        },
    ))
}

fn write(note: Note, lines: &RateLimiter) {
    match note {
        Note::Gap {
            interval,
            sim_moved,
            late,
            last_send,
        } => lines.warn(
            "clock gap",
            &format!(
                "/clock: {:.1} ms since the last message, sim time moved {:.1} ms; this turn \
                 was {:.1} ms late, the last send took {:.2} ms",
                interval.as_secs_f64() * 1e3,
                sim_moved * 1e3,
                late.as_secs_f64() * 1e3,
                last_send.as_secs_f64() * 1e3,
            ),
        ),
        Note::SpareFailed(e) => {
            log::warn!("/clock: a spare DDS participant could not be made: {e}")
        }
        Note::TookOver { gone } => log::info!(
            "/clock: the spare DDS participant took over after {gone} remote readers and \
             writers came and went"
        ),
        Note::WindowFull { handed_over: true } => log::warn!(
            "/clock: {} messages are held for readers' acknowledgements (a reader that \
             acknowledges nothing: a stopped process, or acknowledgements lost); the spare DDS \
             participant took over",
            super::WINDOW
        ),
        Note::WindowFull { handed_over: false } => log::warn!(
            "/clock: {} messages are held for readers' acknowledgements and no spare \
             participant is ready; the writer was made anew",
            super::WINDOW
        ),
        Note::GaveUp {
            missing,
            waited,
            renew_after,
        } => log::warn!(
            "/clock: a new DDS participant did not find {missing} of the current one's readers \
             in {} s; the current one goes on sending, renewal is tried again after \
             {renew_after} more remote readers and writers come and go",
            waited.as_secs()
        ),
        Note::NodeFailed(e) => {
            log::warn!("/clock: its node could not be made on the new participant: {e}")
        }
        Note::WriterFailed(e) => {
            log::warn!("/clock: a full writer could not be made anew: {e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_queued_before_the_writer_ends_are_all_written() {
        let (notes, writer) = start().unwrap();
        // More than the queue holds, faster than the writer's rounds: some are dropped,
        // and pushing them never waits.
        for gone in 0..(QUEUE * 4) as u32 {
            notes.say(Note::TookOver { gone });
        }
        drop(writer);
        assert!(notes.0.is_empty(), "notes left after the writer ended");
    }
}
