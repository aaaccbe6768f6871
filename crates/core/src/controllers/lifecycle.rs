//! The controller manager's bookkeeping, as ros2_control keeps it: which controllers are
//! loaded, their lifecycle state (unconfigured, inactive, active), the command interfaces
//! each claims while active, and the rules of load, configure, switch, cleanup and unload.
//! What a controller does is its kind's (`Kind`); this file only decides what may happen.
use super::Interfaces;
use indexmap::IndexMap;

/// A loaded controller's lifecycle state (ros2_control's primary states).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Unconfigured,
    Inactive,
    Active,
}

impl State {
    /// The label `list_controllers` reports.
    pub fn label(self) -> &'static str {
        match self {
            Self::Unconfigured => "unconfigured",
            Self::Inactive => "inactive",
            Self::Active => "active",
        }
    }
}

/// A loaded controller.
#[derive(Debug)]
pub struct Loaded<C> {
    pub type_name: String,
    pub state: State,
    pub interfaces: Interfaces,
    /// What runs it (its kind's), made at load.
    pub running: C,
}

/// Why a request was refused: the text the manager logs (ros2_control answers `ok: false`
/// and logs why).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("controller '{0}' is already loaded")]
    AlreadyLoaded(String),
    #[error("no controller '{0}' is loaded")]
    NotLoaded(String),
    #[error("controller '{name}' is {state}: {action} needs it {needs}")]
    WrongState {
        name: String,
        state: &'static str,
        action: &'static str,
        needs: &'static str,
    },
    #[error("controller '{name}' cannot claim '{interface}', which '{holder}' holds")]
    Claimed {
        name: String,
        interface: String,
        holder: String,
    },
    #[error("controller '{name}' claims '{interface}' twice in one switch")]
    ClaimedTwice { name: String, interface: String },
    #[error(
        "no controller '{0}' is declared (a robot's controllers file, or the manager's parameter {0}.type, gives its type)"
    )]
    NotDeclared(String),
    #[error("controller '{0}' has no {0}.type parameter")]
    NoType(String),
    #[error("{file}: {error}")]
    ParamsFile {
        file: String,
        error: crate::config::controllers::ControllersError,
    },
    #[error(transparent)]
    UnknownType(#[from] crate::controllers::kinds::UnknownType),
    #[error("the world has no robot")]
    NoRobot,
    #[error("controller '{name}': {error}")]
    Configure {
        name: String,
        error: Box<ConfigureError>,
    },
}

/// Why a controller could not be configured.
#[derive(Debug, thiserror::Error)]
pub enum ConfigureError {
    #[error("no world is running")]
    NoWorld,
    #[error("robot '{0}' is gone")]
    RobotGone(String),
    #[error(transparent)]
    Parameters(#[from] crate::config::controller_params::ControllerError),
}

/// How a switch treats a controller it cannot switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strictness {
    /// The whole switch fails.
    Strict,
    /// That controller is left out, the others switch.
    BestEffort,
}

impl Strictness {
    /// SwitchController's `strictness`: 1 best effort; 2 strict, and AUTO / FORCE_AUTO (which
    /// only differ for chained controllers, and none chain here); 0, unset, best effort as
    /// upstream.
    pub fn from_request(value: i32) -> Self {
        match value {
            2..=4 => Self::Strict,
            _ => Self::BestEffort,
        }
    }
}

/// The loaded controllers, by name in load order.
#[derive(Debug)]
pub struct Lifecycle<C> {
    loaded: IndexMap<String, Loaded<C>>,
}

impl<C> Default for Lifecycle<C> {
    fn default() -> Self {
        Self {
            loaded: IndexMap::new(),
        }
    }
}

