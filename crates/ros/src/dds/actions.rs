//! Action servers on ros2-client's plain action endpoints, with the goal state machine of
//! rcl_action kept here: goals are accepted and executing at once (as the node's
//! controllers want), a cancel request moves the goals it names to canceling and reaches
//! each goal's task, and a result is sent when both it and the client's request are there,
//! whichever comes first. The last finished goals keep their results for late requests.
//!
//! The endpoints are polled on each spin of the node, which runs every few milliseconds.
use super::{Error, Wire, error, profile, service_qos};
use crate::messages::Action;
use crate::topics::Qos;
use futures::Stream;
use futures::channel::mpsc;
use ros2_client::action::{
    ActionServerQosPolicies, CancelGoalResponse, GetResultResponse, GoalId, GoalInfo,
    GoalStatusEnum, SendGoalResponse,
};
use ros2_client::action_msgs::{CancelGoalResponseEnum, GoalStatus, GoalStatusArray};
use ros2_client::builtin_interfaces::Time;
use ros2_client::{ActionServer, ActionTypeName, Name, RmwRequestId, ServiceMapping};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// Finished goals whose results are kept for clients that ask late.
const FINISHED_KEPT: usize = 16;

type Endpoints<A> = ActionServer<
    Wire<<A as Action>::Goal>,
    Wire<<A as Action>::Result>,
    Wire<<A as Action>::Feedback>,
>;

struct Entry<A: Action> {
    status: GoalStatusEnum,
    accepted: Time,
    result: Option<A::Result>,
    /// Result requests that came before the result.
    waiting: Vec<RmwRequestId>,
    cancels: Option<mpsc::UnboundedSender<CancelRequest>>,
}

struct Server<A: Action> {
    endpoints: Endpoints<A>,
    goals: BTreeMap<GoalId, Entry<A>>,
    /// Finished goals, oldest first: the ones beyond `FINISHED_KEPT` are forgotten.
    finished: VecDeque<GoalId>,
    name: String,
}

impl<A: Action> Server<A> {
    fn publish_statuses(&self) {
        let status_list = self
            .goals
            .iter()
            .map(|(goal_id, entry)| GoalStatus {
                goal_info: GoalInfo {
                    goal_id: *goal_id,
                    stamp: entry.accepted,
                },
                status: entry.status,
            })
            .collect();
        if let Err(e) = self
            .endpoints
            .send_goal_statuses(GoalStatusArray { status_list })
        {
            log::warn!("{}: goal status: {e}", self.name);
        }
    }

    fn send_result(&self, request: RmwRequestId, status: GoalStatusEnum, result: A::Result) {
        let response = GetResultResponse {
            status,
            result: Wire(result),
        };
        if let Err(e) = self.endpoints.send_result(request, response) {
            log::warn!("{}: result: {e}", self.name);
        }
    }

    /// Ends goal `goal_id` with `status` and `result`, answering waiting requests.
    fn finish(&mut self, goal_id: GoalId, status: GoalStatusEnum, result: A::Result) {
        let Some(entry) = self.goals.get_mut(&goal_id) else {
            return;
        };
        if entry.result.is_some() {
            return;
        }
        entry.status = status;
        entry.result = Some(result.clone());
        entry.cancels = None;
        let waiting = std::mem::take(&mut entry.waiting);
        for request in waiting {
            self.send_result(request, status, result.clone());
        }
        self.finished.push_back(goal_id);
        while self.finished.len() > FINISHED_KEPT {
            if let Some(oldest) = self.finished.pop_front() {
                self.goals.remove(&oldest);
            }
        }
        self.publish_statuses();
    }

