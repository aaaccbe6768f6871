//! The ROS 2 backend on ros2-client over RustDDS: pure Rust, no ROS installation to build
//! or run. It speaks to any ROS 2 graph on the same DDS domain: topics carry the shared
//! interface structs as CDR under their DDS type names (`sensor_msgs::msg::dds_::...`),
//! services use the request/reply mapping of the peers' RMW, and the node is announced on
//! `ros_discovery_info` under its name and namespace.
//!
//! rcl's jobs are done here: `--ros-args` namespace, node name and remaps (`names`), the
//! domain and the interfaces from the environment (`ROS_DOMAIN_ID`,
//! `ROS_AUTOMATIC_DISCOVERY_RANGE`) or `ros.dds` in the config, and the action server's
//! goal state machine (`actions`). No ros2-client spinner runs: it would subscribe `/clock`
//! with the wrong type, and the node needs none of its parameter services.
mod actions;

pub use actions::{Goal, GoalRequest};

use super::Error;
use crate::config::{DdsConfig, Remaps, ServiceMapping as MappingChoice};
use crate::messages::{Action, Message, Service, TypeName};
use crate::topics::Qos;
use futures::Stream;
use ros2_client::qos::{Durability, History, WhenFull};
use ros2_client::{Context, MessageTypeName, Name, NodeName, NodeOptions, QosProfile};
use ros2_client::{RmwRequestId, Server, ServiceMapping, ServiceTypeName};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Every service and action can be served here: ros2-client needs no generated code.
pub trait ServiceType: Service {}
impl<S: Service> ServiceType for S {}
pub trait ActionType: Action {}
impl<A: Action> ActionType for A {}

/// A shared interface struct as ros2-client's message: the same serde form.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
struct Wire<T>(T);

impl<T: Message> ros2_client::Message for Wire<T> {}

fn error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::from(format!("{what}: {e}"))
}

fn profile(qos: Qos) -> QosProfile {
    // A full send window drops the sample rather than stalling the node's thread.
    QosProfile::publisher_default()
        .reliability_reliable(WhenFull::Fail)
        .history(History::KeepLast { depth: qos.depth })
        .durability(if qos.transient_local {
            Durability::TransientLocal
        } else {
            Durability::Volatile
        })
}

fn service_mapping(options: &DdsConfig) -> ServiceMapping {
    let cyclone = match options.service_mapping {
        MappingChoice::Cyclonedds => true,
        MappingChoice::Fastrtps => false,
        MappingChoice::Auto => {
            std::env::var("RMW_IMPLEMENTATION").is_ok_and(|rmw| rmw.contains("cyclonedds"))
        }
    };
    if cyclone {
        ServiceMapping::Cyclone
    } else {
        ServiceMapping::Enhanced
    }
}

/// How often the action servers look for requests: a goal, cancel or result request waits
/// at most this long.
const ACTION_POLL: Duration = Duration::from_millis(10);

/// Services use the ROS services profile: reliable, volatile, the last 10.
fn service_qos() -> QosProfile {
    profile(Qos::SERVICES)
}

/// Fields drop in order: the action servers, then the node, then the context (the DDS
/// participant) they belong to.
pub struct Node {
    /// Action servers, polled for goal, cancel and result requests at most every
    /// `ACTION_POLL` (each poll reads the readers' notification sockets: syscalls that a
    /// 1 kHz publishing loop should not pay on every cycle).
    actions: Vec<actions::Poll>,
    actions_polled: Instant,
    node: ros2_client::Node,
    context: Context,
    names: crate::topics::names::Names,
    mapping: ServiceMapping,
    /// Answers held until their client's reply reader is discovered.
    replies: Replies,
}

/// Answers whose client's reply reader the participant has not discovered yet: RustDDS
/// sends a sample only to readers it knows, so an answer sent before would be lost (a client
/// that calls as soon as it sees the service). Each is tried again on every spin, for up to
/// `REPLY_WAIT`, then sent anyway.
#[derive(Clone, Default)]
struct Replies(Rc<std::cell::RefCell<Vec<HeldReply>>>);

