//! What a controller the controller manager runs shares with the task that does its work (a
//! subscription, an action server): whether it may act, and on which joints. The manager
//! writes it; the tasks read it.
use std::cell::{Cell, RefCell};

#[derive(Default)]
pub struct Slot {
    active: Cell<bool>,
    pub(super) joints: RefCell<Vec<String>>,
    /// What the task does as the controller goes inactive (upstream's `on_deactivate`).
    on_deactivate: RefCell<Option<Box<dyn Fn()>>>,
}

impl Slot {
    /// Whether the manager has the controller active.
    pub fn active(&self) -> bool {
        self.active.get()
    }

    /// Activates or deactivates the controller; deactivating an active one runs its hook.
    pub(super) fn set_active(&self, active: bool) {
        let was = self.active.replace(active);
        if was
            && !active
            && let Some(deactivated) = self.on_deactivate.borrow().as_ref()
        {
            deactivated();
        }
    }

    /// Sets what deactivation does (the task that set it last holds the controller's work).
    pub(super) fn when_deactivated(&self, deactivated: impl Fn() + 'static) {
        *self.on_deactivate.borrow_mut() = Some(Box::new(deactivated));
    }
}
