//! Snapshots: the whole state captured and restored, in memory under a name or in a file.
use crate::sim::SimHandle;
use crate::sim::api::rejected;
use crate::sim::commands::{Operation, OperationDone, OperationError, OperationResult};
use crate::sim::physics::Physics;
use crate::sim::snapshot::{STATE_SPEC, Snapshot};
use crate::sim::world::WorldGeneration;
use std::path::Path;

impl SimHandle {
    /// An empty full snapshot (integration state and controllers, what `restore` takes),
    /// sized for the current model.
    pub fn empty_snapshot(&self) -> Box<Snapshot> {
        Self::empty_snapshot_of(&self.world())
    }

    fn empty_snapshot_of(world: &WorldGeneration) -> Box<Snapshot> {
        let (physics, controllers) = world.snapshot_sizes;
        let mut snapshot = Snapshot::sized(world.fingerprint, physics, controllers);
        snapshot.generation = world.number;
        Box::new(snapshot)
    }

    /// Captures the full state (MuJoCo integration state and controllers).
    pub fn capture(&self) -> Result<Box<Snapshot>, OperationError> {
        let world = self.world();
        let done = self.request_in(
            world.number,
            Operation::CaptureSnapshot(Self::empty_snapshot_of(&world)),
        )?;
        done.snapshot.ok_or(OperationError::Stopped)
    }

    pub fn restore(&self, snapshot: Box<Snapshot>) -> OperationResult {
        self.request(Operation::RestoreSnapshot(snapshot))
    }

    /// Keeps a snapshot of the current state in memory under `name`.
    pub fn save_named_snapshot(&self, name: &str) -> Result<u64, OperationError> {
        let snapshot = self.capture()?;
        let step = snapshot.step;
        if let Ok(mut named) = self.shared.named_snapshots.lock() {
            named.insert(name.to_string(), snapshot);
        }
        Ok(step)
    }

    pub fn restore_named_snapshot(&self, name: &str) -> OperationResult {
        let snapshot = self
            .shared
            .named_snapshots
            .lock()
            .ok()
            .and_then(|named| named.get(name).cloned())
            .ok_or_else(|| self.refuse(format!("no snapshot named '{name}'")))?;
        self.restore(snapshot)
    }

    pub fn snapshot_names(&self) -> Vec<String> {
        self.shared
            .named_snapshots
            .lock()
            .map(|n| n.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Captures the state and writes it to `path` atomically.
    pub fn save_snapshot_file(&self, path: &Path) -> Result<OperationDone, OperationError> {
        let snapshot = self.capture()?;
        snapshot
            .save(path)
            .map_err(|e| self.refuse(format!("{}: {e}", path.display())))?;
        Ok(OperationDone {
            step: snapshot.step,
            time: 0.0,
            snapshot: None,
        })
    }

    /// Loads a snapshot file and restores it; a file from another model is refused.
    pub fn load_snapshot_file(&self, path: &Path) -> OperationResult {
        let snapshot =
            Snapshot::load(path).map_err(|e| rejected(format!("{}: {e}", path.display())))?;
        self.restore(Box::new(snapshot)).map_err(|e| match e {
            OperationError::Stopped => e,
            refused => OperationError::Invalid(format!("{}: {refused}", path.display())),
        })
    }
}

impl Physics {
    /// Fills `snapshot` with the integration state and the controllers' state.
    pub(in crate::sim) fn capture(&mut self, mut snapshot: Box<Snapshot>) -> OperationResult {
        let nv = self.data.model().ffi().nv as usize;
        let physics_len = self.data.model().state_size(STATE_SPEC);
        if snapshot.physics.len() != physics_len
            || snapshot.controllers.len() != nv + self.controllers.state_len()
        {
            return Err(OperationError::SnapshotBuffer);
        }
        self.data.read_state_into(STATE_SPEC, &mut snapshot.physics);
        // The bias force the controllers use next comes from the last step's forward
        // pass, not from the state: keep it so a restore computes the same control.
        snapshot.controllers[..nv].copy_from_slice(self.data.qfrc_bias());
        let mut at = nv;
        for robot in &self.controllers.robots {
            let len = robot.state_len();
            robot.save_state(&mut snapshot.controllers[at..at + len]);
            at += len;
        }
        snapshot.fingerprint = self.world.fingerprint;
        snapshot.generation = self.world.number;
        snapshot.step = self.step;
        Ok(OperationDone {
            snapshot: Some(snapshot),
            ..self.done()
        })
    }

    pub(in crate::sim) fn restore(
        &mut self,
        snapshot: &crate::sim::snapshot::Snapshot,
    ) -> Result<(), OperationError> {
        self.guard.forget();
        if snapshot.generation != self.world.number {
            return Err(OperationError::OtherWorld {
                snapshot: snapshot.generation,
                now: self.world.number,
            });
        }
        if snapshot.fingerprint != self.world.fingerprint {
            return Err(OperationError::OtherModel {
                snapshot: snapshot.fingerprint,
                model: self.world.fingerprint,
            });
        }
        let nv = self.data.model().ffi().nv as usize;
        if snapshot.physics.len() != self.data.model().state_size(STATE_SPEC)
            || snapshot.controllers.len() != nv + self.controllers.state_len()
        {
            return Err(OperationError::SnapshotSizes);
        }
        if let Err(e) = self.data.set_state(&snapshot.physics, STATE_SPEC) {
            return Err(OperationError::Mujoco(e));
        }
        let mut at = nv;
        for r in 0..self.controllers.robots.len() {
            let len = self.controllers.robots[r].state_len();
            let old = self.controllers.robots[r].load_state(&snapshot.controllers[at..at + len]);
            self.trash_trajectory(old);
            at += len;
        }
        self.clear_transients();
        self.republish();
        self.data
            .qfrc_bias_mut()
            .copy_from_slice(&snapshot.controllers[..nv]);
        Ok(())
    }
}