/// Sends a held answer when it can; true once sent (or given up).
type HeldReply = Box<dyn FnMut() -> bool>;

/// How long an answer waits for its client's reply reader to be discovered.
const REPLY_WAIT: Duration = Duration::from_secs(5);
/// Answers held at most; beyond, one goes out at once (a flood of clients never seen).
const REPLIES_HELD: usize = 1000;

impl Replies {
    fn retry(&self) {
        if self.0.borrow().is_empty() {
            return;
        }
        self.0.borrow_mut().retain_mut(|send| !send());
    }
}

/// Where the answers of one service go: its reply topic, as the participant sees readers.
struct ReplyRoute {
    participant: ros2_client::dds::rustdds::DomainParticipant,
    /// The reply topic's DDS name (`rr/<service>Reply`).
    topic: String,
    replies: Replies,
    /// Whether a request names its client's participant (rmw_fastrtps's mapping does; the
    /// Cyclone mapping carries an id of its own, and its answers are not held).
    hold: bool,
}

impl ReplyRoute {
    /// Whether a reader of the client that sent `id` is known on the reply topic.
    fn known(&self, id: &RmwRequestId) -> bool {
        if !self.hold {
            return true;
        }
        let prefix = ros2_client::dds::rustdds::GUID::from(id.writer_gid).prefix;
        self.participant.discovered_readers().iter().any(|reader| {
            reader.reader_proxy.remote_reader_guid.prefix == prefix
                && reader.subscription_topic_data.topic_name() == &self.topic
        })
    }
}

impl Node {
    /// The node, named and placed by the `--ros-args` remaps.
    pub fn create(ros_args: &[String], options: &DdsConfig) -> Result<Self, Error> {
        let names = crate::topics::names::Names::new(&Remaps::from_ros_args(ros_args)?);
        let domain = super::participant::domain_id(options)?;
        let addresses = super::participant::interfaces(options);
        let mapping = service_mapping(options);
        log::info!(
            "ROS 2 on DDS (ros2-client): node {} in {}, domain {domain}, interfaces {}, services as {}",
            names.node(),
            names.namespace(),
            addresses
                .as_ref()
                .map_or("all".to_string(), |a| format!("{a:?}")),
            if mapping == ServiceMapping::Cyclone {
                "rmw_cyclonedds"
            } else {
                "rmw_fastrtps"
            },
        );
        let participant = super::participant::build(domain, addresses)?;
        let context =
            Context::from_domain_participant(participant).map_err(|e| error("context", e))?;
        let node_name = NodeName::new(names.namespace(), names.node())
            .map_err(|e| error(&format!("node {}", names.node()), e))?;
        // /rosout is published by the node itself, with rcl's logger names.
        let node_options = NodeOptions::new()
            .enable_rosout(false)
            .start_parameter_services(false);
        let node = context
            .new_node(node_name, node_options)
            .map_err(|e| error("node", e))?;
        Ok(Self {
            actions: Vec::new(),
            actions_polled: Instant::now(),
            node,
            context,
            names,
            mapping,
            replies: Replies::default(),
        })
    }

    pub fn logger_name(&self) -> String {
        self.names.logger()
    }

    /// The node's full name (`/sim/mujoco_bridge`), as parameter events name it.
    pub fn fully_qualified_name(&self) -> String {
        let namespace = self.names.namespace().trim_end_matches('/');
        format!("{namespace}/{}", self.names.node())
    }

    /// Waits up to `timeout` for a wake-up: DDS wakes the executor's tasks (and so this
    /// thread) when data arrives. Then looks at the action servers.
    pub fn spin_once(&mut self, timeout: Duration) {
        // Action requests are polled, not woken for.
        let timeout = match self.actions.is_empty() {
            true => timeout,
            false => timeout.min(ACTION_POLL),
        };
        std::thread::park_timeout(timeout);
        self.replies.retry();
        let now = Instant::now();
        if now.duration_since(self.actions_polled) >= ACTION_POLL {
            self.actions_polled = now;
            for poll in &self.actions {
                poll();
            }
        }
    }

