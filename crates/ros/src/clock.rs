//! rosgraph_msgs/Clock on `/clock`, the simulator's heartbeat: every node on sim time waits
//! on it. It goes out from a thread of its own that reads the one atomic the physics thread
//! writes each step: the sim time whenever it moved (at most `ros.rates.clock` times a
//! second), and again every `WHILE_PAUSED` while it stands still, so that nodes started
//! during a pause get a time.
//!
//! Nothing another topic does may hold it back, so it has a DDS participant of its own, on
//! RustDDS in every build (UDP only, limited to loopback as the node is): a participant's
//! writers share one send path, and in Fast DDS (the r2r node's RMW) that path is held while
//! discovery opens a newcomer's shared-memory port (hundreds of milliseconds when that
//! process is slow to start on a busy machine) and while the node's lower-priority thread
//! sends an image. The thread runs one SCHED_FIFO level under the physics thread (or at its
//! raised niceness), and the participant's threads, started from it, inherit that. A send
//! that finds the reliable window full is counted as failed and never waits. It writes no
//! log line itself: what it has to say goes to a thread of its own (`notes`).
//!
//! RustDDS keeps the topic data of every remote endpoint it learned of for as long as its
//! topic lives anywhere (its topic table is pruned per topic, not per endpoint or
//! participant gone): about 14 KB for each participant that came and went (heaptrack of the
//! soak), some hundred bytes for each subscription a live process made and dropped. So once
//! `ros.dds.clock_renew_after` remote endpoints have come and gone the spare participant
//! (below) takes over, once it has found every /clock reader the old one knows; the old one
//! goes, and what it held with it, and a new spare is made. One that does not find them all
//! in `RENEWAL_MATCH_WAIT` is replaced by another, never sent from.
//!
//! A reliable RustDDS writer holds every sample some reader has not acknowledged, and once
//! `WINDOW` are held every send fails, for every reader: a reader that stopped (a process
//! stopped in a debugger) or whose acknowledgements do not arrive would stop /clock for all
//! until its participant's lease ends, or for good. So a spare participant is kept warm,
//! silent, matched with the readers: a send that finds the window full hands over to it and
//! goes out from it at once (at 500 Hz that is 16 s after the reader stopped answering), and
//! the renewal above is the same hand-over.
mod notes;

use super::Error;
use crate::config::DdsConfig;
use crate::config::SimMode;
use crate::messages::rosgraph_msgs::msg::Clock as ClockMsg;
use crate::sim::SimHandle;
use crate::sim::priority;
use crate::topics::PublishCounters;
use crate::topics::every::Every;
use crate::topics::names::Names;
use notes::{Note, Notes};
use ros2_client::dds::rustdds::{
    DomainParticipantStatusEvent, DomainParticipantStatusListener, GUID, StatusEvented, Topic,
    TopicDescription,
};
use ros2_client::qos::{Durability, History, WhenFull};
use ros2_client::{Context, MessageTypeName, Name, NodeName, NodeOptions, QosProfile, WriteError};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const WHILE_PAUSED: Duration = Duration::from_millis(100);
/// The longest sleep, so that a stop or a new rate is seen soon.
const LONGEST_WAIT: Duration = Duration::from_millis(50);
/// Samples kept for retransmission to a reliable reader that missed some.
const HISTORY: usize = 100;
/// Samples not yet acknowledged by every reliable reader after which a send fails (RustDDS's
/// reliable window, its default: ros2-client sets no resource limits).
const WINDOW: usize = 8192;
/// How often the participant's departed endpoints are counted (and a renewal moves on).
const RENEWAL_CHECK: Duration = Duration::from_secs(1);
/// How long a new participant may take to find the old one's readers before it is given
/// up. A reader that left without saying so stays known to the old one until its lease
/// ends (20 s for Fast DDS peers), so the set is taken again at each check.
const RENEWAL_MATCH_WAIT: Duration = Duration::from_secs(30);
/// How long the old participant goes on after the new one found every reader: a reader
/// learns of the new writer about when the writer learns of it, not at the same moment (in
/// a test a reader waited over 1 s for /clock when the new one took over at once).
const RENEWAL_SETTLE: Duration = Duration::from_secs(2);

