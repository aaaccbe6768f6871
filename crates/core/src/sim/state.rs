//! The latest-state snapshot: the physics thread publishes after every step into one of a few
//! preallocated slots, each guarded by a sequence number (a seqlock). Readers copy the newest
//! slot and retry only if the writer lapped them mid-copy; the writer never waits for a reader.
//! Values are stored as `AtomicU64` bit patterns so concurrent access is well defined.
use mujoco_rs::prelude::*;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

/// Array sizes of one snapshot, from the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateLayout {
    pub nq: usize,
    pub nv: usize,
    pub na: usize,
    pub nu: usize,
    pub nsensordata: usize,
    pub nbody: usize,
    /// Mocap bodies (their poses, which rendering and ray casting need).
    pub nmocap: usize,
    /// How many contacts each snapshot carries at most (0: none).
    pub ncontact: usize,
}

impl StateLayout {
    pub fn of(model: &MjModel) -> Self {
        let f = model.ffi();
        let n = |v: i64| v.max(0) as usize;
        Self {
            nq: n(f.nq),
            nv: n(f.nv),
            na: n(f.na),
            nu: n(f.nu),
            nsensordata: n(f.nsensordata),
            nbody: n(f.nbody),
            nmocap: n(f.nmocap),
            ncontact: 0,
        }
    }

    /// The same layout, carrying up to `capacity` contacts.
    pub fn with_contacts(self, capacity: usize) -> Self {
        Self {
            ncontact: capacity,
            ..self
        }
    }

    /// step, time, then the arrays in the order of `StateSnapshot`.
    pub(super) fn len(&self) -> usize {
        2 + self.nq
            + 3 * self.nv
            + self.na
            + 2 * self.nu
            + self.nsensordata
            + 7 * self.nbody
            + 7 * self.nmocap
            + 1
            + CONTACT_VALUES * self.ncontact
    }
}

/// One copy of the simulation state, as readers see it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateSnapshot {
    /// Physics steps since start (or since the last reset of the step counter).
    pub step: u64,
    /// Simulation time in seconds.
    pub time: f64,
    pub qpos: Vec<f64>,
    pub qvel: Vec<f64>,
    pub qacc: Vec<f64>,
    /// Actuator force on each dof (the `effort` of joint states).
    pub qfrc_actuator: Vec<f64>,
    pub act: Vec<f64>,
    pub ctrl: Vec<f64>,
    pub actuator_force: Vec<f64>,
    pub sensordata: Vec<f64>,
    /// Body positions in the world frame, x y z per body.
    pub xpos: Vec<f64>,
    /// Body orientations in the world frame, MuJoCo order w x y z per body.
    pub xquat_wxyz: Vec<f64>,
    /// Mocap body positions (x y z) and orientations (w x y z), per mocap body.
    pub mocap_pos: Vec<f64>,
    pub mocap_quat: Vec<f64>,
    /// The number of contacts MuJoCo found (more than are exported when the list is longer
    /// than the layout's room), then per exported contact the values of `ExportedContact`
    /// in its order, in the world frame.
    pub contacts: Vec<f64>,
}

/// Values per exported contact: position (3), frame (9), force (6), sides (2), distance.
pub const CONTACT_VALUES: usize = 21;

/// One side of a contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collider {
    Geom(usize),
    Flex(usize),
}

impl Collider {
    /// The side's value in the state: a geom's id, or a flex's id as `-(id + 1)`.
    fn value(geom: i32, flex: i32) -> f64 {
        if geom >= 0 {
            geom as f64
        } else {
            -(flex.max(0) as f64) - 1.0
        }
    }

    fn from_value(v: f64) -> Self {
        if v >= 0.0 {
            Self::Geom(v as usize)
        } else {
            Self::Flex((-v - 1.0) as usize)
        }
    }
}

/// One contact of MuJoCo's contact list, as the state carries it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExportedContact {
    /// The contact point, in the world frame.
    pub position: [f64; 3],
    /// The contact frame's axes in rows, in the world frame: the normal (from the first
    /// geom to the second), then the two tangents.
    pub frame: [f64; 9],
    /// The force and torque between the geoms in the contact frame (`mj_contactForce`):
    /// what the first geom exerts on the second, the normal force first.
    pub force: [f64; 6],
    /// The two sides: geoms, or flexes.
    pub sides: [Collider; 2],
    /// Signed distance between the geoms; negative when they penetrate.
    pub distance: f64,
}