impl<C> Lifecycle<C> {
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Loaded<C>)> {
        self.loaded.iter()
    }

    pub fn load(&mut self, name: &str, type_name: &str, running: C) -> Result<(), Refusal> {
        if self.loaded.contains_key(name) {
            return Err(Refusal::AlreadyLoaded(name.into()));
        }
        self.loaded.insert(
            name.into(),
            Loaded {
                type_name: type_name.into(),
                state: State::Unconfigured,
                interfaces: Interfaces::default(),
                running,
            },
        );
        Ok(())
    }

    /// The controller `name` in one of `states`, for `action`.
    fn in_state(
        &mut self,
        name: &str,
        action: &'static str,
        needs: &'static str,
        states: &[State],
    ) -> Result<&mut Loaded<C>, Refusal> {
        let loaded = self
            .loaded
            .get_mut(name)
            .ok_or_else(|| Refusal::NotLoaded(name.into()))?;
        if !states.contains(&loaded.state) {
            return Err(Refusal::WrongState {
                name: name.into(),
                state: loaded.state.label(),
                action,
                needs,
            });
        }
        Ok(loaded)
    }

    /// Unconfigured (or inactive, configured again) to inactive, with what `configure`
    /// finds it uses.
    pub fn configure(
        &mut self,
        name: &str,
        configure: impl FnOnce(&mut C) -> Result<Interfaces, ConfigureError>,
    ) -> Result<(), Refusal> {
        let loaded = self.in_state(
            name,
            "configuring",
            "unconfigured or inactive",
            &[State::Unconfigured, State::Inactive],
        )?;
        let interfaces = configure(&mut loaded.running).map_err(|error| Refusal::Configure {
            name: name.to_string(),
            error: Box::new(error),
        })?;
        loaded.interfaces = interfaces;
        loaded.state = State::Inactive;
        Ok(())
    }

    /// Inactive to unconfigured.
    pub fn cleanup(&mut self, name: &str) -> Result<&mut C, Refusal> {
        let loaded = self.in_state(name, "cleanup", "inactive", &[State::Inactive])?;
        loaded.state = State::Unconfigured;
        loaded.interfaces = Interfaces::default();
        Ok(&mut loaded.running)
    }

    /// Removes a controller that is not active; gives back what ran it.
    pub fn unload(&mut self, name: &str) -> Result<C, Refusal> {
        self.in_state(
            name,
            "unloading",
            "unconfigured or inactive",
            &[State::Unconfigured, State::Inactive],
        )?;
        let loaded = self
            .loaded
            .shift_remove(name)
            .ok_or_else(|| Refusal::NotLoaded(name.into()))?;
        Ok(loaded.running)
    }

    /// Removes every controller `gone` says is gone (its robot left the world), whatever
    /// its state; gives back what ran them.
    pub fn drop_where(&mut self, gone: impl Fn(&C) -> bool) -> Vec<C> {
        let names: Vec<String> = self
            .loaded
            .iter()
            .filter(|(_, l)| gone(&l.running))
            .map(|(n, _)| n.clone())
            .collect();
        names
            .iter()
            .filter_map(|n| self.loaded.shift_remove(n))
            .map(|l| l.running)
            .collect()
    }

    /// Decides a switch: the controllers to deactivate (active now) and to activate
    /// (inactive now, their claims free once the deactivated ones let go). Strict: the
    /// first problem refuses the whole switch. Best effort: what cannot switch is left out
    /// and named in the second list.
    pub fn plan_switch(
        &self,
        activate: &[String],
        deactivate: &[String],
        strictness: Strictness,
    ) -> Result<(Switch, Vec<Refusal>), Refusal> {
        let mut skipped = Vec::new();
        let mut keep = |refusal: Refusal| -> Result<(), Refusal> {
            match strictness {
                Strictness::Strict => Err(refusal),
                Strictness::BestEffort => {
                    skipped.push(refusal);
                    Ok(())
                }
            }
        };
        let mut switch = Switch::default();
        for name in deactivate {
            match self.loaded.get(name) {
                None => keep(Refusal::NotLoaded(name.clone()))?,
                Some(l) if l.state != State::Active => keep(Refusal::WrongState {
                    name: name.clone(),
                    state: l.state.label(),
                    action: "deactivating",
                    needs: "active",
                })?,
                Some(_) => switch.deactivate.push(name.clone()),
            }
        }
        // Interfaces held after the switch by controllers that stay active.
        let mut held: Vec<(&str, &str)> = self
            .loaded
            .iter()
            .filter(|(n, l)| l.state == State::Active && !switch.deactivate.contains(n))
            .flat_map(|(n, l)| {
                l.interfaces
                    .command
                    .iter()
                    .map(|i| (n.as_str(), i.as_str()))
            })
            .collect();
        for name in activate {
            let Some(loaded) = self.loaded.get(name) else {
                keep(Refusal::NotLoaded(name.clone()))?;
                continue;
            };
            if loaded.state != State::Inactive {
                keep(Refusal::WrongState {
                    name: name.clone(),
                    state: loaded.state.label(),
                    action: "activating",
                    needs: "inactive",
                })?;
                continue;
            }
            let conflict = loaded.interfaces.command.iter().find_map(|interface| {
                held.iter()
                    .find(|(_, h)| h == interface)
                    .map(|(holder, _)| (interface.clone(), holder.to_string()))
            });
            if let Some((interface, holder)) = conflict {
                let refusal = if holder == *name {
                    Refusal::ClaimedTwice {
                        name: name.clone(),
                        interface,
                    }
                } else {
                    Refusal::Claimed {
                        name: name.clone(),
                        interface,
                        holder,
                    }
                };
                keep(refusal)?;
                continue;
            }
            held.extend(
                loaded
                    .interfaces
                    .command
                    .iter()
                    .map(|i| (name.as_str(), i.as_str())),
            );
            switch.activate.push(name.clone());
        }
        Ok((switch, skipped))
    }

    /// Carries out a planned switch: the states change, `apply` runs each controller's own
    /// deactivation (false) or activation (true).
    pub fn apply_switch(&mut self, switch: &Switch, mut apply: impl FnMut(&mut C, bool)) {
        for (names, state, active) in [
            (&switch.deactivate, State::Inactive, false),
            (&switch.activate, State::Active, true),
        ] {
            for name in names {
                if let Some(loaded) = self.loaded.get_mut(name) {
                    loaded.state = state;
                    apply(&mut loaded.running, active);
                }
            }
        }
    }

    /// Which active controller claims command interface `interface`.
    pub fn claimed_by(&self, interface: &str) -> Option<&str> {
        self.loaded
            .iter()
            .find(|(_, l)| {
                l.state == State::Active && l.interfaces.command.iter().any(|i| i == interface)
            })
            .map(|(n, _)| n.as_str())
    }
}