/// Where and how /clock goes out.
#[derive(Clone)]
pub struct ClockSettings {
    /// Messages a second at most (0: none).
    pub hz: f64,
    /// The node's names after `--ros-args` (its namespace and remaps apply to /clock too).
    pub names: Names,
    pub dds: DdsConfig,
    /// `sim.realtime_priority`: the thread asks for one level less.
    pub realtime_priority: u8,
    /// Remote endpoints come and gone after which a new participant takes over (0: never).
    pub renew_after: u32,
}

/// The clock's thread; dropping it stops the thread and waits for it.
pub struct ClockThread {
    stop: Arc<AtomicBool>,
    hz_bits: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
    /// Writes what the thread says; drops after it, so its last notes are written.
    _notes: notes::NoteWriter,
}

impl ClockThread {
    /// Starts the thread, which raises its priority, makes its participant and writer, and
    /// publishes; returns once the writer is up, or why it could not be made.
    pub fn start(
        handle: SimHandle,
        settings: ClockSettings,
        publishing: Arc<PublishCounters>,
    ) -> Result<Self, Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let hz_bits = Arc::new(AtomicU64::new(settings.hz.to_bits()));
        let (ready, made) = std::sync::mpsc::channel::<Result<(), Error>>();
        let (stopping, rate) = (stop.clone(), hz_bits.clone());
        let (notes, note_writer) =
            notes::start().map_err(|e| Error::from(format!("/clock log thread: {e}")))?;
        let thread = std::thread::Builder::new()
            .name("ros-clock".into())
            .spawn(move || {
                raise(settings.realtime_priority);
                let writer = match ClockWriter::create(&settings, Role::Sending) {
                    Ok(writer) => {
                        let _ = ready.send(Ok(()));
                        writer
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                let renewal = Renewal::new(settings, notes.clone());
                run(
                    &handle,
                    writer,
                    renewal,
                    &stopping,
                    &rate,
                    &publishing,
                    &notes,
                );
            })
            .map_err(|e| Error::from(format!("/clock thread: {e}")))?;
        let clock = Self {
            stop,
            hz_bits,
            thread: Some(thread),
            _notes: note_writer,
        };
        match made.recv() {
            Ok(Ok(())) => Ok(clock),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::from(
                "/clock thread ended before its writer was made".to_string(),
            )),
        }
    }

    /// A live change of `ros.rates.clock` (or a world loaded with another one).
    pub fn set_rate(&self, hz: f64) {
        self.hz_bits.store(hz.to_bits(), Ordering::Relaxed);
    }
}

impl Drop for ClockThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One SCHED_FIFO level under the physics thread, else a raised niceness. What the
/// physics thread got is logged once, at start; the clock follows the same permission.
fn raise(realtime_priority: u8) {
    let level = match realtime_priority {
        0 => 0,
        p => p.saturating_sub(1).max(1),
    };
    let _ = priority::raise(level);
}

/// The loop: due at the rate, sent when the time moved (or stood still for WHILE_PAUSED).
fn run(
    handle: &SimHandle,
    mut writer: ClockWriter,
    mut renewal: Renewal,
    stopping: &AtomicBool,
    rate: &AtomicU64,
    publishing: &PublishCounters,
    notes: &Notes,
) {
    let mut pacing = Pacing::new(f64::from_bits(rate.load(Ordering::Relaxed)));
    let mut message = ClockMsg::default();
    let mut gaps = GapWatch::default();
    while !stopping.load(Ordering::Relaxed) {
        renewal.check(&mut writer, Instant::now());
        pacing.follow_rate(f64::from_bits(rate.load(Ordering::Relaxed)));
        let wait = pacing.wait(Instant::now());
        if !wait.is_zero() {
            std::thread::sleep(wait);
            continue;
        }
        let woke = Instant::now();
        let due = pacing.every.deadline();
        let sim_time = handle.sim_time();
        if pacing.send(woke, sim_time) {
            message.clock = crate::topics::convert::time(sim_time);
            let mut sent = writer.send(&message);
            if sent == Sent::WindowFull {
                renewal.window_full(&mut writer);
                sent = writer.send(&message);
            }
            let turn = Turn {
                woke,
                due,
                sim_time,
                hz: pacing.hz,
                running: handle.mode() != SimMode::Paused,
            };
            if let Some(gap) = gaps.note(turn) {
                notes.say(gap);
            }
            publishing.count(sent == Sent::Out);
        }
    }
}

