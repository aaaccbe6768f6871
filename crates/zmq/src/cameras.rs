//! The legacy camera streams: one socket per camera, bound from the state port + 3 (URLab:
//! 5558) on to the next free port, at most ten; each message is the topic
//! `"{A}/camera/{camera} "` (with the trailing space) and the frame's B, G, R, A bytes, rows
//! top to bottom. The sockets are XPUB, which SUB clients cannot tell from PUB, so the
//! thread sees subscriptions come and go and asks the renderer for frames only while a
//! client is subscribed, at most at the camera's rate.
use super::codec::CameraStream;
use crate::render::{Cameras, Frame, PlannedCamera, Renderer};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Sockets tried per camera stream after the first port (URLab: 5558 to 5567).
const PORTS: u16 = 10;
/// The send high-water mark of URLab's camera sockets.
const HIGH_WATER_MARK: i32 = 10;
/// How often a stream that waits for its frame looks whether it came.
const POLL: Duration = Duration::from_millis(2);

#[derive(Debug, thiserror::Error)]
pub enum CameraStreamError {
    #[error("zmq camera socket: {0}")]
    Socket(zmq::Error),
    #[error("no free port for camera '{camera}' from {first} to {last} on {host}")]
    NoPort {
        camera: String,
        host: String,
        first: u16,
        last: u16,
    },
    #[error("zmq.state '{0}' has no tcp host and port to count camera ports from")]
    Endpoint(String),
    #[error("legacy camera thread: {0}")]
    Thread(std::io::Error),
}

/// A stream's socket and what it sends.
struct Stream {
    socket: zmq::Socket,
    camera: usize,
    topic: Vec<u8>,
    period: Duration,
    next: Instant,
    /// Subscriptions the socket has seen (XPUB passes the first of each topic and the last
    /// unsubscription).
    subscriptions: usize,
    waiting: bool,
    seen: u64,
}

/// The camera streams as the discovery JSON lists them, shared with the legacy servers:
/// `version` moves when a world change changes the list.
#[derive(Debug, Default)]
pub struct CameraList {
    streams: std::sync::Mutex<Vec<CameraStream>>,
    version: std::sync::atomic::AtomicU64,
}

impl CameraList {
    /// The list and its version.
    pub fn get(&self) -> (u64, Vec<CameraStream>) {
        let streams = match self.streams.lock() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        (self.version.load(Ordering::Acquire), streams)
    }

    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn set(&self, streams: Vec<CameraStream>) {
        match self.streams.lock() {
            Ok(mut s) => *s = streams,
            Err(poisoned) => *poisoned.into_inner() = streams,
        }
        self.version.fetch_add(1, Ordering::AcqRel);
    }
}

