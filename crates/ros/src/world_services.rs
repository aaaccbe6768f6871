//! The world-editing part of `simulation_interfaces`, in the node's private namespace:
//! `spawn_entity`, `spawn_entities`, `delete_entity`, `get_spawnables`,
//! `get_available_worlds`, `load_world` and `get_current_world`. A change is built on its own
//! thread while the node goes on publishing; the node re-plans its topics once the physics
//! thread has swapped the new world in.
use crate::messages::simulation_interfaces::msg::{
    Resource, Result as SimResult, SpawnResult, Spawnable, WorldResource,
};
use crate::messages::simulation_interfaces::srv::{
    DeleteEntity, GetAvailableWorlds, GetCurrentWorld, GetSpawnables, LoadWorld, SpawnEntities,
    SpawnEntity, UnloadWorld,
};
use crate::sim::SimHandle;
use crate::world::{DeleteError, LoadError, SpawnError, SpawnRequest, SpawnSource};
use futures::executor::LocalSpawner;

use super::executor::off_the_node;
use super::simulation::{changes_refused, ok, outcome};

/// The standard's result code of a spawn error.
fn spawn_code(error: &SpawnError) -> u8 {
    match error {
        SpawnError::NoResource(_) => SpawnResult::NO_RESOURCE,
        SpawnError::NameNotUnique(_) => SpawnResult::NAME_NOT_UNIQUE,
        SpawnError::NameInvalid(_) => SpawnResult::NAME_INVALID,
        SpawnError::NamespaceInvalid(_) => SpawnResult::NAMESPACE_INVALID,
        SpawnError::UnsupportedFormat(_) => SpawnResult::UNSUPPORTED_FORMAT,
        SpawnError::ParseError(_) => SpawnResult::RESOURCE_PARSE_ERROR,
        SpawnError::MissingAssets(_) => SpawnResult::MISSING_ASSETS,
        SpawnError::InvalidPose(_) => SpawnResult::INVALID_POSE,
        SpawnError::Failed(_) => SimResult::RESULT_OPERATION_FAILED,
    }
}

fn spawn_result(result: Result<String, SpawnError>) -> SpawnResult {
    match result {
        Ok(entity_name) => SpawnResult {
            result: ok(),
            entity_name,
        },
        Err(e) => SpawnResult {
            result: outcome(spawn_code(&e), e.to_string()),
            entity_name: String::new(),
        },
    }
}

/// One entity of `SpawnEntity` / `SpawnEntities` as the world module takes it.
fn request_of(
    name: &str,
    allow_renaming: bool,
    resource: &Resource,
    namespace: &str,
    pose: &crate::messages::geometry_msgs::msg::PoseStamped,
) -> SpawnRequest {
    let (p, q) = (&pose.pose.position, &pose.pose.orientation);
    SpawnRequest {
        name: name.to_string(),
        allow_renaming,
        // The uri wins when both are given, as the standard says.
        source: if resource.uri.is_empty() {
            SpawnSource::Text(resource.resource_string.clone())
        } else {
            SpawnSource::Uri(resource.uri.clone())
        },
        namespace: namespace.to_string(),
        frame: pose.header.frame_id.clone(),
        position: [p.x, p.y, p.z],
        orientation_xyzw: [q.x, q.y, q.z, q.w],
    }
}

fn world_resource(world: &crate::sim::WorldGeneration) -> WorldResource {
    let config = &world.config;
    let name = crate::world::file_stem(std::path::Path::new(&config.origin));
    let robots: Vec<&str> = world.robots.iter().map(|r| r.name.as_str()).collect();
    WorldResource {
        name,
        world_resource: Resource {
            uri: config.origin.clone(),
            resource_string: String::new(),
        },
        description: format!("generation {}: {}", world.number, robots.join(", ")),
        tags: Vec::new(),
    }
}