/// Says why, when a message follows the last by more than `GAP_PERIODS` periods while the
/// simulation runs: how far sim time moved (little: physics did not step), how late the
/// thread woke (it was not scheduled) and how long the last send took (it blocked). The
/// note's line is written at most once a second, with the count held back (`notes`).
#[derive(Default)]
struct GapWatch {
    /// The last message: when its turn came, its sim time, and when its send returned.
    last: Option<(Instant, f64, Instant)>,
    /// Whether sim time has moved since the thread started: before physics's first step
    /// (the world still being set up) a wait is no gap.
    stepping: bool,
}

/// Periods between two messages beyond which the interval is logged.
const GAP_PERIODS: f64 = 10.0;

/// One turn of the clock thread that sent a message.
struct Turn {
    woke: Instant,
    due: Option<Instant>,
    sim_time: f64,
    hz: f64,
    running: bool,
}

impl GapWatch {
    /// Notes a sent message; its gap, when its interval was one.
    fn note(&mut self, turn: Turn) -> Option<Note> {
        let returned = Instant::now();
        let mut gap = None;
        if let Some((last_woke, last_sim, last_returned)) = self.last {
            let interval = turn.woke - last_woke;
            if self.stepping
                && turn.running
                && turn.hz > 0.0
                && interval.as_secs_f64() > GAP_PERIODS / turn.hz
            {
                gap = Some(Note::Gap {
                    interval,
                    sim_moved: turn.sim_time - last_sim,
                    late: turn
                        .due
                        .map_or(Duration::ZERO, |d| turn.woke.saturating_duration_since(d)),
                    last_send: last_returned - last_woke,
                });
            }
            self.stepping |= turn.sim_time != last_sim;
        }
        self.last = Some((turn.woke, turn.sim_time, returned));
        gap
    }
}

/// Keeps a spare participant, silent, beside the one that sends, and hands over to it when
/// the current one has seen `renew_after` remote endpoints come and go (once the spare has
/// found every reader the current one knows, `RENEWAL_SETTLE` ago), or at once when the
/// current one's window is full. The spare is made on a thread of its own at the clock's
/// priority; the old participant is dropped on another.
///
/// Why a spare and not a new writer on the same participant: a participant can keep matching
/// a reader that acknowledges nothing (seen in the soak: three writers made anew on one
/// participant, 16 s apart, each filled by the same reader, and a soak reader that never
/// matched the last one waited 25 s for /clock, until a new participant took over), while
/// the spare, made later, does not know it. A spare that is warm has matched the readers
/// already: they get the next message from it with no wait.
struct Renewal {
    settings: ClockSettings,
    next_check: Instant,
    state: Renewing,
    notes: Notes,
}

enum Renewing {
    Making(Receiver<Result<ClockWriter, Error>>),
    /// The spare, silent (sending from both could show a reader a retransmitted older time
    /// after a newer one); `found_since`: since when it knows every reader the current one
    /// does.
    Spare {
        next: Box<ClockWriter>,
        since: Instant,
        found_since: Option<Instant>,
    },
    /// Making one failed; the next try is at `retry`.
    Waiting {
        retry: Instant,
    },
}

/// How long after a spare could not be made the next is tried.
const SPARE_RETRY: Duration = Duration::from_secs(10);

impl Renewal {
    fn new(settings: ClockSettings, notes: Notes) -> Self {
        let state = make_spare(&settings);
        Self {
            settings,
            next_check: Instant::now() + RENEWAL_CHECK,
            state,
            notes,
        }
    }