    fn poll_cancels(&mut self) {
        while let Some((request_id, request)) = match self.endpoints.receive_cancel_request() {
            Ok(request) => request,
            Err(e) => {
                log::warn!("{}: dropped a cancel request: {e}", self.name);
                None
            }
        } {
            // ros2-client keeps the request's fields to itself; its serde form shows them.
            let info = serde_json::to_value(&request)
                .ok()
                .and_then(|mut v| serde_json::from_value::<GoalInfo>(v["goal_info"].take()).ok());
            let Some(info) = info else {
                continue;
            };
            let response = self.cancel(&info);
            if let Err(e) = self.endpoints.send_cancel_response(request_id, response) {
                log::warn!("{}: cancel response: {e}", self.name);
            }
        }
    }

    /// The goals a cancel request names (rcl_action's rules): all when both its id and
    /// stamp are zero, the one with its id, and those accepted at or before its stamp.
    fn cancel(&mut self, info: &GoalInfo) -> CancelGoalResponse {
        let stamp = info.stamp.to_nanos();
        let named = |id: &GoalId, entry: &Entry<A>| {
            (info.goal_id == GoalId::ZERO && stamp == 0)
                || *id == info.goal_id
                || (stamp != 0 && entry.accepted.to_nanos() <= stamp)
        };
        let mut goals_canceling = Vec::new();
        for (id, entry) in self.goals.iter_mut() {
            if entry.status != GoalStatusEnum::Executing || !named(id, entry) {
                continue;
            }
            entry.status = GoalStatusEnum::Canceling;
            if let Some(cancels) = &entry.cancels {
                let _ = cancels.unbounded_send(CancelRequest);
            }
            goals_canceling.push(GoalInfo {
                goal_id: *id,
                stamp: entry.accepted,
            });
        }
        // As rcl_action answers: a request for one goal (its id, no stamp) that cancels
        // nothing says why; every other request answers none, with the goals it cancels
        // (possibly none).
        let one_goal = info.goal_id != GoalId::ZERO && stamp == 0;
        let return_code = if !one_goal || !goals_canceling.is_empty() {
            CancelGoalResponseEnum::None
        } else if self.goals.contains_key(&info.goal_id) {
            CancelGoalResponseEnum::GoalTerminated
        } else {
            CancelGoalResponseEnum::UnknownGoal
        };
        if !goals_canceling.is_empty() {
            self.publish_statuses();
        }
        CancelGoalResponse {
            return_code,
            goals_canceling,
        }
    }

    fn poll_results(&mut self) {
        while let Some((request, asked)) = match self.endpoints.receive_result_request() {
            Ok(request) => request,
            Err(e) => {
                log::warn!("{}: dropped a result request: {e}", self.name);
                None
            }
        } {
            match self.goals.get_mut(&asked.goal_id) {
                Some(entry) => match &entry.result {
                    Some(result) => {
                        let (status, result) = (entry.status, result.clone());
                        self.send_result(request, status, result);
                    }
                    None => entry.waiting.push(request),
                },
                // An unknown goal gets status unknown, as from rcl_action.
                None => self.send_result(request, GoalStatusEnum::Unknown, A::Result::default()),
            }
        }
    }
}

/// Polls an action server's endpoints.
pub type Poll = Box<dyn Fn()>;

/// Creates the endpoints of action `name`; gives the function that polls them and the
/// stream of new goals.
pub fn serve<A: Action>(
    node: &mut ros2_client::Node,
    mapping: ServiceMapping,
    name: &Name,
    resolved: &str,
) -> Result<(Poll, impl Stream<Item = GoalRequest<A>> + Unpin + use<A>), Error> {
    let services = service_qos();
    let qos = ActionServerQosPolicies {
        goal_service: services.clone(),
        result_service: services.clone(),
        cancel_service: services.clone(),
        feedback_publisher: services,
        status_publisher: profile(Qos::LATCHED),
    };
    let endpoints = node
        .create_action_server(
            mapping,
            name,
            &ActionTypeName::new(A::PACKAGE, A::NAME),
            qos,
        )
        .map_err(|e| error(resolved, e))?;
    let server = Rc::new(RefCell::new(Server::<A> {
        endpoints,
        goals: BTreeMap::new(),
        finished: VecDeque::new(),
        name: resolved.to_string(),
    }));
    let (new_goals, goals) = mpsc::unbounded();
    let polled = server.clone();
    let poll = move || {
        let mut server = polled.borrow_mut();
        loop {
            match server.endpoints.receive_goal() {
                Ok(Some((request, goal))) => {
                    let _ = new_goals.unbounded_send(GoalRequest {
                        goal: goal.goal.0,
                        goal_id: goal.goal_id,
                        request,
                        server: polled.clone(),
                    });
                }
                Ok(None) => break,
                Err(e) => log::warn!("{}: dropped a goal: {e}", server.name),
            }
        }
        server.poll_cancels();
        server.poll_results();
    };
    Ok((Box::new(poll), goals))
}

