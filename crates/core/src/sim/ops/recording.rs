//! Recording and playback: rows tapped from each step into a ring (a recorder, the legacy
//! publisher) and rows played back kinematically.
use crate::record::{self, Playback, RecordRing, Recording, RecordingSummary};
use crate::sim::SimHandle;
use crate::sim::commands::{Operation, OperationError, OperationResult, Trash};
use crate::sim::physics::{ActivePlayback, Physics};
use crate::sim::tap::{Tap, TapLayout};
use std::path::Path;
use std::sync::Arc;

impl SimHandle {
    /// Starts recording qpos and qvel of every step to a CSV file.
    pub fn start_recording(&self, path: &Path) -> OperationResult {
        let world = self.world();
        let recording = Recording::start(path, record::column_names(&world.model))
            .map_err(|e| self.refuse(format!("{}: {e}", path.display())))?;
        let ring = recording.ring.clone();
        let mut slot = self
            .shared
            .recording
            .lock()
            .map_err(|_| self.refuse("recorder state poisoned"))?;
        if slot.is_some() {
            return Err(self.refuse("a recording is already running"));
        }
        let done = self.request_in(
            world.number,
            Operation::Tap {
                ring,
                layout: TapLayout::Recording,
            },
        )?;
        *slot = Some(recording);
        Ok(done)
    }

    /// Stops the recording and waits until every row is in the file.
    pub fn stop_recording(&self) -> Result<RecordingSummary, OperationError> {
        let recording = self
            .shared
            .recording
            .lock()
            .map_err(|_| self.refuse("recorder state poisoned"))?
            .take()
            .ok_or_else(|| self.refuse("no recording is running"))?;
        self.request(Operation::Untap(recording.ring.clone()))?;
        let path = recording.path.display().to_string();
        recording
            .finish()
            .map_err(|e| self.refuse(format!("{path}: {e}")))
    }

    /// Loads a CSV trajectory (recorded, or external with joint names with or without the
    /// robot prefix) and plays it back kinematically; the simulation pauses at its end.
    pub fn play_csv(&self, path: &Path) -> OperationResult {
        let text = std::fs::read_to_string(path)
            .map_err(|e| self.refuse(format!("{}: {e}", path.display())))?;
        let world = self.world();
        let rows = record::parse(&text, &world.model, &world.robots)
            .map_err(|m| self.refuse(format!("{}: {m}", path.display())))?;
        self.request_in(world.number, Operation::Playback(Box::new(rows)))
    }

    /// Plays `rows` back kinematically (made for the current world's model).
    pub fn play(&self, rows: record::Playback) -> OperationResult {
        self.request_in(self.world().number, Operation::Playback(Box::new(rows)))
    }

    pub fn stop_playback(&self) -> OperationResult {
        self.request(Operation::StopPlayback)
    }
}

impl Physics {
    /// Starts pushing a row per step into `ring`.
    pub(in crate::sim) fn tap(
        &mut self,
        ring: Arc<RecordRing>,
        layout: TapLayout,
    ) -> Result<(), OperationError> {
        let f = self.data.model().ffi();
        let row = layout.row_len(f);
        if ring.row_len() != row {
            return Err(OperationError::TapRow { layout, row });
        }
        let Some(slot) = self.taps.iter_mut().find(|t| t.is_none()) else {
            self.trash(Trash::Ring(ring));
            return Err(OperationError::TapsFull);
        };
        *slot = Some(Tap {
            ring,
            layout,
            columns: None,
        });
        Ok(())
    }

    /// Stops pushing rows into `ring`.
    pub(in crate::sim) fn untap(&mut self, ring: Arc<RecordRing>) -> Result<(), OperationError> {
        for slot in &mut self.taps {
            if slot.as_ref().is_some_and(|t| Arc::ptr_eq(&t.ring, &ring))
                && let Some(old) = slot.take()
            {
                let _ = self.shared.trash.push(Trash::Tap(old));
            }
        }
        self.trash(Trash::Ring(ring));
        Ok(())
    }

    /// Kinematic playback of recorded rows.
    pub(in crate::sim) fn playback(&mut self, rows: Box<Playback>) -> Result<(), OperationError> {
        let model = self.data.model();
        let (nq, nv) = (model.ffi().nq as usize, model.ffi().nv as usize);
        let fits = !rows.times.is_empty()
            && rows.qpos_index.iter().all(|i| *i < nq)
            && rows.qvel_index.iter().all(|i| *i < nv)
            && rows.qpos.len() == rows.times.len() * rows.qpos_index.len()
            && rows.qvel.len() == rows.times.len() * rows.qvel_index.len();
        if !fits {
            self.trash(Trash::Playback(rows));
            return Err(OperationError::PlaybackRows);
        }
        let start_time = self.data.time();
        if let Some(old) = self.playback.replace(ActivePlayback {
            rows,
            start_time,
            played: 0,
        }) {
            self.trash(Trash::Playback(old.rows));
        }
        Ok(())
    }
}