    /// Moves the renewal on, at most every `RENEWAL_CHECK`.
    fn check(&mut self, writer: &mut ClockWriter, now: Instant) {
        if now < self.next_check {
            return;
        }
        self.next_check = now + RENEWAL_CHECK;
        if let Some(e) = writer.step_promotion(now) {
            self.notes.say(Note::NodeFailed(e));
        }
        let departed = writer.departed();
        let renew = self.settings.renew_after > 0 && departed >= self.settings.renew_after;
        self.state = match std::mem::replace(&mut self.state, Renewing::Waiting { retry: now }) {
            Renewing::Making(made) => match made.try_recv() {
                Ok(Ok(next)) => Renewing::Spare {
                    next: Box::new(next),
                    since: now,
                    found_since: None,
                },
                Ok(Err(e)) => {
                    self.notes.say(Note::SpareFailed(e));
                    Renewing::Waiting {
                        retry: now + SPARE_RETRY,
                    }
                }
                Err(TryRecvError::Empty) => Renewing::Making(made),
                Err(TryRecvError::Disconnected) => Renewing::Waiting {
                    retry: now + SPARE_RETRY,
                },
            },
            Renewing::Waiting { retry } if now >= retry => make_spare(&self.settings),
            waiting @ Renewing::Waiting { .. } => waiting,
            Renewing::Spare {
                mut next,
                since,
                found_since,
            } => {
                next.departed();
                let missing = writer.readers().difference(&next.readers()).count();
                let found_since = (missing == 0).then(|| found_since.unwrap_or(now));
                if renew && found_since.is_some_and(|found| now - found >= RENEWAL_SETTLE) {
                    self.notes.say(Note::TookOver {
                        gone: writer.departures.gone,
                    });
                    self.hand_over(writer, next)
                } else if renew && now - since >= RENEWAL_MATCH_WAIT {
                    self.give_up(writer, next, missing)
                } else {
                    Renewing::Spare {
                        next,
                        since,
                        found_since,
                    }
                }
            }
        };
    }

    /// The current writer's window is full: it sends to nobody. The spare takes over now,
    /// whatever it has found (it reaches at least the readers that answer); without one the
    /// writer is made anew on the same participant until there is.
    fn window_full(&mut self, writer: &mut ClockWriter) {
        match std::mem::replace(
            &mut self.state,
            Renewing::Waiting {
                retry: Instant::now(),
            },
        ) {
            Renewing::Spare { next, .. } => {
                self.notes.say(Note::WindowFull { handed_over: true });
                self.state = self.hand_over(writer, next);
            }
            other => {
                self.state = other;
                self.notes.say(Note::WindowFull { handed_over: false });
                if let Err(e) = writer.replace_writer() {
                    self.notes.say(Note::WriterFailed(e));
                }
            }
        }
    }

    /// Sends from `next` from now on, drops the old participant aside and makes a new spare.
    fn hand_over(&mut self, writer: &mut ClockWriter, next: Box<ClockWriter>) -> Renewing {
        drop_aside(std::mem::replace(writer, *next));
        // Its departures count from now: the spare saw as many as the old one while it
        // waited, and counting those took over again seconds later (seen in the soak).
        writer.departed();
        writer.departures.gone = 0;
        writer.promote();
        make_spare(&self.settings)
    }

    /// Keeps sending from the current participant: a reader that the spare did not find
    /// would get no /clock from it (seen: a reader waited 95 s for the renewal after). A new
    /// spare is made, and the renewal tried again after as many departures.
    fn give_up(
        &mut self,
        writer: &mut ClockWriter,
        next: Box<ClockWriter>,
        missing: usize,
    ) -> Renewing {
        self.notes.say(Note::GaveUp {
            missing,
            waited: RENEWAL_MATCH_WAIT,
            renew_after: self.settings.renew_after,
        });
        writer.departures.gone = 0;
        drop_aside(*next);
        make_spare(&self.settings)
    }
}

