//! What a controller the controller manager runs shares with the task that does its work (a
//! subscription, an action server): whether it may act, and on which joints. The manager
//! writes it; the tasks read it.
use std::cell::{Cell, RefCell};

#[derive(Default)]
pub struct Slot {
    pub(super) active: Cell<bool>,
    pub(super) joints: RefCell<Vec<String>>,
}

impl Slot {
    /// Whether the manager has the controller active.
    pub fn active(&self) -> bool {
        self.active.get()
    }
}
