//! A world that changes while it runs: spawn a robot or an object from a file or a text,
//! delete one, load another config. Each edits the config the running world was built from
//! and hands the result to `SimHandle::change_world`, which builds the new world off the
//! physics thread and swaps it in between two steps; a request that fails leaves the running
//! world untouched. Adapters (ROS services, the console) turn requests and errors into their
//! own terms.
mod spawn;
mod worlds;

pub use spawn::{ModelFormat, SpawnError, SpawnRequest, SpawnSource, spawn, spawn_all};
pub use worlds::{
    Listed, LoadError, NO_WORLD, available_worlds, is_unloaded, load_world, spawnables,
    unload_world,
};

use crate::config::Config;
use crate::error::InputError;
use crate::model::World;
use crate::sim::{ChangeError, Changed, SimHandle};

/// A file's name up to its first dot (`panda` of `panda.params.yaml`): the name a world or
/// a model is listed and spawned under.
pub fn file_stem(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| {
            n.to_string_lossy()
                .split('.')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default()
}

/// The config's own rules, which every new world passes before it is swapped in (with the
/// plans of the adapters that follow the world: `SimHandle::follow`).
fn check(_world: &World, config: &Config) -> Result<(), InputError> {
    // An empty world (unloaded, or its last robot deleted) is allowed at run time.
    if !config.robots.is_empty() {
        config.validate()?;
    }
    Ok(())
}

/// Why a delete did not happen.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    #[error("no entity '{name}'; entities: {known:?}")]
    NotFound { name: String, known: Vec<String> },
    #[error(
        "'{0}' is a body of a robot's or the world's model, not an entity of its own: only \
         robots and spawned objects can be deleted"
    )]
    PartOfModel(String),
    #[error("{0}")]
    Change(#[from] ChangeError),
}

/// Removes robot (or spawned object) `name` from the world; its topics, actions and legacy
/// rows stop, and its name can be spawned again.
pub fn delete(handle: &SimHandle, name: &str) -> Result<Changed, DeleteError> {
    let edit = handle.edit_world();
    let mut config = edit.world.config.clone();
    let Some(index) = config.robots.iter().position(|r| r.name == name) else {
        let model = &edit.world.model;
        if model
            .name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_BODY, name)
            .is_some()
        {
            return Err(DeleteError::PartOfModel(name.to_string()));
        }
        return Err(DeleteError::NotFound {
            name: name.to_string(),
            known: config.robots.iter().map(|r| r.name.clone()).collect(),
        });
    };
    config.robots.remove(index);
    config.spawned.retain(|s| s != name);
    Ok(edit.change(config, false, check)?)
}

/// Deletes every entity spawned since the world was loaded (`ResetSimulation` with
/// `SCOPE_SPAWNED`); nothing to delete is no change.
pub fn remove_spawned(handle: &SimHandle) -> Result<Option<Changed>, ChangeError> {
    let edit = handle.edit_world();
    let mut config = edit.world.config.clone();
    let spawned = std::mem::take(&mut config.spawned);
    if spawned.is_empty() {
        return Ok(None);
    }
    config.robots.retain(|r| !spawned.contains(&r.name));
    edit.change(config, false, check).map(Some)
}