/// Starts making a spare participant and writer on a thread of their own.
fn make_spare(settings: &ClockSettings) -> Renewing {
    let (made, receive) = std::sync::mpsc::channel();
    let settings = settings.clone();
    let spawned = std::thread::Builder::new()
        .name("ros-clock-new".into())
        .spawn(move || {
            raise(settings.realtime_priority);
            let _ = made.send(ClockWriter::create(&settings, Role::Spare));
        });
    match spawned {
        Ok(_) => Renewing::Making(receive),
        Err(_) => Renewing::Waiting {
            retry: Instant::now() + SPARE_RETRY,
        },
    }
}

/// Drops a participant, or a node and its writer, on a thread of its own: a participant
/// joins its threads as it drops, and a node tells the graph it goes; neither is for the
/// clock's thread to wait on.
fn drop_aside<T: Send + 'static>(held: T) {
    let _ = std::thread::Builder::new()
        .name("ros-clock-old".into())
        .spawn(move || drop(held));
}

/// The clock's own participant, node (`<node>_clock`, so graph tools name its publisher)
/// and writer. Fields drop in order: the writers and nodes, then the participant.
struct ClockWriter {
    /// The writer that sends. None only for a moment while it is made anew (or if that
    /// failed).
    endpoint: Option<Endpoint>,
    /// Which node `endpoint` is listed under.
    role: Role,
    promotion: Promotion,
    names: Names,
    status: DomainParticipantStatusListener,
    departures: Departures,
    context: Context,
}

/// The node and its /clock writer. Fields drop in order: the writer, then the node.
struct Endpoint {
    publisher: ros2_client::Publisher<ClockMsg>,
    /// Held, never read: the writer is listed in the graph under it while it lives.
    _node: ros2_client::Node,
    /// The DDS topic, to find its readers.
    topic: Topic,
}

/// Which node a participant's writer is listed under. The one that sends is `<node>_clock`;
/// a spare's is hidden (`_<node>_clock_spare`: a leading underscore keeps it out of `ros2
/// node list`), so that the graph never shows two nodes of one name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Sending,
    Spare,
}

impl Role {
    fn node_name(self, names: &Names) -> String {
        match self {
            Role::Sending => format!("{}_clock", names.node()),
            Role::Spare => format!("_{}_clock_spare", names.node()),
        }
    }
}

/// A spare that took over goes on sending from its hidden writer until its `<node>_clock`
/// one, made on a thread aside (making a node is not for the clock's thread), has been there
/// `PROMOTION_OVERLAP`, long enough for the readers to match it; then that one sends and the
/// hidden one goes. One writer sends at a time.
enum Promotion {
    Done,
    Making(Receiver<Result<Endpoint, Error>>),
    Made {
        endpoint: Box<Endpoint>,
        since: Instant,
    },
}

/// How long a promoted spare's visible writer waits, silent, before it sends.
const PROMOTION_OVERLAP: Duration = Duration::from_secs(1);

/// What became of a sample.
#[derive(Debug, PartialEq, Eq)]
enum Sent {
    Out,
    /// Not sent (the writer was closing, or the sample could not be serialized).
    Failed,
    /// Not sent: `WINDOW` samples wait for a reader's acknowledgement.
    WindowFull,
}

impl ClockWriter {
    fn create(settings: &ClockSettings, role: Role) -> Result<Self, Error> {
        let fail =
            |what: &str, e: &dyn std::fmt::Display| Error::from(format!("/clock {what}: {e}"));
        let domain = super::participant::domain_id(&settings.dds)?;
        let addresses = super::participant::interfaces(&settings.dds);
        let participant = super::participant::build(domain, addresses)?;
        let context =
            Context::from_domain_participant(participant).map_err(|e| fail("context", &e))?;
        let endpoint = node_and_writer(&context, &settings.names, role)?;
        Ok(Self {
            endpoint: Some(endpoint),
            role,
            promotion: Promotion::Done,
            names: settings.names.clone(),
            status: context.domain_participant().status_listener(),
            departures: Departures::default(),
            context,
        })
    }

