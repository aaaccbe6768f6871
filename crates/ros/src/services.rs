//! Services in the node's private namespace (`/mujoco_bridge/...`), standard types only:
//! `reset` (std_srvs/Trigger), `pause` (std_srvs/SetBool: true pauses, false runs in
//! realtime), one `keyframes/<keyframe>` Trigger per MuJoCo keyframe, and
//! `save_snapshot` / `restore_snapshot` (Trigger) for a named in-memory snapshot, and
//! `record` (std_srvs/SetBool: true starts an MCAP recording, false stops it).
//!
//! An external wrench has no standard service type, so it is the topic `~/wrench`
//! (geometry_msgs/WrenchStamped), as ros-interface users know it from other simulators: the
//! header's frame names the body (`base_link`, or `robot/base_link` when several robots
//! share the world), force and torque are in that body's frame, applied at its centre of
//! mass for `ros.wrench_duration` seconds of sim time (a live parameter). Step N and body
//! poses are the `simulation_interfaces` services (StepSimulation, SetEntityState).
use crate::config::SimMode;
use crate::messages::std_srvs::srv::{SetBool, Trigger};
use crate::sim::{OperationError, SimHandle};
use crate::topics::Qos;
use futures::StreamExt;
use futures::executor::LocalSpawner;
use mujoco_rs::prelude::MjtObjBase;
use nalgebra::Vector3;
use std::cell::Cell;
use std::rc::Rc;

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
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    name: &str,
    action: impl Fn(&SimHandle) -> (bool, String) + 'static,
) -> Result<(), super::Error> {
    let handle = handle.clone();
    super::serve::<Trigger::Service>(node, spawner, name, move |_| {
        let (success, message) = action(&handle);
        Trigger::Response { success, message }
    })
}

/// The model body a frame name refers to (see the module comment).
fn body_of_frame(handle: &SimHandle, frame: &str) -> Result<usize, OperationError> {
    if let Some((robot, body)) = frame.split_once('/') {
        let robot = handle.robot_index(robot)?;
        return handle.body_index(Some(robot), body);
    }
    let only = handle.lone_robot();
    handle.body_index(only, frame)
}

/// Subscribes `~/wrench`.
fn wrenches(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    duration: Rc<Cell<f64>>,
) -> Result<(), super::Error> {
    let mut messages = node.subscribe::<crate::messages::geometry_msgs::msg::WrenchStamped>(
        "~/wrench",
        Qos::DEFAULT,
    )?;
    let handle = handle.clone();
    let mut state = handle.latest_state_buffer();
    super::spawn(spawner, async move {
        while let Some(message) = messages.next().await {
            let (f, t) = (&message.wrench.force, &message.wrench.torque);
            let result = body_of_frame(&handle, &message.header.frame_id).and_then(|body| {
                if !handle.latest_state(&mut state) {
                    return Err(OperationError::Invalid("no state yet".into()));
                }
                // The body's frame to the world frame, which MuJoCo's applied forces use. (A
                // world change between the two reads can leave the body out of this state.)
                let quaternion = state
                    .xquat_wxyz
                    .get(4 * body..4 * body + 4)
                    .ok_or_else(|| OperationError::Invalid("the world changed".into()))?;
                let rotation = crate::model::pose::quaternion(quaternion);
                let force = rotation * Vector3::new(f.x, f.y, f.z);
                let torque = rotation * Vector3::new(t.x, t.y, t.z);
                handle.apply_body_wrench(body, force.into(), torque.into(), duration.get())
            });
            if let Err(e) = result {
                let _ = handle.bad_command(
                    "ros_wrench",
                    format!("~/wrench for frame '{}': {e}", message.header.frame_id),
                );
            }
        }
    })
}

/// Where `~/record` records: the recorder (the streams), to a new
/// `mujoco_bridge-<unix milliseconds>.mcap` in `folder` (`record.folder`).
pub struct Recording {
    pub recorder: std::sync::Arc<dyn crate::record::RecordingSwitch>,
    pub folder: std::path::PathBuf,
}

impl Recording {
    fn switch(&self, on: bool) -> (bool, String) {
        let recorder = &self.recorder;
        if !on {
            return match recorder.stop() {
                Ok(r) => (
                    true,
                    format!(
                        "recorded {}: step records {} written, {} dropped",
                        r.path.display(),
                        r.steps_written,
                        r.steps_dropped
                    ),
                ),
                Err(e) => (false, e.to_string()),
            };
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let path = self.folder.join(format!("mujoco_bridge-{now}.mcap"));
        match recorder.start(&path, recorder.every_step()) {
            Ok(()) => (true, format!("recording to {}", path.display())),
            Err(e) => (false, e.to_string()),
        }
    }
}

pub fn start(
    node: &mut super::backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    wrench_duration: Rc<Cell<f64>>,
    recording: Option<Recording>,
) -> Result<(), super::Error> {
    if let Some(recording) = recording {
        super::serve::<SetBool::Service>(node, spawner, "~/record", move |request| {
            let (success, message) = recording.switch(request.data);
            SetBool::Response { success, message }
        })?;
    }
    wrenches(node, spawner, handle, wrench_duration)?;
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
    let mut pauses = node.service::<SetBool::Service>("~/pause")?;
    let pause_handle = handle.clone();
    super::spawn(spawner, async move {
        while let Some(request) = pauses.next().await {
            let (success, message) = if request.message.data {
                reply(pause_handle.pause(), "paused")
            } else {
                reply(pause_handle.set_mode(SimMode::Realtime), "running")
            };
            let _ = request.respond(SetBool::Response { success, message });
        }
    })?;
    Ok(())
}
