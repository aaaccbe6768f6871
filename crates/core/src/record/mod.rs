//! Record and replay: the physics thread pushes (time, qpos, qvel) rows into a ring; a
//! recorder thread writes them as CSV. Recorded or external CSV files load into a
//! `Playback` that the physics thread plays kinematically. `RecordingSwitch` is how the
//! adapters start and stop the streams' MCAP recording.
mod csv;
mod ring;
mod switch;

pub use csv::{ColumnMap, CsvError, Playback, column_names, header, parse, write_row};
pub use ring::RecordRing;
pub use switch::{RecordingReport, RecordingSwitch, SwitchError};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// How often the recorder hands what it has written to the system: a process killed at any
/// moment leaves every row up to its last flush in the file.
pub const FLUSH_PERIOD: std::time::Duration = std::time::Duration::from_millis(500);

/// Rows the ring holds before the recorder thread must have written them (8 s at 1 kHz).
pub const RING_ROWS: usize = 8192;

/// A CSV recording in progress: the writer thread and the ring it drains.
pub struct Recording {
    pub ring: Arc<RecordRing>,
    stop: Arc<AtomicBool>,
    writer: JoinHandle<std::io::Result<u64>>,
    pub path: PathBuf,
    /// The value columns of the header: a world change maps them into the new world.
    pub columns: Vec<String>,
}

/// What a finished recording wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordingSummary {
    pub rows: u64,
    pub dropped: u64,
}

impl Recording {
    /// Creates the file, writes the header (`time`, then `columns`) and starts the writer
    /// thread.
    pub fn start(path: &Path, columns: Vec<String>) -> std::io::Result<Self> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(file, "{}", header(&columns))?;
        file.flush()?;
        let ring = Arc::new(RecordRing::new(1 + columns.len(), RING_ROWS));
        let stop = Arc::new(AtomicBool::new(false));
        let (reader, stopping) = (ring.clone(), stop.clone());
        let writer = std::thread::Builder::new()
            .name("recorder".into())
            .spawn(move || {
                let mut row = vec![0.0; reader.row_len()];
                let mut text = String::new();
                let mut rows = 0;
                let mut flushed = std::time::Instant::now();
                loop {
                    let finishing = stopping.load(Ordering::Acquire);
                    while reader.pop(&mut row) {
                        write_row(&mut text, &row);
                        rows += 1;
                        if text.len() > 1 << 16 {
                            file.write_all(text.as_bytes())?;
                            text.clear();
                        }
                    }
                    // What a killed process leaves: every row up to the last flush.
                    if flushed.elapsed() >= FLUSH_PERIOD {
                        file.write_all(text.as_bytes())?;
                        text.clear();
                        file.flush()?;
                        flushed = std::time::Instant::now();
                    }
                    if finishing {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                file.write_all(text.as_bytes())?;
                file.flush()?;
                Ok(rows)
            })?;
        Ok(Self {
            ring,
            stop,
            writer,
            path: path.to_path_buf(),
            columns,
        })
    }

    /// Drains the ring, closes the file. Call after the physics thread stopped pushing.
    pub fn finish(self) -> std::io::Result<RecordingSummary> {
        self.stop.store(true, Ordering::Release);
        let rows = self
            .writer
            .join()
            .map_err(|_| std::io::Error::other("the recorder thread panicked"))??;
        Ok(RecordingSummary {
            rows,
            dropped: self.ring.dropped(),
        })
    }
}
