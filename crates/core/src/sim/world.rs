//! World generations: the compiled model and everything sized or numbered by it (name maps,
//! the state exchange, per-robot slots). A spawn, a delete or a world load builds the next
//! generation off the physics thread, with a fresh `MjData` and controllers and a plan of
//! which state values carry over by name; the physics thread only copies those values and
//! swaps, between two steps.
use super::TwistSlot;
use super::samples::SampleRing;
use super::snapshot::{STATE_SPEC, model_fingerprint};
use super::state::{StateExchange, StateLayout, StateSnapshot};
use crate::config::{Config, ControlConfig};
use crate::control::Controllers;
use crate::model::{RobotMap, World};
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU8};

/// One generation of the world, shared read-only by the handles. Every id, index and array
/// size in it belongs to its `model`; adapters keep the generation they planned from and
/// read the state through it, so nothing ever mixes two models.
pub struct WorldGeneration {
    /// 0 for the world the node started with, +1 per change.
    pub number: u64,
    pub model: Arc<MjModel>,
    pub robots: Vec<RobotMap>,
    pub controls: Vec<ControlConfig>,
    /// Its cameras and lidars, each at the slot every adapter asks for it by.
    pub sensors: Arc<crate::model::sensors::SensorPlan>,
    /// The ros2_control controllers each robot's config declares.
    pub declared_controllers: Vec<Option<Arc<crate::config::controllers::ControllersFile>>>,
    /// Whether each of their sensor broadcasters is active (the controller manager sets it).
    pub broadcaster_gates: Arc<crate::model::declared_sensors::BroadcasterGates>,
    /// The config this world is built from (a spawn adds a robot to it, a delete removes one).
    pub config: Config,
    pub fingerprint: u64,
    pub(super) state: StateExchange,
    /// The samples its topics are made of, on the sim clock.
    pub samples: Arc<SampleRing>,
    /// Snapshot sizes: MuJoCo state, controllers' state.
    pub(super) snapshot_sizes: (usize, usize),
    pub(super) twists: Vec<TwistSlot>,
    /// Legacy action-key bitmask per robot.
    pub(super) actions: Vec<AtomicI32>,
    /// Each robot's current control source, as the physics thread last set it.
    pub(super) sources: Box<[AtomicU8]>,
    _counted: crate::census::Counted,
    /// Last: the model and arrays above go back to the system with the generation.
    _returns: crate::census::ReturnsMemory,
}

impl WorldGeneration {
    pub(super) fn new(
        number: u64,
        world: &World,
        controllers: &Controllers,
        contacts: usize,
    ) -> Self {
        let model = world.model.clone();
        Self {
            number,
            fingerprint: model_fingerprint(&model),
            state: StateExchange::new(StateLayout::of(&model).with_contacts(contacts)),
            samples: Arc::new(SampleRing::new(
                StateLayout::of(&model).with_contacts(contacts),
            )),
            snapshot_sizes: (
                model.state_size(STATE_SPEC),
                model.ffi().nv as usize + controllers.state_len(),
            ),
            twists: (0..controllers.robots.len())
                .map(|_| TwistSlot::default())
                .collect(),
            actions: world
                .robots
                .iter()
                .map(|r| AtomicI32::new(r.actions))
                .collect(),
            sources: controllers
                .robots
                .iter()
                .map(|r| AtomicU8::new(r.source as u8))
                .collect(),
            robots: world.robots.clone(),
            controls: world.controls.clone(),
            sensors: world.sensors.clone(),
            declared_controllers: world.declared_controllers.clone(),
            broadcaster_gates: world.broadcaster_gates.clone(),
            config: world.config.clone(),
            model,
            _counted: crate::census::Counted::new(crate::census::Kind::Worlds),
            _returns: crate::census::ReturnsMemory,
        }
    }

    /// The world this generation was built from, as a planner takes it (its load warnings
    /// were logged then and are not kept).
    pub fn as_world(&self) -> World {
        World {
            model: self.model.clone(),
            robots: self.robots.clone(),
            controls: self.controls.clone(),
            origin: self.config.origin.clone(),
            config: self.config.clone(),
            sensors: self.sensors.clone(),
            declared_controllers: self.declared_controllers.clone(),
            broadcaster_gates: self.broadcaster_gates.clone(),
            warnings: Vec::new(),
        }
    }

    pub fn layout(&self) -> StateLayout {
        *self.state.layout()
    }

