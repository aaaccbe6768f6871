//! Snapshots: MuJoCo's full integration state (`mj_getState` with mjSTATE_INTEGRATION) plus
//! the controllers' state, so that restoring reproduces what follows bit for bit. Files use a
//! small versioned binary format carrying the model fingerprint, written atomically (a
//! temporary file in the same folder, fsync, rename).
use mujoco_rs::prelude::*;
use std::io::Write;
use std::path::Path;

/// The MuJoCo state elements a snapshot holds.
pub const STATE_SPEC: u32 = mujoco_rs::mujoco_c::mjtState::mjSTATE_INTEGRATION as u32;
const MAGIC: &[u8; 8] = b"MJBSNAP\0";
/// Version 2 added the world generation; version 1 files read as generation 0.
const VERSION: u32 = 2;

#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Fingerprint of the model it was taken from.
    pub fingerprint: u64,
    /// Physics steps counted when it was taken.
    pub step: u64,
    /// The world generation it was taken in (0: the world the node started with).
    pub generation: u64,
    pub physics: Box<[f64]>,
    pub controllers: Box<[f64]>,
}

/// A hash of the model's structure: MuJoCo's compilation signature and the sizes that
/// decide the state layout.
pub fn model_fingerprint(model: &MjModel) -> u64 {
    let f = model.ffi();
    let mut hash = Fnv::new();
    hash.write(&model.signature().to_le_bytes());
    for size in [
        f.nq,
        f.nv,
        f.na,
        f.nu,
        f.nbody,
        f.njnt,
        f.nmocap,
        f.neq,
        f.nuserdata,
        f.nhistory,
    ] {
        hash.write(&size.to_le_bytes());
    }
    hash.finish()
}

/// FNV-1a, for the fingerprint and the file checksum.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Why bytes (or a file) are not a snapshot this build can restore.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("cannot read the file: {0}")]
    Read(String),
    #[error("not a mujoco_bridge snapshot")]
    NotASnapshot,
    #[error("snapshot format version {0}; this build reads version {VERSION}")]
    Version(u32),
    #[error("snapshot holds state elements {0:#x}, expected {STATE_SPEC:#x}")]
    StateElements(u32),
    #[error("snapshot file is truncated or has trailing bytes")]
    Length,
    #[error("snapshot checksum mismatch: the file is corrupt")]
    Checksum,
}

impl Snapshot {
    pub fn sized(fingerprint: u64, physics: usize, controllers: usize) -> Self {
        Self {
            fingerprint,
            step: 0,
            generation: 0,
            physics: vec![0.0; physics].into_boxed_slice(),
            controllers: vec![0.0; controllers].into_boxed_slice(),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + 8 * (self.physics.len() + self.controllers.len()));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&STATE_SPEC.to_le_bytes());
        out.extend_from_slice(&self.fingerprint.to_le_bytes());
        out.extend_from_slice(&self.step.to_le_bytes());
        out.extend_from_slice(&self.generation.to_le_bytes());
        out.extend_from_slice(&(self.physics.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.controllers.len() as u64).to_le_bytes());
        for v in self.physics.iter().chain(self.controllers.iter()) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let mut hash = Fnv::new();
        hash.write(&out);
        out.extend_from_slice(&hash.finish().to_le_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, SnapshotError> {
        if bytes.len() < 12 + 8 || &bytes[..8] != MAGIC {
            return Err(SnapshotError::NotASnapshot);
        }
        let u32_at =
            |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
        let u64_at =
            |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        let version = u32_at(8);
        // Version 1 had no generation field: the lengths follow the step.
        let (header, generation_at) = match version {
            1 => (48, None),
            VERSION => (56, Some(32)),
            other => return Err(SnapshotError::Version(other)),
        };
        if bytes.len() < header + 8 {
            return Err(SnapshotError::Length);
        }
        let lengths_at = header - 16;
        let spec = u32_at(12);
        if spec != STATE_SPEC {
            return Err(SnapshotError::StateElements(spec));
        }
        let (physics_len, controllers_len) =
            (u64_at(lengths_at) as usize, u64_at(lengths_at + 8) as usize);
        let values = physics_len
            .checked_add(controllers_len)
            .and_then(|n| n.checked_mul(8));
        if values.and_then(|v| v.checked_add(header + 8)) != Some(bytes.len()) {
            return Err(SnapshotError::Length);
        }
        let body = bytes.len() - 8;
        let mut hash = Fnv::new();
        hash.write(&bytes[..body]);
        if hash.finish() != u64_at(body) {
            return Err(SnapshotError::Checksum);
        }
        let read = |from: usize, n: usize| -> Box<[f64]> {
            (0..n)
                .map(|i| {
                    f64::from_le_bytes(
                        bytes[from + 8 * i..from + 8 * i + 8]
                            .try_into()
                            .unwrap_or_default(),
                    )
                })
                .collect()
        };
        Ok(Self {
            fingerprint: u64_at(16),
            step: u64_at(24),
            generation: generation_at.map_or(0, u64_at),
            physics: read(header, physics_len),
            controllers: read(header + 8 * physics_len, controllers_len),
        })
    }

    /// Writes the snapshot atomically: readers see the old file or the new one, never half.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        // A fresh file of an unguessable name, made only if it does not exist (no one can
        // plant a link there), in the same folder so that the rename is atomic; a save that
        // fails leaves nothing behind.
        let mut temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)?;
        temp.write_all(&self.encode())?;
        temp.as_file().sync_all()?;
        temp.persist(path).map_err(|e| e.error)?;
        std::fs::File::open(dir)?.sync_all()
    }

    pub fn load(path: &Path) -> Result<Self, SnapshotError> {
        let bytes = std::fs::read(path).map_err(|e| SnapshotError::Read(e.to_string()))?;
        Self::decode(&bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        let snap = Snapshot {
            fingerprint: 42,
            step: 7,
            generation: 3,
            physics: vec![1.0, -2.5].into(),
            controllers: vec![f64::MAX].into(),
        };
        let bytes = snap.encode();
        assert_eq!(Snapshot::decode(&bytes).unwrap(), snap);
        // A version 1 file (no generation) reads as generation 0.
        let mut old = bytes[..32].to_vec();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        old.extend_from_slice(&bytes[40..bytes.len() - 8]);
        let mut hash = Fnv::new();
        hash.write(&old);
        old.extend_from_slice(&hash.finish().to_le_bytes());
        let read = Snapshot::decode(&old).unwrap();
        assert_eq!(
            (read.generation, read.physics.clone()),
            (0, snap.physics.clone())
        );
        let mut bad = bytes.clone();
        bad[60] ^= 1;
        assert_eq!(Snapshot::decode(&bad), Err(SnapshotError::Checksum));
        assert_eq!(
            Snapshot::decode(&bytes[..bytes.len() - 1]),
            Err(SnapshotError::Length)
        );
        assert!(Snapshot::decode(b"hello").is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.snap");
        snap.save(&path).unwrap();
        assert_eq!(Snapshot::load(&path).unwrap(), snap);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