impl ExportedContact {
    pub fn normal(&self) -> [f64; 3] {
        [self.frame[0], self.frame[1], self.frame[2]]
    }

    /// A contact-frame vector (force or torque) in the world frame.
    pub fn to_world(&self, v: [f64; 3]) -> [f64; 3] {
        let f = &self.frame;
        std::array::from_fn(|i| v[0] * f[i] + v[1] * f[3 + i] + v[2] * f[6 + i])
    }

    fn from_values(c: &[f64]) -> Self {
        Self {
            position: [c[0], c[1], c[2]],
            frame: std::array::from_fn(|i| c[3 + i]),
            force: std::array::from_fn(|i| c[12 + i]),
            sides: [Collider::from_value(c[18]), Collider::from_value(c[19])],
            distance: c[20],
        }
    }
}

impl StateSnapshot {
    /// The exported contacts.
    pub fn contacts(&self) -> impl Iterator<Item = ExportedContact> + '_ {
        self.contacts[1.min(self.contacts.len())..]
            .chunks_exact(CONTACT_VALUES)
            .take(self.contacts_found())
            .map(ExportedContact::from_values)
    }

    /// How many contacts MuJoCo found in this state; more than `contacts()` gives when the
    /// layout had no room for all.
    pub fn contacts_found(&self) -> usize {
        self.contacts.first().map_or(0, |c| *c as usize)
    }

    /// How many contacts found were not exported, for lack of room.
    pub fn contacts_left_out(&self) -> usize {
        let room = self.contacts.len().saturating_sub(1) / CONTACT_VALUES;
        self.contacts_found().saturating_sub(room)
    }
}

impl StateSnapshot {
    pub fn with_layout(layout: &StateLayout) -> Self {
        Self {
            step: 0,
            time: 0.0,
            qpos: vec![0.0; layout.nq],
            qvel: vec![0.0; layout.nv],
            qacc: vec![0.0; layout.nv],
            qfrc_actuator: vec![0.0; layout.nv],
            act: vec![0.0; layout.na],
            ctrl: vec![0.0; layout.nu],
            actuator_force: vec![0.0; layout.nu],
            sensordata: vec![0.0; layout.nsensordata],
            xpos: vec![0.0; 3 * layout.nbody],
            xquat_wxyz: vec![0.0; 4 * layout.nbody],
            mocap_pos: vec![0.0; 3 * layout.nmocap],
            mocap_quat: vec![0.0; 4 * layout.nmocap],
            contacts: vec![0.0; 1 + CONTACT_VALUES * layout.ncontact],
        }
    }

    /// Resizes the arrays to `layout` when they are of another world.
    pub fn fit(&mut self, layout: &StateLayout) {
        if self.qpos.len() != layout.nq
            || self.xquat_wxyz.len() != 4 * layout.nbody
            || self.contacts.len() != 1 + CONTACT_VALUES * layout.ncontact
        {
            *self = StateSnapshot::with_layout(layout);
        }
    }

    /// Becomes a copy of `other`, reusing its own arrays (no allocation once sized).
    pub fn copy_from(&mut self, other: &StateSnapshot) {
        self.step = other.step;
        self.time = other.time;
        for (mine, theirs) in self.arrays_mut().into_iter().zip(other.arrays()) {
            mine.clone_from(theirs);
        }
    }

    fn arrays(&self) -> [&Vec<f64>; 13] {
        [
            &self.qpos,
            &self.qvel,
            &self.qacc,
            &self.qfrc_actuator,
            &self.act,
            &self.ctrl,
            &self.actuator_force,
            &self.sensordata,
            &self.xpos,
            &self.xquat_wxyz,
            &self.mocap_pos,
            &self.mocap_quat,
            &self.contacts,
        ]
    }

    fn arrays_mut(&mut self) -> [&mut Vec<f64>; 13] {
        [
            &mut self.qpos,
            &mut self.qvel,
            &mut self.qacc,
            &mut self.qfrc_actuator,
            &mut self.act,
            &mut self.ctrl,
            &mut self.actuator_force,
            &mut self.sensordata,
            &mut self.xpos,
            &mut self.xquat_wxyz,
            &mut self.mocap_pos,
            &mut self.mocap_quat,
            &mut self.contacts,
        ]
    }
}

struct Slot {
    sequence: AtomicU64,
    values: Box<[AtomicU64]>,
}

const SLOTS: usize = 4;

pub struct StateExchange {
    layout: StateLayout,
    slots: [Slot; SLOTS],
    /// Index of the newest complete slot; `usize::MAX` before the first publish.
    latest: AtomicUsize,
}