    /// Copies the newest state of this generation into `out`. Once the world has changed,
    /// this generation's state no longer moves: its reader should re-plan from the new one.
    pub fn latest_state(&self, out: &mut StateSnapshot) -> bool {
        self.state.read_latest(out)
    }

    pub fn robot_index(&self, name: &str) -> Option<usize> {
        self.robots.iter().position(|r| r.name == name)
    }
}

/// A run of values copied from the old world's arrays to the new one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    pub from: usize,
    pub to: usize,
    pub len: usize,
}

/// Which state values of the old world land where in the new one, matched by name: joints
/// (qpos, qvel and the solver's warm start), actuators (ctrl, act) and mocap bodies.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Carry {
    pub qpos: Vec<Run>,
    pub dofs: Vec<Run>,
    pub ctrl: Vec<Run>,
    pub act: Vec<Run>,
    pub mocap: Vec<Run>,
}

fn names(model: &MjModel, kind: MjtObjBase, count: i64) -> Vec<Option<&str>> {
    (0..count.max(0) as usize)
        .map(|id| model.id_to_name(kind, id))
        .collect()
}

/// Adds `run` to `runs`, merging it with the last one when they continue each other.
fn push_run(runs: &mut Vec<Run>, run: Run) {
    if run.len == 0 {
        return;
    }
    if let Some(last) = runs.last_mut()
        && last.from + last.len == run.from
        && last.to + last.len == run.to
    {
        last.len += run.len;
        return;
    }
    runs.push(run);
}

/// The (old, new) indices of the objects of `kind` that both models name alike; `count`
/// gives a model's number of them.
fn same_names(
    old: &MjModel,
    new: &MjModel,
    kind: MjtObjBase,
    count: impl Fn(&MjModel) -> i64,
) -> Vec<(usize, usize)> {
    let new_names = names(new, kind, count(new));
    names(old, kind, count(old))
        .into_iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let name = name?;
            let k = new_names.iter().position(|n| *n == Some(name))?;
            Some((i, k))
        })
        .collect()
}

impl Carry {
    /// The values of `old` that `new` has under the same name and of the same kind.
    pub fn between(old: &MjModel, new: &MjModel) -> Self {
        let mut carry = Self::default();
        carry.joints(old, new);
        carry.actuators(old, new);
        carry.mocap_bodies(old, new);
        carry
    }

    /// The positions and velocities of the joints both models name, of the same kind.
    fn joints(&mut self, old: &MjModel, new: &MjModel) {
        for (j, k) in same_names(old, new, MjtObjBase::mjOBJ_JOINT, |m| m.ffi().njnt) {
            let kind = old.jnt_type()[j];
            if new.jnt_type()[k] != kind {
                continue;
            }
            let (nq, nv) = match kind {
                MjtJoint::mjJNT_FREE => (7, 6),
                MjtJoint::mjJNT_BALL => (4, 3),
                _ => (1, 1),
            };
            let (from, to) = (old.jnt_qposadr()[j] as usize, new.jnt_qposadr()[k] as usize);
            push_run(&mut self.qpos, Run { from, to, len: nq });
            let (from, to) = (old.jnt_dofadr()[j] as usize, new.jnt_dofadr()[k] as usize);
            push_run(&mut self.dofs, Run { from, to, len: nv });
        }
    }

    /// The controls of the actuators both models name, and their activations where both
    /// have as many.
    fn actuators(&mut self, old: &MjModel, new: &MjModel) {
        for (a, b) in same_names(old, new, MjtObjBase::mjOBJ_ACTUATOR, |m| m.ffi().nu) {
            push_run(
                &mut self.ctrl,
                Run {
                    from: a,
                    to: b,
                    len: 1,
                },
            );
            let (old_act, new_act) = (old.actuator_actadr()[a], new.actuator_actadr()[b]);
            let len = old.actuator_actnum()[a];
            if old_act >= 0 && new_act >= 0 && len == new.actuator_actnum()[b] {
                push_run(
                    &mut self.act,
                    Run {
                        from: old_act as usize,
                        to: new_act as usize,
                        len: len as usize,
                    },
                );
            }
        }
    }

    /// The mocap poses of the bodies both models name that are mocap in both.
    fn mocap_bodies(&mut self, old: &MjModel, new: &MjModel) {
        for (body, k) in same_names(old, new, MjtObjBase::mjOBJ_BODY, |m| m.ffi().nbody) {
            let (from, to) = (old.body_mocapid()[body], new.body_mocapid()[k]);
            if from >= 0 && to >= 0 {
                let (from, to) = (from as usize, to as usize);
                push_run(&mut self.mocap, Run { from, to, len: 1 });
            }
        }
    }