/// The running streams, with their names and endpoints for the discovery JSON.
pub struct CameraStreams {
    pub list: Arc<CameraList>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// `tcp://host:port` as (host, port).
fn host_and_port(endpoint: &str) -> Option<(String, u16)> {
    let rest = endpoint.strip_prefix("tcp://")?;
    let (host, port) = rest.rsplit_once(':')?;
    Some((host.to_string(), port.parse().ok()?))
}

/// Binds camera sockets on the next free port of the range.
struct Binder {
    context: zmq::Context,
    host: String,
    first: u16,
    last: u16,
}

impl Binder {
    /// A stream for `camera` (camera `index` of the plan), on the first free port.
    fn stream(
        &self,
        camera: &PlannedCamera,
        index: usize,
        robot_name: &str,
    ) -> Result<(Stream, CameraStream), CameraStreamError> {
        let socket = self
            .context
            .socket(zmq::XPUB)
            .map_err(CameraStreamError::Socket)?;
        socket.set_linger(0).map_err(CameraStreamError::Socket)?;
        socket
            .set_sndhwm(HIGH_WATER_MARK)
            .map_err(CameraStreamError::Socket)?;
        // Ports our other streams hold refuse the bind: the next one is tried.
        let endpoint = (self.first..=self.last)
            .map(|port| format!("tcp://{}:{port}", self.host))
            .find(|endpoint| socket.bind(endpoint).is_ok())
            .ok_or_else(|| CameraStreamError::NoPort {
                camera: camera.name.clone(),
                host: self.host.clone(),
                first: self.first,
                last: self.last,
            })?;
        let listed = CameraStream {
            name: camera.name.clone(),
            endpoint: endpoint.replace("tcp://*:", "tcp://127.0.0.1:"),
        };
        log::info!("legacy camera '{}' on {}", listed.name, listed.endpoint);
        let stream = Stream {
            socket,
            camera: index,
            topic: format!("{robot_name}/camera/{} ", camera.name).into_bytes(),
            period: Duration::from_secs_f64(1.0 / camera.rate),
            next: Instant::now(),
            subscriptions: 0,
            waiting: false,
            seen: 0,
        };
        Ok((stream, listed))
    }
}

impl CameraStreams {
    /// Binds a socket per camera of the current world of `handle` (as `renderer` plans
    /// them), counting ports from `first_port` (0: the state port + 3). After a world change
    /// the streams follow: those of cameras that stay keep their sockets, new cameras get new
    /// ones.
    pub fn start(
        handle: crate::sim::SimHandle,
        renderer: Arc<Renderer>,
        state_endpoint: &str,
        first_port: u16,
    ) -> Result<Self, CameraStreamError> {
        let (host, state_port) = host_and_port(state_endpoint)
            .ok_or_else(|| CameraStreamError::Endpoint(state_endpoint.to_string()))?;
        let first = if first_port == 0 {
            state_port.saturating_add(3)
        } else {
            first_port
        };
        let binder = Binder {
            context: zmq::Context::new(),
            host,
            first,
            last: first.saturating_add(PORTS - 1),
        };
        let world = handle.world();
        let cameras = renderer.sources(&world);
        let mut streams = Vec::new();
        let mut listed = Vec::new();
        for (index, camera) in cameras.specs.iter().enumerate() {
            let robot = &world.robots[camera.robot].name;
            let (stream, entry) = binder.stream(camera, index, robot)?;
            streams.push(stream);
            listed.push(entry);
        }
        let list = Arc::new(CameraList::default());
        list.set(listed);
        let stop = Arc::new(AtomicBool::new(false));
        let mut worker = Worker {
            generation: world.number,
            handle,
            renderer,
            cameras,
            streams,
            binder,
            list: list.clone(),
        };
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("legacy-cameras".into())
            .spawn(move || {
                crate::supervise::essential("legacy camera", || worker.serve(&stopping));
            })
            .map_err(CameraStreamError::Thread)?;
        Ok(Self {
            list,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for CameraStreams {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the camera thread holds. Field order is drop order: the sockets before the
/// context (in the binder) they belong to.
struct Worker {
    streams: Vec<Stream>,
    renderer: Arc<Renderer>,
    /// The cameras of the world the streams were planned in.
    cameras: Arc<Cameras>,
    handle: crate::sim::SimHandle,
    /// That world.
    generation: u64,
    list: Arc<CameraList>,
    binder: Binder,
}

impl Worker {
    /// Follows subscriptions, asks for frames, sends those that come.
    fn serve(&mut self, stop: &AtomicBool) {
        let mut frame = Frame::default();
        let mut bgra = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            if self.handle.generation() != self.generation {
                self.follow_world();
            }
            let now = Instant::now();
            let wait = self
                .streams
                .iter()
                .map(|s| {
                    if s.waiting {
                        POLL
                    } else if s.subscriptions > 0 {
                        s.next.saturating_duration_since(now)
                    } else {
                        Duration::from_millis(100)
                    }
                })
                .min()
                .unwrap_or(Duration::from_millis(100))
                .min(Duration::from_millis(100));
            let mut items: Vec<zmq::PollItem> = self
                .streams
                .iter()
                .map(|s| s.socket.as_poll_item(zmq::POLLIN))
                .collect();
            let _ = zmq::poll(&mut items, wait.as_millis().max(1) as i64);
            drop(items);
            let cameras = &self.cameras;
            let now = Instant::now();
            for stream in self.streams.iter_mut() {
                follow_subscriptions(stream);
                if stream.waiting
                    && cameras
                        .slot(stream.camera)
                        .read(&mut frame, &mut stream.seen)
                {
                    stream.waiting = false;
                    to_bgra(&frame, &mut bgra);
                    // A PUB-like socket drops at its high-water mark instead of blocking.
                    let _ = stream
                        .socket
                        .send(&stream.topic[..], zmq::SNDMORE | zmq::DONTWAIT);
                    let _ = stream.socket.send(&bgra[..], zmq::DONTWAIT);
                }
                if stream.subscriptions > 0 && now >= stream.next {
                    stream.next = (stream.next + stream.period).max(now);
                    cameras.request(stream.camera);
                    stream.waiting = true;
                }
            }
        }
    }

    /// Re-plans the streams for the world the physics thread now steps: its cameras as the
    /// render thread plans them, the sockets of cameras that stay (by topic) kept with their
    /// subscribers, new cameras bound on free ports, the sockets of cameras gone closed; the
    /// servers' discovery JSON follows the list.
    fn follow_world(&mut self) {
        let world = self.handle.world();
        self.generation = world.number;
        self.cameras = self.renderer.sources(&world);
        let cameras = self.cameras.clone();
        let mut old = std::mem::take(&mut self.streams);
        let mut listed = Vec::new();
        for (index, camera) in cameras.specs.iter().enumerate() {
            let robot = &world.robots[camera.robot].name;
            let topic = format!("{robot}/camera/{} ", camera.name).into_bytes();
            let kept = old
                .iter()
                .position(|s| s.topic == topic)
                .map(|k| old.remove(k));
            let stream = match kept {
                Some(mut stream) => {
                    stream.camera = index;
                    stream.period = Duration::from_secs_f64(1.0 / camera.rate);
                    stream.waiting = false;
                    stream.seen = 0;
                    let endpoint = stream
                        .socket
                        .get_last_endpoint()
                        .ok()
                        .and_then(|e| e.ok())
                        .unwrap_or_default();
                    listed.push(CameraStream {
                        name: camera.name.clone(),
                        endpoint: endpoint.replace("tcp://0.0.0.0:", "tcp://127.0.0.1:"),
                    });
                    stream
                }
                None => match self.binder.stream(camera, index, robot) {
                    Ok((stream, entry)) => {
                        listed.push(entry);
                        stream
                    }
                    Err(e) => {
                        log::error!("legacy camera '{}': {e}", camera.name);
                        continue;
                    }
                },
            };
            self.streams.push(stream);
        }
        drop(old);
        self.list.set(listed);
    }
}

/// Counts the (un)subscriptions XPUB hands up: a first byte of 1 subscribes, 0 leaves.
fn follow_subscriptions(stream: &mut Stream) {
    while let Ok(message) = stream.socket.recv_bytes(zmq::DONTWAIT) {
        match message.first() {
            Some(1) => stream.subscriptions += 1,
            Some(0) => stream.subscriptions = stream.subscriptions.saturating_sub(1),
            _ => {}
        }
    }
}

/// The frame's RGB as URLab's B, G, R, A bytes (A = 255), rows as they are (top to bottom).
pub fn to_bgra(frame: &Frame, bgra: &mut Vec<u8>) {
    bgra.clear();
    bgra.reserve(frame.rgb.len() / 3 * 4);
    for rgb in frame.rgb.chunks_exact(3) {
        bgra.extend_from_slice(&[rgb[2], rgb[1], rgb[0], 255]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_go_out_blue_first_and_opaque() {
        let frame = Frame {
            rgb: vec![10, 20, 30, 40, 50, 60],
            ..Default::default()
        };
        let mut bgra = Vec::new();
        to_bgra(&frame, &mut bgra);
        assert_eq!(bgra, [30, 20, 10, 255, 60, 50, 40, 255]);
    }

    #[test]
    fn camera_ports_count_from_the_state_endpoint() {
        assert_eq!(
            host_and_port("tcp://127.0.0.1:5555"),
            Some(("127.0.0.1".into(), 5555))
        );
        assert_eq!(host_and_port("tcp://*:6000"), Some(("*".into(), 6000)));
        assert_eq!(host_and_port("ipc:///tmp/x"), None);
    }
}