    /// Starts making the `<node>_clock` writer of a spare that took over (see `Promotion`).
    fn promote(&mut self) {
        if self.role == Role::Sending {
            return;
        }
        let (made, receive) = std::sync::mpsc::channel();
        let (context, names) = (self.context.clone(), self.names.clone());
        let spawned = std::thread::Builder::new()
            .name("ros-clock-node".into())
            .spawn(move || {
                let _ = made.send(node_and_writer(&context, &names, Role::Sending));
            });
        if spawned.is_ok() {
            self.promotion = Promotion::Making(receive);
        }
    }

    /// Moves a promotion on: the visible writer sends once it has been there
    /// `PROMOTION_OVERLAP`, and the hidden one goes.
    fn step_promotion(&mut self, now: Instant) -> Option<Error> {
        let mut failed = None;
        self.promotion = match std::mem::replace(&mut self.promotion, Promotion::Done) {
            Promotion::Done => Promotion::Done,
            Promotion::Making(made) => match made.try_recv() {
                Ok(Ok(endpoint)) => Promotion::Made {
                    endpoint: Box::new(endpoint),
                    since: now,
                },
                Ok(Err(e)) => {
                    failed = Some(e);
                    Promotion::Done
                }
                Err(TryRecvError::Empty) => Promotion::Making(made),
                Err(TryRecvError::Disconnected) => Promotion::Done,
            },
            Promotion::Made { endpoint, since } if now - since >= PROMOTION_OVERLAP => {
                if let Some(hidden) = self.endpoint.replace(*endpoint) {
                    drop_aside(hidden);
                }
                self.role = Role::Sending;
                Promotion::Done
            }
            made @ Promotion::Made { .. } => made,
        };
        failed
    }

    fn send(&self, message: &ClockMsg) -> Sent {
        let Some(endpoint) = &self.endpoint else {
            return Sent::Failed;
        };
        match endpoint.publisher.publish(message.clone()) {
            Ok(()) => Sent::Out,
            Err(WriteError::WouldBlock { .. }) => Sent::WindowFull,
            Err(_) => Sent::Failed,
        }
    }

    /// A new node and writer on the same participant, in place of ones whose window a
    /// reader that acknowledges nothing has filled; the readers that answer match it soon
    /// (they know the participant). The old node goes first: ros2-client lists a context's
    /// nodes by name in `ros_discovery_info`, and dropping the old one after the new one was
    /// made under the same name took the new one out of the graph.
    fn replace_writer(&mut self) -> Result<(), Error> {
        self.endpoint = None;
        self.endpoint = Some(node_and_writer(&self.context, &self.names, self.role)?);
        Ok(())
    }

    /// The remote endpoints seen come and go since this participant was made (or since a
    /// renewal was given up).
    fn departed(&mut self) -> u32 {
        while let Some(event) = self.status.try_recv_status() {
            self.departures.note(&event);
        }
        self.departures.gone
    }

    /// The remote readers of /clock that discovery knows.
    fn readers(&self) -> BTreeSet<GUID> {
        let Some(endpoint) = &self.endpoint else {
            return BTreeSet::new();
        };
        let topic = endpoint.topic.name();
        self.context
            .domain_participant()
            .discovered_readers()
            .into_iter()
            .filter(|r| r.subscription_topic_data.topic_name == topic)
            .map(|r| r.reader_proxy.remote_reader_guid)
            .collect()
    }
}