    /// Copies the carried values of `old` into `new` (the physics thread, between steps: no
    /// allocation).
    pub fn apply(&self, old: &MjData<Arc<MjModel>>, new: &mut MjData<Arc<MjModel>>) {
        fn copy<T: Copy>(runs: &[Run], from: &[T], to: &mut [T]) {
            for run in runs {
                to[run.to..run.to + run.len].copy_from_slice(&from[run.from..run.from + run.len]);
            }
        }
        copy(&self.qpos, old.qpos(), new.qpos_mut());
        copy(&self.dofs, old.qvel(), new.qvel_mut());
        copy(&self.dofs, old.qacc_warmstart(), new.qacc_warmstart_mut());
        copy(&self.ctrl, old.ctrl(), new.ctrl_mut());
        copy(&self.act, old.act(), new.act_mut());
        copy(&self.mocap, old.mocap_pos(), new.mocap_pos_mut());
        copy(&self.mocap, old.mocap_quat(), new.mocap_quat_mut());
        // SAFETY: only the time field is written.
        unsafe { new.ffi_mut() }.time = old.time();
    }
}

/// The next world, ready to take over: built, sized and planned off the physics thread.
pub struct NextWorld {
    pub(super) generation: Arc<WorldGeneration>,
    pub(super) data: MjData<Arc<MjModel>>,
    pub(super) controllers: Controllers,
    /// For each robot of the new world, its index in the old one (None: new).
    pub(super) kept: Vec<Option<usize>>,
    pub(super) carry: Carry,
    /// The generation it was planned from: if another change came first, it is refused.
    pub(super) replaces: u64,
    /// Keep nothing (a world load): the new world starts from its own initial state.
    pub(super) fresh: bool,
    /// The running recording, with its columns mapped into the new world.
    pub(super) recording: Option<super::tap::Tap>,
    /// The new world's answer to a diverging step, with its good-state buffer.
    pub(super) guard: super::divergence::Guard,
    /// When its topics' samples fall due.
    pub(super) sample_clock: super::samples::SampleClock,
}

/// Why a world change did not happen. The running world is untouched in every case.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The new config does not load (a file, a field, a model the user can fix).
    #[error("{0}")]
    Input(#[from] crate::error::InputError),
    /// A world load while a CSV recording runs: time starts again from 0 in the new world.
    #[error("a recording is running; stop it before another world is loaded")]
    Recording,
    #[error("{0}")]
    Refused(#[from] super::OperationError),
}

/// A world change that took place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Changed {
    pub generation: u64,
    /// Seconds spent building the new world (off the physics thread).
    pub build_time: f64,
    /// Seconds the physics thread spent swapping it in.
    pub hold_time: f64,
}

/// A world change in the making: while it lives, no other change can happen, so the world
/// it shows is the one its change replaces (an edit made from it loses nothing).
pub struct WorldEdit<'a> {
    handle: &'a super::SimHandle,
    _one_at_a_time: std::sync::MutexGuard<'a, ()>,
    /// The world as it is, and stays until `change`.
    pub world: Arc<WorldGeneration>,
}

impl super::SimHandle {
    /// Starts a world change: waits for any other to finish first.
    pub fn edit_world(&self) -> WorldEdit<'_> {
        let guard = match self.shared.changing.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        WorldEdit {
            handle: self,
            _one_at_a_time: guard,
            world: self.world(),
        }
    }

    /// `edit_world().change(..)`: replaces the world with the one `config` describes.
    pub fn change_world(
        &self,
        config: Config,
        fresh: bool,
        check: impl FnOnce(&World, &Config) -> Result<(), crate::error::InputError>,
    ) -> Result<Changed, ChangeError> {
        self.edit_world().change(config, fresh, check)
    }
}

