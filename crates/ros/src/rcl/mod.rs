//! The ROS 2 backend on r2r (rcl, with the RMW of the ROS 2 installation). Messages travel
//! as CDR bytes made from the shared interface structs; services and actions go through
//! r2r's generated types, converted through the same bytes.
//!
//! `--ros-args` (remaps, namespace, parameters) reach rcl from the process arguments.
mod native;

use super::Error;
use crate::messages::{Message, TypeName, cdr};
use crate::topics::Qos;
use futures::{FutureExt, Stream, StreamExt};
use r2r::{WrappedActionTypeSupport, WrappedServiceTypeSupport, WrappedTypesupport};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

pub use native::{ActionType, ServiceType};

impl From<r2r::Error> for Error {
    fn from(e: r2r::Error) -> Self {
        Self::from(e.to_string())
    }
}

fn profile(qos: Qos) -> r2r::QosProfile {
    let profile = r2r::QosProfile::default().reliable().keep_last(qos.depth);
    if qos.transient_local {
        profile.transient_local()
    } else {
        profile.volatile()
    }
}

/// Our interface value as r2r's generated one, through their common CDR bytes.
fn to_native<T: serde::Serialize, N: WrappedTypesupport>(value: &T) -> Result<N, Error> {
    Ok(N::from_serialized_bytes(&cdr::encode(value)?)?)
}

fn from_native<N: WrappedTypesupport, T: serde::de::DeserializeOwned>(
    value: &N,
) -> Result<T, Error> {
    Ok(cdr::decode(&value.to_serialized_bytes()?)?)
}

pub struct Node {
    node: r2r::Node,
    /// Subscriptions whose streams were dropped (their robot went), kept for the next
    /// subscription to the same topic.
    idle_subscriptions: IdleSubscriptions,
}

/// Where a topic's subscription is, with its type and QoS.
type SubscriptionKey = (String, String, Qos);
type RawStream = Box<dyn Stream<Item = Vec<u8>> + Unpin + Send>;
/// rcl has no call that destroys a subscription, and r2r ends one only when a message arrives
/// after its stream was dropped: a deleted robot's command topics, which nobody publishes to
/// any more, would keep their subscriptions for the rest of the run, one more at each spawn
/// of the same robot. Dropped streams come here instead, and a robot spawned again under
/// the same name takes its subscriptions over; one that a message reaches while it waits
/// here is let go, and r2r ends it at the next.
type IdleSubscriptions = Arc<Mutex<Vec<(SubscriptionKey, RawStream)>>>;

/// A subscription's stream that goes back to the node's idle ones when dropped.
struct Reusable {
    key: SubscriptionKey,
    stream: Option<RawStream>,
    idle: IdleSubscriptions,
}

impl Stream for Reusable {
    type Item = Vec<u8>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
        match self.stream.as_mut() {
            Some(stream) => stream.poll_next_unpin(cx),
            None => Poll::Ready(None),
        }
    }
}

impl Drop for Reusable {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push((self.key.clone(), stream));
        }
    }
}

impl Node {
    /// The node; rcl applies the process's `--ros-args` (namespace, remaps).
    pub fn create(_ros_args: &[String], _dds: &crate::config::DdsConfig) -> Result<Self, Error> {
        let context = r2r::Context::create()?;
        Ok(Self {
            node: r2r::Node::create(context, crate::config::NODE_NAME, "")?,
            idle_subscriptions: Arc::default(),
        })
    }

    /// The logger name of the node (`sim.mujoco_bridge` under `/sim`).
    pub fn logger_name(&self) -> String {
        self.node.logger().to_string()
    }

    /// The node's full name (`/sim/mujoco_bridge`), as parameter events name it.
    pub fn fully_qualified_name(&self) -> String {
        self.node
            .fully_qualified_name()
            .unwrap_or_else(|_| format!("/{}", crate::config::NODE_NAME))
    }

    /// Handles what arrived, waiting up to `timeout` for something to arrive.
    pub fn spin_once(&mut self, timeout: Duration) {
        self.node.spin_once(timeout);
        let mut idle = self
            .idle_subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        idle.retain_mut(|(_, stream)| stream.next().now_or_never().is_none());
    }

    pub fn publisher<M: Message>(&mut self, topic: &str, qos: Qos) -> Result<Publisher<M>, Error> {
        Ok(Publisher {
            raw: self.raw_publisher(topic, M::type_name(), qos)?,
            message: PhantomData,
        })
    }