/// A node and its /clock writer on `context`, the node named for `role`.
fn node_and_writer(context: &Context, names: &Names, role: Role) -> Result<Endpoint, Error> {
    let fail = |what: &str, e: &dyn std::fmt::Display| Error::from(format!("/clock {what}: {e}"));
    let node_name = NodeName::new(names.namespace(), &role.node_name(names))
        .map_err(|e| fail("node name", &e))?;
    let options = NodeOptions::new()
        .enable_rosout(false)
        .start_parameter_services(false);
    let mut node = context
        .new_node(node_name, options)
        .map_err(|e| fail("node", &e))?;
    let resolved = names.resolve("/clock");
    let topic_name = Name::parse(&resolved).map_err(|e| fail("topic name", &e))?;
    // Reliable, so that reliable subscribers match (best-effort ones, as rclcpp's
    // ClockQoS asks, match too); a full window fails the send rather than waits.
    let qos = QosProfile::publisher_default()
        .reliability_reliable(WhenFull::Fail)
        .history(History::KeepLast { depth: HISTORY })
        .durability(Durability::Volatile);
    let topic = node
        .create_topic(
            &topic_name,
            MessageTypeName::new("rosgraph_msgs", "Clock"),
            &qos,
        )
        .map_err(|e| fail("topic", &e))?;
    let publisher = node
        .create_publisher(&topic, None)
        .map_err(|e| fail("writer", &e))?;
    Ok(Endpoint {
        publisher,
        _node: node,
        topic,
    })
}

/// The remote endpoints a participant learned of, and how many of those have gone since
/// (readers and writers that left, and those of participants that left).
#[derive(Default)]
struct Departures {
    known: BTreeSet<GUID>,
    gone: u32,
}

impl Departures {
    fn note(&mut self, event: &DomainParticipantStatusEvent) {
        use DomainParticipantStatusEvent as Event;
        match event {
            Event::ReaderDetected { reader: endpoint }
            | Event::WriterDetected { writer: endpoint } => self.arrived(endpoint.guid),
            Event::ReaderLost { guid, .. } | Event::WriterLost { guid, .. } => self.left(*guid),
            Event::ParticipantLost { id, .. } => self.participant_left(GUID {
                prefix: *id,
                ..GUID::GUID_UNKNOWN
            }),
            _ => {}
        }
    }

    fn arrived(&mut self, endpoint: GUID) {
        self.known.insert(endpoint);
    }

    fn left(&mut self, endpoint: GUID) {
        self.forget(|known| *known == endpoint)
    }

    /// Its endpoints went with it, each without an event of its own. `participant`: any GUID
    /// with its prefix.
    fn participant_left(&mut self, participant: GUID) {
        self.forget(|known| known.prefix == participant.prefix)
    }

    fn forget(&mut self, gone: impl Fn(&GUID) -> bool) {
        let before = self.known.len();
        self.known.retain(|known| !gone(known));
        let forgotten = u32::try_from(before - self.known.len()).unwrap_or(u32::MAX);
        self.gone = self.gone.saturating_add(forgotten);
    }
}

/// When the clock is due and whether it has news: plain data, so the rules are tested
/// without a thread or a middleware.
struct Pacing {
    hz: f64,
    every: Every,
    /// The sim time and the moment of the last message sent.
    last: Option<(u64, Instant)>,
}

impl Pacing {
    fn new(hz: f64) -> Self {
        Self {
            hz,
            every: Every::hz(hz, Instant::now()),
            last: None,
        }
    }

    fn follow_rate(&mut self, hz: f64) {
        if hz != self.hz {
            self.hz = hz;
            self.every = Every::hz(hz, Instant::now());
        }
    }

    /// How long to sleep before the next message is due (zero: it is due now).
    fn wait(&self, now: Instant) -> Duration {
        self.every
            .deadline()
            .map_or(LONGEST_WAIT, |d| d.saturating_duration_since(now))
            .min(LONGEST_WAIT)
    }

