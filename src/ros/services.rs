//! Services in the node's private namespace (`/mujoco_bridge/...`), standard types only:
//! `reset` (std_srvs/Trigger), `pause` (std_srvs/SetBool: true pauses, false runs in
//! realtime), one `keyframes/<keyframe>` Trigger per MuJoCo keyframe, and
//! `save_snapshot` / `restore_snapshot` (Trigger) for a named in-memory snapshot.
use crate::config::SimMode;
use crate::sim::{OperationError, SimHandle};
use futures::StreamExt;
use futures::executor::LocalSpawner;
use futures::task::LocalSpawnExt;
use mujoco_rs::prelude::MjtObjBase;
use r2r::QosProfile;
use r2r::std_srvs::srv::{SetBool, Trigger};

/// The name of the snapshot that `save_snapshot` and `restore_snapshot` share.
const SNAPSHOT: &str = "ros";

fn reply<T>(result: Result<T, OperationError>, done: &str) -> (bool, String) {
    match result {
        Ok(_) => (true, done.to_string()),
        Err(e) => (false, e.to_string()),
    }
}

/// Serves `name` as a Trigger that runs `action` on the handle.
fn trigger(
    node: &mut r2r::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    name: &str,
    action: impl Fn(&SimHandle) -> (bool, String) + 'static,
) -> Result<(), r2r::Error> {
    let mut requests =
        node.create_service::<Trigger::Service>(name, QosProfile::services_default())?;
    let handle = handle.clone();
    spawner
        .spawn_local(async move {
            while let Some(request) = requests.next().await {
                let (success, message) = action(&handle);
                let _ = request.respond(Trigger::Response { success, message });
            }
        })
        .map_err(|_| r2r::Error::RCL_RET_ERROR)
}

pub fn start(
    node: &mut r2r::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
) -> Result<(), r2r::Error> {
    trigger(node, spawner, handle, "~/reset", |h| {
        reply(h.reset(), "reset")
    })?;
    trigger(node, spawner, handle, "~/save_snapshot", |h| {
        reply(
            h.save_named_snapshot(SNAPSHOT),
            &format!("saved snapshot '{SNAPSHOT}'"),
        )
    })?;
    trigger(node, spawner, handle, "~/restore_snapshot", |h| {
        reply(
            h.restore_named_snapshot(SNAPSHOT),
            &format!("restored snapshot '{SNAPSHOT}'"),
        )
    })?;
    let model = handle.model().clone();
    for key in 0..model.ffi().nkey.max(0) as usize {
        let Some(name) = model
            .id_to_name(MjtObjBase::mjOBJ_KEY, key)
            .map(str::to_string)
        else {
            continue;
        };
        let service = format!("~/keyframes/{name}");
        trigger(node, spawner, handle, &service, move |h| {
            reply(
                h.reset_to_keyframe(None, &name),
                &format!("reset to keyframe '{name}'"),
            )
        })?;
    }
    let mut pauses =
        node.create_service::<SetBool::Service>("~/pause", QosProfile::services_default())?;
    let pause_handle = handle.clone();
    spawner
        .spawn_local(async move {
            while let Some(request) = pauses.next().await {
                let (success, message) = if request.message.data {
                    reply(pause_handle.pause(), "paused")
                } else {
                    reply(pause_handle.set_mode(SimMode::Realtime), "running")
                };
                let _ = request.respond(SetBool::Response { success, message });
            }
        })
        .map_err(|_| r2r::Error::RCL_RET_ERROR)?;
    Ok(())
}