    /// A publisher of messages serialized already, of type `type_name`.
    pub fn raw_publisher(
        &mut self,
        topic: &str,
        type_name: TypeName,
        qos: Qos,
    ) -> Result<RawPublisher, Error> {
        let publisher =
            self.node
                .create_publisher_untyped(topic, &type_name.ros(), profile(qos))?;
        Ok(RawPublisher { publisher })
    }

    /// Destroys `publisher` (rcl keeps a publisher until its node destroys it).
    pub fn destroy(&mut self, publisher: RawPublisher) {
        self.node.destroy_publisher_untyped(publisher.publisher);
    }

    /// The messages of `topic`; one that does not decode is logged and skipped.
    pub fn subscribe<M: Message>(
        &mut self,
        topic: &str,
        qos: Qos,
    ) -> Result<impl Stream<Item = M> + Unpin + 'static, Error> {
        let key = (topic.to_string(), M::ros_type(), qos);
        let idle = {
            let mut idle = self
                .idle_subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let found = idle.iter().position(|(k, _)| *k == key);
            found.map(|k| idle.swap_remove(k).1)
        };
        let stream = match idle {
            Some(mut stream) => {
                // A message that came while nobody listened would have let it go (spin_once):
                // what is still queued arrived since, for the robot that went.
                while let Some(Some(_)) = stream.next().now_or_never() {}
                stream
            }
            None => Box::new(
                self.node
                    .subscribe_raw(topic, &M::ros_type(), profile(qos))?,
            ),
        };
        let bytes = Reusable {
            key,
            stream: Some(stream),
            idle: self.idle_subscriptions.clone(),
        };
        let topic = topic.to_string();
        Ok(bytes.filter_map(move |bytes| {
            let message = cdr::decode::<M>(&bytes)
                .map_err(|e| log::warn!("{topic}: dropped a message: {e}"))
                .ok();
            std::future::ready(message)
        }))
    }

    pub fn service<S: ServiceType>(
        &mut self,
        name: &str,
    ) -> Result<impl Stream<Item = ServiceRequest<S>> + Unpin + 'static, Error> {
        let requests = self
            .node
            .create_service::<S::Native>(name, profile(Qos::SERVICES))?;
        let name = name.to_string();
        Ok(requests.filter_map(move |mut request| {
            // Read once, then emptied: the copy kept for a repeated answer carries no payload.
            let native = std::mem::take(&mut request.message);
            let request = from_native(&native)
                .map(|message| ServiceRequest { message, request })
                .map_err(|e| log::warn!("{name}: dropped a request: {e}"))
                .ok();
            std::future::ready(request)
        }))
    }

    pub fn action_server<A: ActionType>(
        &mut self,
        name: &str,
    ) -> Result<impl Stream<Item = GoalRequest<A>> + Unpin + 'static, Error> {
        let requests = self.node.create_action_server::<A::Native>(name)?;
        let name = name.to_string();
        Ok(requests.filter_map(move |request| {
            let request = match from_native(&request.goal) {
                Ok(goal) => Some(GoalRequest { goal, request }),
                Err(e) => {
                    // Answered all the same: a goal left without one hangs its client.
                    log::warn!("{name}: rejected a goal that does not convert: {e}");
                    let _ = request.reject();
                    None
                }
            };
            std::future::ready(request)
        }))
    }
}

/// A publisher of serialized messages (CDR with its header) of one type; it may publish
/// from another thread than the node's.
pub struct RawPublisher {
    publisher: r2r::PublisherUntyped,
}

impl RawPublisher {
    pub fn publish(&self, bytes: &[u8]) -> Result<(), Error> {
        Ok(self.publisher.publish_raw(bytes)?)
    }

    /// How many subscriptions of other processes it has (0 when rcl cannot say).
    pub fn subscribers(&self) -> usize {
        self.publisher
            .get_inter_process_subscription_count()
            .unwrap_or(0)
    }
}

/// A publisher of messages of type `M`.
pub struct Publisher<M> {
    raw: RawPublisher,
    message: PhantomData<fn(&M)>,
}

impl<M: Message> Publisher<M> {
    pub fn publish(&self, message: &M) -> Result<(), Error> {
        self.raw.publish(&cdr::encode(message)?)
    }
}