/// A new goal, to accept (which gives its handle and its cancel requests).
pub struct GoalRequest<A: Action> {
    pub goal: A::Goal,
    goal_id: GoalId,
    request: RmwRequestId,
    server: Rc<RefCell<Server<A>>>,
}

impl<A: Action> GoalRequest<A> {
    pub fn accept(
        self,
    ) -> Result<(Goal<A>, impl Stream<Item = CancelRequest> + Unpin + 'static), Error> {
        let mut server = self.server.borrow_mut();
        let accepted = Time::now();
        let response = SendGoalResponse {
            accepted: true,
            stamp: accepted,
        };
        server
            .endpoints
            .send_goal_response(self.request, response)
            .map_err(|e| error(&server.name, e))?;
        let (cancels, cancel_requests) = mpsc::unbounded();
        server.goals.insert(
            self.goal_id,
            Entry {
                status: GoalStatusEnum::Executing,
                accepted,
                result: None,
                waiting: Vec::new(),
                cancels: Some(cancels),
            },
        );
        server.publish_statuses();
        drop(server);
        let goal = Goal {
            goal: self.goal,
            goal_id: self.goal_id,
            server: self.server,
        };
        Ok((goal, cancel_requests))
    }

    /// Answers that the goal is not accepted.
    pub fn reject(self) -> Result<(), Error> {
        let server = self.server.borrow();
        let response = SendGoalResponse {
            accepted: false,
            stamp: Time::now(),
        };
        server
            .endpoints
            .send_goal_response(self.request, response)
            .map_err(|e| error(&server.name, e))
    }
}

/// An accepted goal: feedback while it runs, then one of succeed, abort or cancel.
pub struct Goal<A: Action> {
    pub goal: A::Goal,
    goal_id: GoalId,
    server: Rc<RefCell<Server<A>>>,
}

impl<A: Action> Clone for Goal<A> {
    fn clone(&self) -> Self {
        Self {
            goal: self.goal.clone(),
            goal_id: self.goal_id,
            server: self.server.clone(),
        }
    }
}

impl<A: Action> Goal<A> {
    pub fn publish_feedback(&self, feedback: A::Feedback) -> Result<(), Error> {
        let server = self.server.borrow();
        server
            .endpoints
            .send_feedback(self.goal_id, Wire(feedback))
            .map_err(|e| error(&server.name, e))
    }

    pub fn succeed(&mut self, result: A::Result) -> Result<(), Error> {
        self.end(GoalStatusEnum::Succeeded, result)
    }

    pub fn abort(&mut self, result: A::Result) -> Result<(), Error> {
        self.end(GoalStatusEnum::Aborted, result)
    }

    pub fn cancel(&mut self, result: A::Result) -> Result<(), Error> {
        self.end(GoalStatusEnum::Canceled, result)
    }

    fn end(&mut self, status: GoalStatusEnum, result: A::Result) -> Result<(), Error> {
        self.server
            .borrow_mut()
            .finish(self.goal_id, status, result);
        Ok(())
    }
}

/// A request to cancel a running goal; the server has accepted it already.
pub struct CancelRequest;

impl CancelRequest {
    pub fn accept(self) {}

    /// The server answered already (it cancels only running goals).
    pub fn reject(self) {}
}