    /// Whether to send `sim_time` at `now` (due, and the time moved or has stood still for
    /// `WHILE_PAUSED`); takes the turn when due.
    fn send(&mut self, now: Instant, sim_time: f64) -> bool {
        if !self.every.due(now) {
            return false;
        }
        let bits = sim_time.to_bits();
        if let Some((last_bits, sent)) = self.last
            && last_bits == bits
            && now - sent < WHILE_PAUSED
        {
            return false;
        }
        self.last = Some((bits, now));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_when_time_moves_at_its_rate_and_repeats_while_paused() {
        let mut pacing = Pacing::new(100.0);
        let start = Instant::now();
        assert!(pacing.send(start, 0.002));
        // Not due yet, however the time moved.
        let soon = start + Duration::from_millis(2);
        assert!(!pacing.send(soon, 0.004));
        assert!(pacing.wait(soon) > Duration::ZERO);
        // Due, the time moved.
        let due = start + Duration::from_millis(10);
        assert_eq!(pacing.wait(due), Duration::ZERO);
        assert!(pacing.send(due, 0.004));
        // Due, the time stood still: nothing until WHILE_PAUSED has gone by.
        let later = due + Duration::from_millis(10);
        assert!(!pacing.send(later, 0.004));
        assert!(pacing.send(due + WHILE_PAUSED, 0.004));
        // A reset sends its earlier time at once.
        assert!(pacing.send(due + WHILE_PAUSED + Duration::from_millis(10), 0.0));
    }

    #[test]
    fn a_gap_of_over_ten_periods_is_reported_while_running_and_not_while_paused() {
        let mut gaps = GapWatch::default();
        let start = Instant::now();
        let turn = |ms: u64, sim_time: f64, running: bool| Turn {
            woke: start + Duration::from_millis(ms),
            due: Some(start + Duration::from_millis(ms)),
            sim_time,
            hz: 500.0,
            running,
        };
        assert!(gaps.note(turn(0, 0.0, true)).is_none());
        // Physics's first step 59 ms after the first message (the world being set up): no gap.
        let mut starting = GapWatch::default();
        assert!(starting.note(turn(0, 0.0, true)).is_none());
        assert!(starting.note(turn(59, 0.002, true)).is_none());
        // Every period (2 ms), then 3 periods late: no gap.
        assert!(gaps.note(turn(2, 0.002, true)).is_none());
        assert!(gaps.note(turn(8, 0.008, true)).is_none());
        // 46 ms, as physics stood still: a gap, with its figures.
        match gaps.note(turn(54, 0.010, true)) {
            Some(Note::Gap {
                interval,
                sim_moved,
                late,
                ..
            }) => {
                assert_eq!(interval, Duration::from_millis(46));
                assert!((sim_moved - 0.002).abs() < 1e-12, "{sim_moved}");
                assert_eq!(late, Duration::ZERO);
            }
            other => panic!("a gap of 46 ms was noted as {other:?}"),
        }
        // The same while paused (WHILE_PAUSED repeats): none.
        assert!(gaps.note(turn(154, 0.010, false)).is_none());
        // Running again, a second gap within a second: a gap (its line held back).
        assert!(gaps.note(turn(200, 0.012, true)).is_some());
    }

    #[test]
    fn departures_count_endpoints_that_left_alone_or_with_their_participant() {
        let endpoint = |process: &[u8; 12], key: u8| {
            let mut bytes = [0x04; 16];
            bytes[..12].copy_from_slice(process);
            bytes[14] = key;
            GUID::from_bytes(bytes)
        };
        let mut departures = Departures::default();
        for key in 1..=3 {
            departures.arrived(endpoint(b"process_one_", key));
            departures.arrived(endpoint(b"process_two_", key));
        }
        // Seen again (a discovery update): still one endpoint.
        departures.arrived(endpoint(b"process_one_", 1));
        departures.left(endpoint(b"process_one_", 2));
        departures.left(endpoint(b"process_one_", 2));
        assert_eq!(departures.gone, 1);
        departures.participant_left(endpoint(b"process_two_", 0));
        assert_eq!(departures.gone, 4);
        assert_eq!(departures.known.len(), 2);
        // An endpoint never seen arriving is not counted.
        departures.left(endpoint(b"process_six_", 1));
        assert_eq!(departures.gone, 4);
    }

    #[test]
    fn a_rate_of_zero_sends_nothing_and_a_new_rate_starts_now() {
        let mut pacing = Pacing::new(0.0);
        let now = Instant::now();
        assert!(!pacing.send(now + Duration::from_secs(1), 1.0));
        assert_eq!(pacing.wait(now), LONGEST_WAIT);
        pacing.follow_rate(1000.0);
        assert!(pacing.send(Instant::now(), 1.0));
    }
}