/// A service request; `respond` answers it.
pub struct ServiceRequest<S: ServiceType> {
    pub message: S::Request,
    request: r2r::ServiceRequest<S::Native>,
}

impl<S: ServiceType> ServiceRequest<S> {
    pub fn respond(self, response: S::Response) -> Result<(), Error> {
        let native: <S::Native as WrappedServiceTypeSupport>::Response = to_native(&response)?;
        match self.request.clone().respond(native) {
            // Fast DDS refuses to answer ("client will not receive response") while the
            // client's response reader is not matched yet: a client that called as soon as
            // it saw the service. Answering again once discovery caught up keeps the call
            // from hanging.
            Err(r2r::Error::RCL_RET_TIMEOUT) => {
                respond_later::<S>(self.request, response);
                Ok(())
            }
            answered => Ok(answered?),
        }
    }
}

/// How often, and how far apart, a refused answer is sent again.
const RESPOND_TRIES: u32 = 50;
const RESPOND_RETRY: Duration = Duration::from_millis(100);

/// Sends a refused answer again from a helper thread, so the node thread goes on.
fn respond_later<S: ServiceType>(request: r2r::ServiceRequest<S::Native>, response: S::Response) {
    let retry = move || {
        for _ in 0..RESPOND_TRIES {
            std::thread::sleep(RESPOND_RETRY);
            let native = match to_native(&response) {
                Ok(native) => native,
                Err(e) => return log::warn!("{}: could not answer: {e}", S::NAME),
            };
            match request.clone().respond(native) {
                Ok(()) => return,
                Err(r2r::Error::RCL_RET_TIMEOUT) => continue,
                Err(e) => return log::warn!("{}: could not answer: {e}", S::NAME),
            }
        }
        log::warn!(
            "{}: the client never matched; its call goes unanswered",
            S::NAME
        );
    };
    if let Err(e) = std::thread::Builder::new()
        .name("ros-respond".into())
        .spawn(retry)
    {
        log::warn!("{}: could not start a thread to answer again: {e}", S::NAME);
    }
}

/// A new goal, to accept (which gives its handle and its cancel requests).
pub struct GoalRequest<A: ActionType> {
    pub goal: A::Goal,
    request: r2r::ActionServerGoalRequest<A::Native>,
}

impl<A: ActionType> GoalRequest<A> {
    pub fn accept(
        self,
    ) -> Result<(Goal<A>, impl Stream<Item = CancelRequest> + Unpin + 'static), Error> {
        let (native, cancels) = self.request.accept()?;
        Ok((
            Goal {
                goal: self.goal,
                native,
            },
            cancels.map(|request| CancelRequest { request }),
        ))
    }

    /// Answers that the goal is not accepted.
    pub fn reject(self) -> Result<(), Error> {
        Ok(self.request.reject()?)
    }
}

/// An accepted goal: feedback while it runs, then one of succeed, abort or cancel.
pub struct Goal<A: ActionType> {
    pub goal: A::Goal,
    native: r2r::ActionServerGoal<A::Native>,
}

impl<A: ActionType> Clone for Goal<A> {
    fn clone(&self) -> Self {
        Self {
            goal: self.goal.clone(),
            native: self.native.clone(),
        }
    }
}

type NativeResult<A> = <<A as ActionType>::Native as WrappedActionTypeSupport>::Result;

impl<A: ActionType> Goal<A> {
    pub fn publish_feedback(&self, feedback: A::Feedback) -> Result<(), Error> {
        Ok(self.native.publish_feedback(to_native(&feedback)?)?)
    }

    pub fn succeed(&mut self, result: A::Result) -> Result<(), Error> {
        let native: NativeResult<A> = to_native(&result)?;
        Ok(self.native.succeed(native)?)
    }

    pub fn abort(&mut self, result: A::Result) -> Result<(), Error> {
        let native: NativeResult<A> = to_native(&result)?;
        Ok(self.native.abort(native)?)
    }

    pub fn cancel(&mut self, result: A::Result) -> Result<(), Error> {
        let native: NativeResult<A> = to_native(&result)?;
        Ok(self.native.cancel(native)?)
    }
}

/// A request to cancel a running goal.
pub struct CancelRequest {
    request: r2r::ActionServerCancelRequest,
}

impl CancelRequest {
    pub fn accept(self) {
        self.request.accept();
    }

    /// Answers that the goal cannot be canceled (it has ended).
    pub fn reject(self) {
        self.request.reject();
    }
}