    /// `name` resolved and remapped, as ros2-client's Name.
    fn name(&self, name: &str) -> Result<(String, Name), Error> {
        let resolved = self.names.resolve(name);
        let parsed = Name::parse(&resolved).map_err(|e| error(&resolved, e))?;
        Ok((resolved, parsed))
    }

    /// Topic `name` of message type `type_name`, and its name as resolved.
    fn topic(
        &mut self,
        name: &str,
        type_name: TypeName,
        qos: Qos,
    ) -> Result<(ros2_client::dds::rustdds::Topic, String), Error> {
        let (resolved, name) = self.name(name)?;
        let topic = self
            .node
            .create_topic(
                &name,
                MessageTypeName::new(type_name.package, type_name.name),
                &profile(qos),
            )
            .map_err(|e| error(&resolved, e))?;
        Ok((topic, resolved))
    }

    pub fn publisher<M: Message>(&mut self, name: &str, qos: Qos) -> Result<Publisher<M>, Error> {
        let (topic, _) = self.topic(name, M::type_name(), qos)?;
        let publisher = self
            .node
            .create_publisher(&topic, None)
            .map_err(|e| error(name, e))?;
        Ok(Publisher { publisher })
    }

    /// A publisher of messages serialized already, of type `(package, name)`.
    pub fn raw_publisher(
        &mut self,
        name: &str,
        type_name: TypeName,
        qos: Qos,
    ) -> Result<RawPublisher, Error> {
        let (topic, ros_name) = self.topic(name, type_name, qos)?;
        let publisher = self
            .node
            .create_publisher(&topic, None)
            .map_err(|e| error(name, e))?;
        Ok(RawPublisher {
            publisher,
            participant: self.context.domain_participant(),
            dds_name: format!("rt{ros_name}"),
        })
    }

    /// Destroys `publisher` (its writer goes with it).
    pub fn destroy(&mut self, publisher: RawPublisher) {
        drop(publisher);
    }

    /// The messages of `topic`; one that does not decode is logged and skipped.
    pub fn subscribe<M: Message>(
        &mut self,
        name: &str,
        qos: Qos,
    ) -> Result<impl Stream<Item = M> + Unpin + 'static, Error> {
        let (topic, _) = self.topic(name, M::type_name(), qos)?;
        let subscription = self
            .node
            .create_subscription::<M>(&topic, None)
            .map_err(|e| error(name, e))?;
        let name = name.to_string();
        let messages = futures::stream::unfold(subscription, move |subscription| {
            let name = name.clone();
            async move {
                loop {
                    match subscription.async_take().await {
                        Ok((message, _)) => return Some((message, subscription)),
                        Err(e) => log::warn!("{name}: dropped a message: {e}"),
                    }
                }
            }
        });
        Ok(Box::pin(messages))
    }

    pub fn service<S: ServiceType>(
        &mut self,
        name: &str,
    ) -> Result<impl Stream<Item = ServiceRequest<S>> + Unpin + 'static, Error> {
        let (resolved, service_name) = self.name(name)?;
        let server = self
            .node
            .create_server::<Wire<S::Request>, Wire<S::Response>>(
                self.mapping,
                &service_name,
                &ServiceTypeName::new(S::PACKAGE, S::NAME),
                service_qos(),
                service_qos(),
            )
            .map_err(|e| error(&resolved, e))?;
        let server = Rc::new(server);
        let route = Rc::new(ReplyRoute {
            participant: self.context.domain_participant(),
            topic: format!("rr{resolved}Reply"),
            replies: self.replies.clone(),
            hold: self.mapping != ServiceMapping::Cyclone,
        });
        let requests = futures::stream::unfold(server, move |server| {
            let resolved = resolved.clone();
            let route = route.clone();
            async move {
                loop {
                    match server.async_receive_request().await {
                        Ok((id, Wire(message))) => {
                            let request = ServiceRequest {
                                message,
                                id,
                                server: server.clone(),
                                route,
                            };
                            return Some((request, server));
                        }
                        Err(e) => log::warn!("{resolved}: dropped a request: {e}"),
                    }
                }
            }
        });
        Ok(Box::pin(requests))
    }

    pub fn action_server<A: ActionType>(
        &mut self,
        name: &str,
    ) -> Result<impl Stream<Item = GoalRequest<A>> + Unpin + 'static, Error> {
        let (resolved, action_name) = self.name(name)?;
        let (poll, goals) =
            actions::serve::<A>(&mut self.node, self.mapping, &action_name, &resolved)?;
        self.actions.push(poll);
        Ok(goals)
    }
}