pub fn start(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    stopped: super::simulation::Stopped,
) -> Result<(), super::Error> {
    use super::{serve, serve_async};
    let h = handle.clone();
    serve_async::<SpawnEntity::Service, _>(node, spawner, "~/spawn_entity", move |m| {
        spawn_entity(h.clone(), m)
    })?;
    let h = handle.clone();
    serve_async::<SpawnEntities::Service, _>(node, spawner, "~/spawn_entities", move |m| {
        spawn_entities(h.clone(), m)
    })?;
    let h = handle.clone();
    serve_async::<DeleteEntity::Service, _>(node, spawner, "~/delete_entity", move |m| {
        delete_entity(h.clone(), m)
    })?;
    let h = handle.clone();
    serve::<GetSpawnables::Service>(node, spawner, "~/get_spawnables", move |m| {
        get_spawnables(&h, &m)
    })?;
    let h = handle.clone();
    serve::<GetAvailableWorlds::Service>(node, spawner, "~/get_available_worlds", move |m| {
        get_available_worlds(&h, &m)
    })?;
    let h = handle.clone();
    serve::<GetCurrentWorld::Service>(node, spawner, "~/get_current_world", move |_| {
        get_current_world(&h)
    })?;
    let h = handle.clone();
    serve_async::<LoadWorld::Service, _>(node, spawner, "~/load_world", move |m| {
        load_world(h.clone(), stopped.clone(), m)
    })?;
    let h = handle.clone();
    serve_async::<UnloadWorld::Service, _>(node, spawner, "~/unload_world", move |_| {
        unload_world(h.clone())
    })
}

async fn spawn_entity(h: SimHandle, m: SpawnEntity::Request) -> SpawnEntity::Response {
    let resource = Resource {
        uri: m.uri.clone(),
        resource_string: m.resource_string.clone(),
    };
    let spawn = request_of(
        &m.name,
        m.allow_renaming,
        &resource,
        &m.entity_namespace,
        &m.initial_pose,
    );
    let worker = h.clone();
    let done = match changes_refused(&h) {
        Some(why) => Err(SpawnError::Failed(why)),
        None => off_the_node("ros-spawn", move || {
            crate::world::spawn(&worker, &spawn).map(|(name, _)| name)
        })
        .await
        .ok()
        .unwrap_or_else(|| Err(SpawnError::Failed("the spawn was lost".into()))),
    };
    let result = spawn_result(done);
    SpawnEntity::Response {
        result: result.result,
        entity_name: result.entity_name,
    }
}

async fn spawn_entities(h: SimHandle, m: SpawnEntities::Request) -> SpawnEntities::Response {
    let spawns: Vec<SpawnRequest> = m
        .spawn_requests
        .iter()
        .map(|s| {
            request_of(
                &s.name,
                s.allow_renaming,
                &s.entity_resource,
                &s.entity_namespace,
                &s.initial_pose,
            )
        })
        .collect();
    let count = spawns.len();
    let failed_all = |why: &str| {
        (0..count)
            .map(|_| Err(SpawnError::Failed(why.to_string())))
            .collect()
    };
    let worker = h.clone();
    let done = match changes_refused(&h) {
        Some(why) => failed_all(&why),
        None => off_the_node("ros-spawn", move || {
            crate::world::spawn_all(&worker, &spawns)
        })
        .await
        .ok()
        .unwrap_or_else(|| failed_all("the spawn was lost")),
    };
    let results: Vec<SpawnResult> = done.into_iter().map(spawn_result).collect();
    let failed = results
        .iter()
        .filter(|r| r.result.result != SimResult::RESULT_OK);
    let result = match failed.count() {
        0 => ok(),
        n => outcome(
            SpawnEntities::Response::ENTITIES_SPAWN_FAILED,
            format!("{n} of {count} spawn requests failed; see results"),
        ),
    };
    SpawnEntities::Response { result, results }
}

async fn delete_entity(h: SimHandle, m: DeleteEntity::Request) -> DeleteEntity::Response {
    if let Some(why) = changes_refused(&h) {
        let result = outcome(SimResult::RESULT_OPERATION_FAILED, why);
        return DeleteEntity::Response { result };
    }
    let (worker, name) = (h.clone(), m.entity);
    let done = off_the_node("ros-delete", move || {
        crate::world::delete(&worker, &name).map(drop)
    })
    .await
    .ok();
    let result = match done {
        Some(Ok(())) => ok(),
        Some(Err(e @ DeleteError::NotFound { .. })) => {
            outcome(SimResult::RESULT_NOT_FOUND, e.to_string())
        }
        Some(Err(e @ DeleteError::PartOfModel(_))) => {
            outcome(SimResult::RESULT_OPERATION_FAILED, e.to_string())
        }
        Some(Err(e)) => outcome(SimResult::RESULT_OPERATION_FAILED, e.to_string()),
        None => outcome(SimResult::RESULT_OPERATION_FAILED, "the delete was lost"),
    };
    DeleteEntity::Response { result }
}

