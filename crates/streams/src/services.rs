//! The services a Foxglove client may call (the protocol's services, CDR with `ros2msg`
//! schemas, so the app's Service Call panel fills them in): the node's `reset`, `pause`
//! (true pauses, false runs in real time), `save_snapshot` and `restore_snapshot` (one
//! in-memory snapshot of their own), and `step` (simulation_interfaces/StepSimulation, while
//! paused). Each runs on the server's blocking pool, never on the physics thread.
use crate::messages::simulation_interfaces::msg::Result as SimResult;
use crate::messages::simulation_interfaces::srv::StepSimulation;
use crate::messages::std_srvs::srv::{SetBool, Trigger};
use crate::messages::{Service, cdr};
use crate::sim::{OperationError, SimHandle};
use crate::topics::names::Names;
use foxglove::websocket::service::{Service as FoxgloveService, ServiceSchema};

/// The name of the snapshot `save_snapshot` and `restore_snapshot` share.
const SNAPSHOT: &str = "foxglove";
/// simulation_interfaces/Result codes.
const RESULT_OK: u8 = 1;
const RESULT_FAILED: u8 = 2;

/// A service of ROS type `S` named `name` (resolved as the node's), answering with `call`.
fn service<S: Service>(
    names: &Names,
    name: &str,
    call: impl Fn(S::Request) -> S::Response + Send + Sync + 'static,
) -> FoxgloveService {
    let schema = |part: &str, definition: String| {
        foxglove::Schema::new(
            format!("{}/srv/{}_{part}", S::PACKAGE, S::NAME),
            "ros2msg",
            definition.into_bytes(),
        )
    };
    let schema = ServiceSchema::new(format!("{}/srv/{}", S::PACKAGE, S::NAME))
        .with_request(
            "cdr",
            schema(
                "Request",
                crate::messages::definition::ros2msg::<S::Request>(),
            ),
        )
        .with_response(
            "cdr",
            schema(
                "Response",
                crate::messages::definition::ros2msg::<S::Response>(),
            ),
        );
    FoxgloveService::builder(names.resolve(name), schema).blocking_handler_fn(move |request| {
        let decoded: S::Request = cdr::decode(request.payload()).map_err(|e| e.to_string())?;
        cdr::encode(&call(decoded)).map_err(|e| e.to_string())
    })
}

/// A Trigger's or SetBool's answer.
fn answer<T>(result: Result<T, OperationError>, done: &str) -> (bool, String) {
    match result {
        Ok(_) => (true, done.to_string()),
        Err(e) => (false, e.to_string()),
    }
}

fn trigger(
    names: &Names,
    name: &str,
    handle: &SimHandle,
    action: impl Fn(&SimHandle) -> (bool, String) + Send + Sync + 'static,
) -> FoxgloveService {
    let handle = handle.clone();
    service::<Trigger::Service>(names, name, move |_| {
        let (success, message) = action(&handle);
        Trigger::Response { success, message }
    })
}

/// Every service, for the server.
pub fn all(handle: &SimHandle, names: &Names) -> Vec<FoxgloveService> {
    let pausing = handle.clone();
    let stepping = handle.clone();
    vec![
        trigger(names, "~/reset", handle, |h| answer(h.reset(), "reset")),
        trigger(names, "~/save_snapshot", handle, |h| {
            answer(
                h.save_named_snapshot(SNAPSHOT),
                &format!("saved snapshot '{SNAPSHOT}'"),
            )
        }),
        trigger(names, "~/restore_snapshot", handle, |h| {
            answer(
                h.restore_named_snapshot(SNAPSHOT),
                &format!("restored snapshot '{SNAPSHOT}'"),
            )
        }),
        service::<SetBool::Service>(names, "~/pause", move |request| {
            let (success, message) = if request.data {
                answer(pausing.pause(), "paused")
            } else {
                answer(
                    pausing.set_mode(crate::config::SimMode::Realtime),
                    "running",
                )
            };
            SetBool::Response { success, message }
        }),
        service::<StepSimulation::Service>(names, "~/step", move |request| {
            let result = match stepping.step(request.steps) {
                Ok(_) => SimResult {
                    result: RESULT_OK,
                    error_message: String::new(),
                },
                Err(e) => SimResult {
                    result: RESULT_FAILED,
                    error_message: e.to_string(),
                },
            };
            StepSimulation::Response { result }
        }),
    ]
}