impl WorldEdit<'_> {
    /// Replaces the world with the one `config` describes, built here (the caller's
    /// thread), while the physics thread steps on; it then swaps it in between two steps.
    /// Unless `fresh`, what both worlds hold carries over by name: joint positions and
    /// velocities, actuator commands and activations, mocap poses, time and step count, and
    /// the controllers of the robots that stay. A config that does not load leaves the
    /// running world untouched.
    pub fn change(
        self,
        config: Config,
        fresh: bool,
        check: impl FnOnce(&World, &Config) -> Result<(), crate::error::InputError>,
    ) -> Result<Changed, ChangeError> {
        let handle = self.handle;
        // A recording goes on across an edit, in the columns it began with.
        let recording = match handle.shared.recording.lock() {
            Ok(running) => running
                .as_ref()
                .map(|r| (r.ring.clone(), r.columns.clone())),
            Err(_) => None,
        };
        if fresh && recording.is_some() {
            return Err(ChangeError::Recording);
        }
        let started = std::time::Instant::now();
        let current = self.world.clone();
        crate::model::asset_cache::hold_for_changes(config.world.asset_cache_mb);
        let world = crate::model::build_world(&config)?;
        check(&world, &config)?;
        let plans = handle.plan_world(&world)?;
        let mut controllers = super::controllers(&world)?;
        let generation = WorldGeneration::new(
            current.number + 1,
            &world,
            &controllers,
            handle.shared.contacts,
        );
        let kept = kept_robots(&current, &world, &generation, fresh);
        let autoplay = autoplay_of(&controllers, &kept, fresh);
        let data = fresh_state(&world, &generation, &mut controllers, &kept)?;
        let generation = Arc::new(generation);
        let next = Box::new(NextWorld {
            guard: super::divergence::Guard::new(&world.model, config.sim.on_divergence),
            sample_clock: super::samples::SampleClock::new(
                generation.samples.clone(),
                world.model.opt().timestep,
            ),
            generation: generation.clone(),
            data,
            controllers,
            kept,
            carry: if fresh {
                Carry::default()
            } else {
                Carry::between(&current.model, &world.model)
            },
            replaces: current.number,
            fresh,
            recording: recording.map(|(ring, columns)| super::tap::Tap {
                ring,
                layout: super::tap::TapLayout::Recording,
                columns: Some(Box::new(crate::record::ColumnMap::new(
                    &columns,
                    &world.model,
                ))),
            }),
        });
        let build_time = started.elapsed().as_secs_f64();
        handle.request_in(current.number, super::Operation::ChangeWorld(next))?;
        let previous = match handle.shared.world.write() {
            Ok(mut now) => std::mem::replace(&mut *now, generation.clone()),
            Err(poisoned) => std::mem::replace(&mut *poisoned.into_inner(), generation.clone()),
        };
        drop(previous);
        for plan in plans {
            plan.deliver(&generation);
        }
        handle.empty_trash();
        for robot in autoplay {
            let _ = handle.play_preset(robot, 0);
        }
        let changed = Changed {
            generation: generation.number,
            build_time,
            hold_time: handle.stats().last_change_time,
        };
        log_change(&current, &generation, fresh, &changed);
        Ok(changed)
    }
}

/// Where each robot of the new `world` was in `current` (None: new, or every robot when
/// `fresh`); a kept robot brings its legacy action keys along.
fn kept_robots(
    current: &WorldGeneration,
    world: &World,
    generation: &WorldGeneration,
    fresh: bool,
) -> Vec<Option<usize>> {
    let kept: Vec<Option<usize>> = world
        .robots
        .iter()
        .map(|r| current.robot_index(&r.name).filter(|_| !fresh))
        .collect();
    for (r, old) in kept.iter().enumerate() {
        if let Some(old) = *old {
            let mask = current.actions[old].load(std::sync::atomic::Ordering::Relaxed);
            generation.actions[r].store(mask, std::sync::atomic::Ordering::Relaxed);
        }
    }
    kept
}

/// The new robots whose config asks for it, which start playing their preset, as at start.
fn autoplay_of(controllers: &Controllers, kept: &[Option<usize>], fresh: bool) -> Vec<usize> {
    (0..kept.len())
        .filter(|r| {
            let robot = &controllers.robots[*r];
            (kept[*r].is_none() || fresh)
                && robot.configured().autoplay
                && robot.sequencer.preset_name().is_some()
        })
        .collect()
}

/// The new world's `MjData`, its new robots where their files say (kept ones bring their
/// state along when the physics thread swaps it in).
fn fresh_state(
    world: &World,
    generation: &WorldGeneration,
    controllers: &mut Controllers,
    kept: &[Option<usize>],
) -> Result<MjData<Arc<MjModel>>, ChangeError> {
    let mut data = super::memory::fresh_data(world.model.clone()).ok_or_else(|| {
        crate::error::InputError::new(
            &generation.config.origin,
            "MuJoCo could not allocate the simulation data (mjData)",
        )
    })?;
    super::initial::apply(
        &world.model,
        &world.robots,
        &mut data,
        controllers,
        |r| kept[r].is_none(),
        drop,
    );
    Ok(data)
}