fn get_spawnables(h: &SimHandle, m: &GetSpawnables::Request) -> GetSpawnables::Response {
    let world = h.world();
    match crate::world::spawnables(&world.config, &m.sources) {
        Ok(found) => GetSpawnables::Response {
            result: ok(),
            spawnables: found
                .into_iter()
                .map(|s| Spawnable {
                    uri: s.path.display().to_string(),
                    description: s.description,
                    spawn_bounds: Default::default(),
                })
                .collect(),
        },
        Err(e) => GetSpawnables::Response {
            result: outcome(SimResult::RESULT_OPERATION_FAILED, e.to_string()),
            spawnables: Vec::new(),
        },
    }
}

fn get_available_worlds(
    h: &SimHandle,
    m: &GetAvailableWorlds::Request,
) -> GetAvailableWorlds::Response {
    let world = h.world();
    match crate::world::available_worlds(&world.config, &m.additional_sources) {
        Ok(found) => GetAvailableWorlds::Response {
            result: ok(),
            worlds: found
                .into_iter()
                .map(|w| WorldResource {
                    name: w.name,
                    world_resource: Resource {
                        uri: w.path.display().to_string(),
                        resource_string: String::new(),
                    },
                    description: w.description,
                    tags: Vec::new(),
                })
                .collect(),
        },
        Err(e) => GetAvailableWorlds::Response {
            result: outcome(SimResult::RESULT_OPERATION_FAILED, e.to_string()),
            worlds: Vec::new(),
        },
    }
}

fn get_current_world(h: &SimHandle) -> GetCurrentWorld::Response {
    let world = h.world();
    if crate::world::is_unloaded(&world.config) {
        return GetCurrentWorld::Response {
            result: outcome(
                GetCurrentWorld::Response::NO_WORLD_LOADED,
                "no world is loaded",
            ),
            world: WorldResource::default(),
        };
    }
    GetCurrentWorld::Response {
        result: ok(),
        world: world_resource(&world),
    }
}

/// The standard's result code of a load error.
fn load_code(error: &LoadError) -> u8 {
    match error {
        LoadError::NoResource | LoadError::Access(_) => LoadWorld::Response::NO_RESOURCE,
        LoadError::UnsupportedFormat(_) => LoadWorld::Response::UNSUPPORTED_FORMAT,
        LoadError::Parse(_) => LoadWorld::Response::RESOURCE_PARSE_ERROR,
        LoadError::Change(_) | LoadError::NoWorld | LoadError::TurnedOff(_) => {
            SimResult::RESULT_OPERATION_FAILED
        }
    }
}

async fn load_world(
    h: SimHandle,
    stopped: super::simulation::Stopped,
    m: LoadWorld::Request,
) -> LoadWorld::Response {
    let (uri, text) = (m.uri, m.resource_string);
    let worker = h.clone();
    let done = match changes_refused(&h) {
        Some(why) => Some(Err(LoadError::TurnedOff(why))),
        None => off_the_node("ros-load-world", move || {
            crate::world::load_world(&worker, &uri, &text).map(drop)
        })
        .await
        .ok(),
    };
    let result = match done {
        Some(Ok(())) => ok(),
        Some(Err(e)) => outcome(load_code(&e), e.to_string()),
        None => outcome(SimResult::RESULT_OPERATION_FAILED, "the load was lost"),
    };
    let loaded = result.result == SimResult::RESULT_OK;
    // A loaded world stands stopped (time 0, paused), as the standard says.
    if loaded {
        stopped.set(true);
    }
    LoadWorld::Response {
        result,
        world: if loaded {
            world_resource(&h.world())
        } else {
            WorldResource::default()
        },
    }
}

async fn unload_world(h: SimHandle) -> UnloadWorld::Response {
    if let Some(why) = changes_refused(&h) {
        let result = outcome(SimResult::RESULT_OPERATION_FAILED, why);
        return UnloadWorld::Response { result };
    }
    let worker = h.clone();
    let done = off_the_node("ros-unload-world", move || {
        crate::world::unload_world(&worker).map(drop)
    })
    .await
    .ok();
    let result = match done {
        Some(Ok(())) => ok(),
        Some(Err(LoadError::NoWorld)) => {
            outcome(UnloadWorld::Response::NO_WORLD_LOADED, "no world is loaded")
        }
        Some(Err(e)) => outcome(SimResult::RESULT_OPERATION_FAILED, e.to_string()),
        None => outcome(SimResult::RESULT_OPERATION_FAILED, "the unload was lost"),
    };
    UnloadWorld::Response { result }
}