/// The controllers a switch changes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Switch {
    pub deactivate: Vec<String>,
    pub activate: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configured(names: &[(&str, &[&str])]) -> Lifecycle<()> {
        let mut lifecycle = Lifecycle::default();
        for (name, claims) in names {
            lifecycle.load(name, "t/T", ()).unwrap();
            let command = claims.iter().map(|c| c.to_string()).collect();
            lifecycle
                .configure(name, |_| {
                    Ok(Interfaces {
                        command,
                        state: Vec::new(),
                    })
                })
                .unwrap();
        }
        lifecycle
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_controller_goes_through_its_states_in_order() {
        let mut lifecycle = configured(&[]);
        lifecycle.load("a", "t/T", ()).unwrap();
        assert!(matches!(
            lifecycle.load("a", "t/T", ()),
            Err(Refusal::AlreadyLoaded(name)) if name == "a"
        ));
        let (switch, _) = lifecycle
            .plan_switch(&names(&["a"]), &[], Strictness::BestEffort)
            .unwrap();
        assert!(switch.activate.is_empty(), "unconfigured: not activated");
        lifecycle
            .configure("a", |_| Ok(Interfaces::default()))
            .unwrap();
        let (switch, _) = lifecycle
            .plan_switch(&names(&["a"]), &[], Strictness::Strict)
            .unwrap();
        lifecycle.apply_switch(&switch, |_, _| {});
        assert_eq!(
            lifecycle.unload("a").unwrap_err().to_string(),
            "controller 'a' is active: unloading needs it unconfigured or inactive"
        );
        let (switch, _) = lifecycle
            .plan_switch(&[], &names(&["a"]), Strictness::Strict)
            .unwrap();
        lifecycle.apply_switch(&switch, |_, _| {});
        lifecycle.cleanup("a").unwrap();
        lifecycle.unload("a").unwrap();
        assert_eq!(lifecycle.iter().count(), 0);
    }

    #[test]
    fn claims_conflict_strictly_or_are_left_out_with_best_effort() {
        let mut lifecycle = configured(&[("a", &["j/position"]), ("b", &["j/position"])]);
        let (switch, _) = lifecycle
            .plan_switch(&names(&["a"]), &[], Strictness::Strict)
            .unwrap();
        lifecycle.apply_switch(&switch, |_, _| {});
        assert_eq!(lifecycle.claimed_by("j/position"), Some("a"));
        let refused = lifecycle
            .plan_switch(&names(&["b", "nope"]), &[], Strictness::Strict)
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "controller 'b' cannot claim 'j/position', which 'a' holds"
        );
        let (switch, skipped) = lifecycle
            .plan_switch(&names(&["b", "nope"]), &[], Strictness::BestEffort)
            .unwrap();
        assert!(switch.activate.is_empty());
        assert_eq!(skipped.len(), 2);
        // Deactivating the holder in the same switch frees the claim.
        let (switch, _) = lifecycle
            .plan_switch(&names(&["b"]), &names(&["a"]), Strictness::Strict)
            .unwrap();
        assert_eq!(switch.activate, ["b"]);
        assert_eq!(switch.deactivate, ["a"]);
        // Two controllers claiming one interface in one switch: the second is refused.
        let lifecycle = configured(&[("a", &["j/position"]), ("b", &["j/position"])]);
        let refused = lifecycle
            .plan_switch(&names(&["a", "b"]), &[], Strictness::Strict)
            .unwrap_err();
        assert!(matches!(refused, Refusal::Claimed { .. }), "{refused}");
    }

    #[test]
    fn strictness_follows_the_request_constants() {
        assert_eq!(Strictness::from_request(1), Strictness::BestEffort);
        assert_eq!(Strictness::from_request(2), Strictness::Strict);
        assert_eq!(Strictness::from_request(0), Strictness::BestEffort);
    }
}