/// A publisher of messages of type `M`.
pub struct Publisher<M: Message> {
    publisher: ros2_client::Publisher<M>,
}

impl<M: Message> Publisher<M> {
    pub fn publish(&self, message: &M) -> Result<(), Error> {
        self.publisher
            .publish(message.clone())
            .map_err(|e| error("publish", e))
    }
}

/// A publisher of messages serialized already (CDR with its header); it may publish from
/// another thread than the node's.
pub struct RawPublisher {
    publisher: ros2_client::Publisher<CdrBody>,
    /// Where its topic's readers are discovered, and its topic's DDS name (`rt/...`).
    participant: ros2_client::dds::rustdds::DomainParticipant,
    dds_name: String,
}

impl RawPublisher {
    pub fn publish(&self, bytes: &[u8]) -> Result<(), Error> {
        let body = bytes.get(4..).unwrap_or_default().to_vec();
        self.publisher
            .publish(CdrBody(body))
            .map_err(|e| error("publish", e))
    }

    /// How many subscriptions the participant has discovered on its topic (from discovery
    /// data: ros2-client's matched-reader count needs its spinner, which this backend does
    /// not run).
    pub fn subscribers(&self) -> usize {
        self.participant
            .discovered_readers()
            .iter()
            .filter(|r| r.subscription_topic_data.topic_name() == &self.dds_name)
            .count()
    }
}

/// A message's CDR after its encapsulation header, which RustDDS writes itself: serialized
/// as a tuple of bytes, which CDR writes as they are (no length, no alignment).
struct CdrBody(Vec<u8>);

impl serde::Serialize for CdrBody {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut tuple = serializer.serialize_tuple(self.0.len())?;
        for byte in &self.0 {
            tuple.serialize_element(byte)?;
        }
        tuple.end()
    }
}

/// The server of service `S`.
type ServerOf<S> = Server<Wire<<S as Service>::Request>, Wire<<S as Service>::Response>>;

/// A service request; `respond` answers it.
pub struct ServiceRequest<S: ServiceType> {
    pub message: S::Request,
    id: RmwRequestId,
    server: Rc<ServerOf<S>>,
    route: Rc<ReplyRoute>,
}

impl<S: ServiceType> ServiceRequest<S> {
    pub fn respond(self, response: S::Response) -> Result<(), Error> {
        if self.route.replies.0.borrow().len() >= REPLIES_HELD || self.route.known(&self.id) {
            return self
                .server
                .send_response(self.id, Wire(response))
                .map_err(|e| error("service response", e));
        }
        let deadline = Instant::now() + REPLY_WAIT;
        let (route, server, id) = (self.route.clone(), self.server, self.id);
        let mut response = Some(response);
        self.route.replies.0.borrow_mut().push(Box::new(move || {
            if !route.known(&id) && Instant::now() < deadline {
                return false;
            }
            if let Some(response) = response.take()
                && let Err(e) = server.send_response(id, Wire(response))
            {
                log::warn!("{}: service response: {e}", route.topic);
            }
            true
        }));
        Ok(())
    }
}