fn log_change(
    current: &WorldGeneration,
    generation: &WorldGeneration,
    fresh: bool,
    changed: &Changed,
) {
    log::info!(
        "world {}: {}; {} robot(s), built in {:.1} ms, swapped in {:.2} ms",
        changed.generation,
        what_changed(current, generation, fresh),
        generation.robots.len(),
        changed.build_time * 1e3,
        changed.hold_time * 1e3
    );
}

/// A world change in words: the robots it added and removed (by name), or what was loaded.
fn what_changed(before: &WorldGeneration, after: &WorldGeneration, fresh: bool) -> String {
    if fresh {
        return format!("loaded {}", after.config.origin);
    }
    let names = |world: &WorldGeneration| -> Vec<String> {
        world.robots.iter().map(|r| r.name.clone()).collect()
    };
    let (old, new) = (names(before), names(after));
    let added: Vec<&str> = new
        .iter()
        .filter(|n| !old.contains(n))
        .map(String::as_str)
        .collect();
    let removed: Vec<&str> = old
        .iter()
        .filter(|n| !new.contains(n))
        .map(String::as_str)
        .collect();
    match (added.is_empty(), removed.is_empty()) {
        (true, true) => "the world was edited".to_string(),
        (false, true) => format!("added {}", added.join(", ")),
        (true, false) => format!("removed {}", removed.join(", ")),
        (false, false) => format!("added {}, removed {}", added.join(", "), removed.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(xml: &str) -> MjModel {
        MjModel::from_xml_string(xml).unwrap()
    }

    #[test]
    fn values_carry_over_by_name_whatever_the_order() {
        let old = model(
            "<mujoco><worldbody>\
             <body name='a'><freejoint name='fa'/><geom size='0.1'/></body>\
             <body name='b'><joint name='hb'/><geom size='0.1'/></body>\
             </worldbody><actuator><motor name='mb' joint='hb'/></actuator></mujoco>",
        );
        let new = model(
            "<mujoco><worldbody>\
             <body name='c'><joint name='hc'/><geom size='0.1'/></body>\
             <body name='b'><joint name='hb'/><geom size='0.1'/></body>\
             </worldbody><actuator><motor name='mc' joint='hc'/><motor name='mb' joint='hb'/>\
             </actuator></mujoco>",
        );
        let carry = Carry::between(&old, &new);
        assert_eq!(
            carry.qpos,
            [Run {
                from: 7,
                to: 1,
                len: 1
            }]
        );
        assert_eq!(
            carry.dofs,
            [Run {
                from: 6,
                to: 1,
                len: 1
            }]
        );
        assert_eq!(
            carry.ctrl,
            [Run {
                from: 0,
                to: 1,
                len: 1
            }]
        );
        let old = Arc::new(old);
        let new = Arc::new(new);
        let mut from = MjData::new(old.clone());
        from.qpos_mut()[7] = 0.25;
        from.qvel_mut()[6] = -1.5;
        from.ctrl_mut()[0] = 3.0;
        // SAFETY: only the time field is written.
        unsafe { from.ffi_mut() }.time = 4.5;
        let mut to = MjData::new(new.clone());
        carry.apply(&from, &mut to);
        assert_eq!(to.qpos(), [0.0, 0.25]);
        assert_eq!(to.qvel(), [0.0, -1.5]);
        assert_eq!(to.ctrl(), [0.0, 3.0]);
        assert_eq!(to.time(), 4.5);
    }

    #[test]
    fn neighbouring_values_merge_into_one_run() {
        let mut runs = Vec::new();
        push_run(
            &mut runs,
            Run {
                from: 0,
                to: 3,
                len: 7,
            },
        );
        push_run(
            &mut runs,
            Run {
                from: 7,
                to: 10,
                len: 1,
            },
        );
        push_run(
            &mut runs,
            Run {
                from: 9,
                to: 11,
                len: 1,
            },
        );
        assert_eq!(
            runs,
            [
                Run {
                    from: 0,
                    to: 3,
                    len: 8
                },
                Run {
                    from: 9,
                    to: 11,
                    len: 1
                }
            ]
        );
    }
}