impl StateExchange {
    pub fn new(layout: StateLayout) -> Self {
        let slot = || Slot {
            sequence: AtomicU64::new(0),
            values: (0..layout.len()).map(|_| AtomicU64::new(0)).collect(),
        };
        Self {
            layout,
            slots: [slot(), slot(), slot(), slot()],
            latest: AtomicUsize::new(usize::MAX),
        }
    }

    pub fn layout(&self) -> &StateLayout {
        &self.layout
    }

    /// Publishes the state of `data`. Only the physics thread calls this; it never blocks and
    /// never allocates.
    pub fn publish(&self, data: &MjData<std::sync::Arc<MjModel>>, step: u64) {
        let latest = self.latest.load(Ordering::Relaxed);
        let index = if latest == usize::MAX {
            0
        } else {
            (latest + 1) % SLOTS
        };
        let slot = &self.slots[index];
        let sequence = slot.sequence.load(Ordering::Relaxed);
        slot.sequence.store(sequence + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        write_state(&slot.values, &self.layout, data, step);
        slot.sequence.store(sequence + 2, Ordering::Release);
        self.latest.store(index, Ordering::Release);
    }

    /// Copies the newest state into `out` (sized by `StateSnapshot::with_layout`). Returns
    /// false before the first publish.
    pub fn read_latest(&self, out: &mut StateSnapshot) -> bool {
        out.fit(&self.layout);
        loop {
            let index = self.latest.load(Ordering::Acquire);
            if index == usize::MAX {
                return false;
            }
            let slot = &self.slots[index];
            let before = slot.sequence.load(Ordering::Acquire);
            if before % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            read_state(&slot.values, out);
            fence(Ordering::Acquire);
            if slot.sequence.load(Ordering::Relaxed) == before {
                return true;
            }
        }
    }
}

/// Writes the state of `data` into `values` (a slot of `layout.len()` cells): step, time, the
/// arrays in the order of `StateSnapshot`, then the contacts. No allocation.
pub(super) fn write_state(
    values: &[AtomicU64],
    layout: &StateLayout,
    data: &MjData<std::sync::Arc<MjModel>>,
    step: u64,
) {
    values[0].store(step, Ordering::Relaxed);
    values[1].store(data.time().to_bits(), Ordering::Relaxed);
    let mut at = 2;
    let arrays: [&[f64]; 12] = [
        data.qpos(),
        data.qvel(),
        data.qacc(),
        data.qfrc_actuator(),
        data.act(),
        data.ctrl(),
        data.actuator_force(),
        data.sensordata(),
        data.xpos().as_flattened(),
        data.xquat().as_flattened(),
        data.mocap_pos().as_flattened(),
        data.mocap_quat().as_flattened(),
    ];
    for array in arrays {
        for (cell, v) in values[at..at + array.len()].iter().zip(array) {
            cell.store(v.to_bits(), Ordering::Relaxed);
        }
        at += array.len();
    }
    // Contacts: how many were found, then as many as fit, each as `ExportedContact` reads it.
    let contacts = data.contact();
    let count = contacts.len().min(layout.ncontact);
    values[at].store((contacts.len() as f64).to_bits(), Ordering::Relaxed);
    at += 1;
    for (k, contact) in contacts.iter().take(count).enumerate() {
        let force = data.contact_force(k);
        let sides = [0, 1].map(|s| Collider::value(contact.geom[s], contact.flex[s]));
        let cells = &values[at + CONTACT_VALUES * k..at + CONTACT_VALUES * (k + 1)];
        let contact_values = contact
            .pos
            .iter()
            .chain(&contact.frame)
            .chain(&force)
            .chain(&sides)
            .chain([&contact.dist]);
        for (cell, v) in cells.iter().zip(contact_values) {
            cell.store(v.to_bits(), Ordering::Relaxed);
        }
    }
}

/// Copies a slot written by `write_state` into `out` (sized for its layout).
pub(super) fn read_state(values: &[AtomicU64], out: &mut StateSnapshot) {
    out.step = values[0].load(Ordering::Relaxed);
    out.time = f64::from_bits(values[1].load(Ordering::Relaxed));
    let mut at = 2;
    for array in out.arrays_mut() {
        for (v, cell) in array.iter_mut().zip(&values[at..]) {
            *v = f64::from_bits(cell.load(Ordering::Relaxed));
        }
        at += array.len();
    }
}
