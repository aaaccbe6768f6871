"""The soak: a running bridge under the churn of ordinary use, for a chosen time, and what
it does to the process's memory, /clock and the answers to requests.

Every 3 s a box is spawned through simulation_interfaces and deleted 1.5 s later; every
second the subscriptions to every topic the bridge publishes are destroyed and made anew
(cameras and lidars too, during the camera phases), and a legacy ZMQ state subscriber and
camera subscriber reconnect; cmd_vel goes out at 20 Hz; a live parameter is set every 5 s;
a snapshot is saved every 10 s and restored 5 s later; the simulation is reset every 30 s.
Cameras are subscribed in phases (on for `camera_on` seconds, off for `camera_off`), so
that the render thread's idle release and its GL context's return both happen.

Beside the bridge, users' nodes load the machine as they do on a workstation: a subscriber
process (a new DDS participant, as `ros2 topic echo` or an RViz panel) is started every
second and lives 1.5 s, and one busy process per core keeps every core busy. Each case runs
the clients, the subscriber processes and the busy ones at one priority: `normal`
(niceness 0, as users run their nodes), then `niced` (niceness 10).

Printed every minute: the bridge's resident memory (its anonymous part by owner: mimalloc,
glibc's arenas, glibc's large blocks), the requests sent and answered, the
longest gap between /clock messages (publisher timestamps) and the real-time factor (steps
times the timestep over wall time, which resets do not disturb). At the end of each case:
the memory from the first minute to the end and phase against like phase, the /clock
gaps, each figure against its target, the bridge's log line count; then the cases side by
side. A probe process per CPU at SCHED_FIFO 90 tells when a CPU itself stood still (held by
the kernel or the hypervisor, which a guest's steal figure need not show): a /clock gap
that such a stall brings over 10 periods is counted apart from the bridge's own.

    python3 benches/soak.py --minutes 30 --config config/default.yaml

`scripts/bench-soak.sh` runs it in a private network namespace on the release build;
`tests/python/test_soak.py` runs a 2-minute version in the suite.
"""
import argparse
import collections
import datetime
import faulthandler
import json
import os
import pathlib
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

REPO = pathlib.Path(__file__).resolve().parents[1]
BOX = """<mujoco model="soak_box"><worldbody>
  <body name="crate"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
</worldbody></mujoco>"""
SERVICES = "/mujoco_bridge/"
# How long a request may take before it counts as unanswered.
ANSWER_TIMEOUT = 30.0


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def memory_mb(pid):
    """Process `pid`'s resident memory in MB: {"rss", "anon", "file"} (VmRSS, RssAnon,
    RssFile + RssShmem), None once it is gone. Anonymous memory is what a leak piles up;
    file-backed pages are mapped libraries and shaders, bounded by the files' sizes."""
    fields = {"VmRSS:": "rss", "RssAnon:": "anon", "RssFile:": "file", "RssShmem:": "file"}
    found = {}
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                key = fields.get(line.split(":")[0] + ":")
                if key:
                    found[key] = found.get(key, 0.0) + int(line.split()[1]) / 1024.0
    except (FileNotFoundError, ProcessLookupError):
        return None
    return found if "rss" in found else None


# The mimalloc crate reserves its arenas in mappings of 1 GiB, and nothing else in the bridge maps
# anonymous memory of 256 MiB or more; glibc's secondary arenas are 64 MiB-aligned heaps; glibc
# serves a request over its mmap threshold with a mapping of its own.
MIMALLOC_RESERVATION = 256 << 20
GLIBC_HEAP_ALIGN = 64 << 20


def anonymous_owners_mb(pid):
    """Process `pid`'s anonymous resident memory in MB by owner, from /proc/PID/smaps:
    {"mimalloc" (the Rust side), "glibc arenas" (the C and C++ libraries' small blocks, the
    brk heap included), "glibc large" (their blocks over the mmap threshold: MuJoCo's models
    and data, render buffers), "other" (thread stacks and the rest)}; {} once it is gone."""
    owners = dict.fromkeys(("mimalloc", "glibc arenas", "glibc large", "other"), 0.0)
    try:
        with open(f"/proc/{pid}/smaps") as smaps:
            owner = None
            for line in smaps:
                fields = line.split()
                if fields[0].endswith(":"):
                    if fields[0] == "Rss:" and owner:
                        owners[owner] += int(fields[1]) / 1024.0
                    continue
                low, high = (int(bound, 16) for bound in fields[0].split("-"))
                name = fields[5] if len(fields) > 5 else ""
                if name == "[heap]":
                    owner = "glibc arenas"
                elif name:
                    owner = None
                elif high - low >= MIMALLOC_RESERVATION:
                    owner = "mimalloc"
                elif low % GLIBC_HEAP_ALIGN == 0 and fields[1].startswith("rw"):
                    owner = "glibc arenas"
                elif high - low >= 1 << 20:
                    owner = "glibc large"
                else:
                    owner = "other"
    except (FileNotFoundError, ProcessLookupError):
        return {}
    return owners


def thread_cpu_seconds(pid):
    """CPU seconds (user + system) of each thread of process `pid`, summed by thread name:
    {name: seconds} ({} once it is gone)."""
    ticks = os.sysconf("SC_CLK_TCK")
    found = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as stat:
                text = stat.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        # utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
        found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return found


def steal_seconds():
    """CPU time the hypervisor took from this machine's CPUs since boot, all CPUs together
    (/proc/stat's steal column; 0 on bare metal). A guest's threads stand still meanwhile, so
    a /clock gap that it covers was the host's, not the bridge's."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0


def steal_around(steals, start, end):
    """The steal (seconds) between the samples `steals` ((wall clock, steal_seconds()), in
    order) that bracket [start, end], and the seconds they span; None when none bracket it."""
    before = [sample for sample in steals if sample[0] <= start]
    after = [sample for sample in steals if sample[0] >= end]
    if not before or not after:
        return None
    return after[0][1] - before[-1][1], after[0][0] - before[-1][0]


def physics_faults(log, after_s=60.0):
    """From the bridge's diagnostics lines ("... page faults in physics N", one per window):
    the faults after its first `after_s` seconds, the windows that had any, and the windows.
    A fault inside a step can wait on another thread (see the bridge's sim/memory.rs)."""
    found = re.findall(r"^\[(\S+?)Z? \w+ *\].*page faults in physics (\d+)$", log, re.MULTILINE)
    if not found:
        return None
    start = datetime.datetime.fromisoformat(found[0][0])
    later = [int(count) for stamp, count in found
             if (datetime.datetime.fromisoformat(stamp) - start).total_seconds() >= after_s]
    return sum(later), sum(1 for count in later if count), len(later)


# The machine's own stalls: on each CPU a process apart from the bridge and its clients asks
# to wake every millisecond at SCHED_FIFO PROBE_PRIORITY, above the bridge's physics thread
# (50). When it wakes more than STALL_S late, nothing could run on that CPU: the kernel or
# the hypervisor held it (a sleeping thread's timer fires on the CPU it slept on). On a
# guest whose host holds its virtual CPUs to a quota (a Firecracker VM here) that shows no
# steal. It prints "WALL_CLOCK_END LATENESS" per stall.
PROBE_PRIORITY = 90
STALL_S = 0.005
PROBE_SOURCE = r"""
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[4])})
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(sys.argv[2])))
    print("fifo", flush=True)
except OSError as refused:
    print(f"refused {refused}", flush=True)
end, period, stall = time.monotonic() + float(sys.argv[1]), 0.001, float(sys.argv[3])
while time.monotonic() < end:
    before = time.monotonic()
    time.sleep(period)
    late = time.monotonic() - before - period
    if late > stall:
        print(f"{time.time():.6f} {late:.6f}", flush=True)
"""


class MachineProbe:
    """Runs PROBE_SOURCE on each CPU for `lifetime_s`; `stalls` are (CPU, wall clock of the
    stall's end, seconds), `granted` whether it got SCHED_FIFO (without it a late wake-up is
    only a busy core, and nothing is taken as the machine's)."""

    def __init__(self, lifetime_s):
        self.cpus = sorted(os.sched_getaffinity(0))
        self.procs = [subprocess.Popen(
            [sys.executable, "-c", PROBE_SOURCE, str(lifetime_s), str(PROBE_PRIORITY), str(STALL_S), str(cpu)],
            stdout=subprocess.PIPE, text=True) for cpu in self.cpus]
        firsts = [proc.stdout.readline().strip() for proc in self.procs]
        self.granted = all(first == "fifo" for first in firsts)
        self.refusal = next((first.removeprefix("refused ") for first in firsts if first != "fifo"), "")
        self.stalls = []
        for cpu, proc in zip(self.cpus, self.procs):
            threading.Thread(target=self.read, args=(cpu, proc), daemon=True).start()

    def read(self, cpu, proc):
        for line in proc.stdout:
            end, late = line.split()
            self.stalls.append((cpu, float(end), float(late)))

    def within(self, start, end):
        """The most seconds of [start, end] (wall clock) during which one CPU stood still."""
        if not self.granted:
            return 0.0
        return max((sum(max(0.0, min(end, stop) - max(start, stop - late))
                        for on, stop, late in self.stalls if on == cpu) for cpu in self.cpus), default=0.0)

    def stop(self):
        for proc in self.procs:
            proc.kill()
            proc.wait()


def resident_mb(pid):
    """VmRSS of process `pid` in MB (None once it is gone)."""
    memory = memory_mb(pid)
    return memory["rss"] if memory else None


class Bridge:
    """The bridge binary on `config`, realtime, with the legacy ZMQ side on free ports and a
    console for its step counter."""

    def __init__(self, binary, config, extra_args=()):
        self.config = config
        self.state_port, self.control_port, self.info_port, self.camera_port = free_ports(4)
        self.log = tempfile.TemporaryFile(mode="w+")
        args = [
            binary, "--config", str(config), "--console", "--mode", "realtime",
            "--set", "zmq.enabled=true",
            "--set", f"zmq.state=tcp://127.0.0.1:{self.state_port}",
            "--set", f"zmq.control=tcp://127.0.0.1:{self.control_port}",
            "--set", f"zmq.info=tcp://127.0.0.1:{self.info_port}",
            "--set", f"zmq.camera_port={self.camera_port}",
            *extra_args,
        ]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     text=True, cwd=REPO, env=dict(os.environ, RUST_LOG="info,rustdds=error,ros2_client=error"))
        self.lock = threading.Lock()
        self.console("stats", timeout=120)
        import yaml

        robots = yaml.safe_load(pathlib.Path(config).read_text()).get("robots") or [{}]
        self.twist_topic = f"{robots[0].get('name', '')}/twist".encode()

    def console(self, line, timeout=30):
        with self.lock:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                raise RuntimeError(f"no console reply to {line!r}")
            return self.proc.stdout.readline().strip()

    def stats(self):
        words = self.console("stats").split()
        return {words[i]: float(words[i + 1]) for i in range(1, len(words) - 1, 2)}

    def alive(self):
        return self.proc.poll() is None

    def log_text(self):
        return os.pread(self.log.fileno(), 1 << 24, 0).decode(errors="replace")

    def close(self):
        if self.alive():
            try:
                self.console("quit")
            except (RuntimeError, BrokenPipeError):
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.log_text()


class ClockWatch:
    """/clock taken raw in batches on a node of its own (never spun): the longest gap between
    the publisher's source timestamps of consecutive messages, and how many came."""

    def __init__(self, rclpy):
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock

        self.node = rclpy.create_node("soak_clock")
        qos = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)
        self.subscription = self.node.create_subscription(Clock, "/clock", lambda _: None, qos, raw=True)
        self.count = 0
        self.last = None
        self.longest_gap = 0.0
        self.gap_since_mark = 0.0
        # The longest gaps: (gap, the publisher's timestamp of its end, wall clock).
        self.worst = []
        # Every gap over 5 ms and the publisher's timestamp of its end, to count those over
        # 10 publish periods.
        self.gaps = []
        self.stopping = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        handle = self.subscription.handle
        while not self.stopping:
            with handle:
                while (taken := handle.take_message(self.subscription.msg_type, True)) is not None:
                    _, info = taken
                    stamp = info["source_timestamp"] * 1e-9
                    if self.last is not None:
                        gap = stamp - self.last
                        self.longest_gap = max(self.longest_gap, gap)
                        self.gap_since_mark = max(self.gap_since_mark, gap)
                        if gap > 0.005:
                            self.worst = sorted(self.worst + [(gap, stamp)], reverse=True)[:5]
                            if len(self.gaps) < 100000:
                                self.gaps.append((gap, stamp))
                    self.last = stamp
                    self.count += 1
            time.sleep(0.005)

    def mark(self):
        """The longest gap since the last mark."""
        gap, self.gap_since_mark = self.gap_since_mark, 0.0
        return gap


class Churn:
    """The client side of the soak on one rclpy node, all on its executor's thread."""

    def __init__(self, rclpy, bridge, camera_on, camera_off):
        from geometry_msgs.msg import Twist

        self.rclpy = rclpy
        self.bridge = bridge
        self.node = rclpy.create_node("soak_churn")
        self.cmd_vel = self.node.create_publisher(Twist, "/cmd_vel", 10)
        self.twist = Twist()
        self.clients = {}
        self.sent = 0
        self.answered = 0
        self.failed = []
        self.pending = {}
        self.subscriptions = []
        self.received = 0
        self.spawned = False
        self.camera_on, self.camera_off = camera_on, camera_off
        self.started = time.monotonic()
        self.rate_toggle = False
        self.image_topic = "/image_raw"
        # (wall clock, what): the recent requests and resubscriptions, to place a gap.
        self.events = []
        import zmq

        self.zmq = zmq.Context()
        self.legacy = []
        self.legacy_received = 0
        self.connect_services()
        self.requesters = [self.node.create_timer(period, act) for period, act in (
            (1.5, self.spawn_or_delete), (5.0, self.set_parameter), (5.0, self.snapshot),
            (30.0, self.reset))]
        self.node.create_timer(0.05, self.drive)
        self.node.create_timer(1.0, self.resubscribe)
        self.node.create_timer(0.01, self.drain_legacy)
        self.node.create_timer(1.0, self.check_pending)
        self.snapshot_saved = False

    def connect_services(self):
        """Makes a client per service the churn calls and waits until each has matched its
        server, as a user's node does with `wait_for_service`: a request sent on a client
        whose writer has not yet matched the server's reader goes nowhere (one spawn in a
        few soaks went unanswered that way, always in the first minute)."""
        from rcl_interfaces.srv import SetParameters
        from simulation_interfaces.srv import DeleteEntity, SpawnEntity
        from std_srvs.srv import Trigger

        kinds = {"spawn_entity": SpawnEntity, "delete_entity": DeleteEntity,
                 "set_parameters": SetParameters, "save_snapshot": Trigger,
                 "restore_snapshot": Trigger, "reset": Trigger}
        for name, kind in kinds.items():
            client = self.clients[name] = self.node.create_client(kind, SERVICES + name)
            if not client.wait_for_service(timeout_sec=ANSWER_TIMEOUT):
                raise RuntimeError(f"the bridge's service {SERVICES + name} did not appear within "
                                   f"{ANSWER_TIMEOUT:.0f} s")

    def cameras_phase(self):
        if self.camera_on <= 0:
            return False
        period = self.camera_on + self.camera_off
        return (time.monotonic() - self.started) % period < self.camera_on

    def call(self, name, request):
        client = self.clients[name]
        self.sent += 1
        sent_at = time.monotonic()
        self.events.append((time.time(), name))
        future = client.call_async(request)
        self.pending[id(future)] = (name, sent_at, future)

        def done(f):
            if self.pending.pop(id(f), None) is None:
                return
            if f.exception() is not None:
                self.failed.append(f"{name}: {f.exception()}")
            else:
                self.answered += 1
        future.add_done_callback(done)

    def stop_requests(self):
        """No more requests: the soak's end waits for the answers to those sent."""
        for timer in self.requesters:
            timer.cancel()

    def check_pending(self):
        now = time.monotonic()
        for key, (name, sent_at, future) in list(self.pending.items()):
            if now - sent_at > ANSWER_TIMEOUT:
                self.pending.pop(key, None)
                self.failed.append(f"{name}: no answer within {ANSWER_TIMEOUT:.0f} s")

    def drive(self):
        self.twist.linear.x = 0.2 if int(time.monotonic()) % 10 < 5 else -0.2
        self.cmd_vel.publish(self.twist)

    def spawn_or_delete(self):
        from simulation_interfaces.srv import DeleteEntity, SpawnEntity

        if not self.spawned:
            request = SpawnEntity.Request(name="soak_box", resource_string=BOX)
            request.initial_pose.header.frame_id = "world"
            request.initial_pose.pose.position.x = 1.5
            request.initial_pose.pose.position.z = 0.5
            request.initial_pose.pose.orientation.w = 1.0
            self.call("spawn_entity", request)
        else:
            self.call("delete_entity", DeleteEntity.Request(entity="soak_box"))
        self.spawned = not self.spawned

    def set_parameter(self):
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        from rcl_interfaces.srv import SetParameters

        self.rate_toggle = not self.rate_toggle
        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=2.0 if self.rate_toggle else 1.0)
        request = SetParameters.Request(parameters=[Parameter(name="ros.rates.diagnostics", value=value)])
        self.call("set_parameters", request)

    def snapshot(self):
        from std_srvs.srv import Trigger

        name = "restore_snapshot" if self.snapshot_saved else "save_snapshot"
        self.call(name, Trigger.Request())
        self.snapshot_saved = not self.snapshot_saved

    def reset(self):
        from std_srvs.srv import Trigger

        self.call("reset", Trigger.Request())

    def resubscribe(self):
        """Every subscription goes and comes back, as RViz panels and `ros2 topic echo` do; the
        legacy subscribers reconnect."""
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosidl_runtime_py.utilities import get_message

        self.events.append((time.time(), "resubscribe"))
        self.image_topic = next((topic for topic, types in self.node.get_topic_names_and_types()
                                 if types and types[0] == "sensor_msgs/msg/Image"), self.image_topic)
        for subscription in self.subscriptions:
            self.node.destroy_subscription(subscription)
        self.subscriptions = []
        cameras = self.cameras_phase()
        qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        for topic, types in self.node.get_topic_names_and_types():
            if topic in ("/clock", "/rosout", "/cmd_vel", "/parameter_events") or not types:
                continue
            pictures = types[0] in ("sensor_msgs/msg/Image", "sensor_msgs/msg/PointCloud2",
                                    "sensor_msgs/msg/CameraInfo", "sensor_msgs/msg/LaserScan")
            if pictures and not cameras:
                continue
            try:
                kind = get_message(types[0])
            except (AttributeError, ModuleNotFoundError, ValueError):
                continue
            self.subscriptions.append(self.node.create_subscription(kind, topic, self.count, qos, raw=True))
        for sock in self.legacy:
            sock.close(linger=0)
        self.legacy = []
        state = self.zmq.socket(self.zmq_module().SUB)
        state.connect(f"tcp://127.0.0.1:{self.bridge.state_port}")
        # One row per step (the first robot's twist row), not every row: the client's own
        # CPU must not starve the bridge it measures on a small machine.
        state.setsockopt(self.zmq_module().SUBSCRIBE, self.bridge.twist_topic)
        self.legacy.append(state)
        if cameras:
            camera = self.zmq.socket(self.zmq_module().SUB)
            camera.connect(f"tcp://127.0.0.1:{self.bridge.camera_port}")
            camera.setsockopt(self.zmq_module().SUBSCRIBE, b"")
            self.legacy.append(camera)

    @staticmethod
    def zmq_module():
        import zmq

        return zmq

    def count(self, _message):
        self.received += 1

    def drain_legacy(self):
        zmq = self.zmq_module()
        for sock in self.legacy:
            while True:
                try:
                    sock.recv(zmq.NOBLOCK)
                except zmq.Again:
                    break
                self.legacy_received += 1

    def close(self):
        for sock in self.legacy:
            sock.close(linger=0)
        self.zmq.term()


# A user's `ros2 topic echo` or RViz panel: a process of its own (a new DDS participant)
# that subscribes to the state, a camera and the scan for a moment and exits.
SUBSCRIBER_PROCESS = r"""
import signal, sys, time
# SIGALRM's default action ends the process even if rclpy hangs in C on its way in or out; it
# comes after the soak's own SIGINT (at 10 s), the last resort if that is not enough.
signal.alarm(int(float(sys.argv[1])) + 30)
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, JointState, LaserScan
rclpy.init()
node = rclpy.create_node("soak_echo_%d" % (time.time_ns() % 1000000))
qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
for kind, topic in ((JointState, "/joint_states"), (Image, sys.argv[2]), (LaserScan, "/scan")):
    node.create_subscription(kind, topic, lambda _: None, qos)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    rclpy.spin_once(node, timeout_sec=0.05)
node.destroy_node()
rclpy.shutdown()
"""

# A user's process that keeps a core busy. It stops by itself when the soak that started it
# is gone (its parent changes) or, at the latest, at its deadline (argv[1] seconds): a soak
# killed with SIGKILL leaves nothing spinning.
BUSY_PROCESS = r"""
import os, signal, sys
signal.alarm(int(float(sys.argv[1])))
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(100000):
        pass
"""


# Subscriber processes alive at once, at most.
MAX_SUBSCRIBER_PROCESSES = 3


class UserLoad:
    """What users' nodes do to the machine beside the bridge, at the clients' priority: a
    subscriber process started every second (while fewer than MAX_SUBSCRIBER_PROCESSES
    live) that lives 1.5 s (a new participant each time,
    as `ros2 topic echo` and RViz panels come and go), and `busy` processes that keep every
    core busy. All of it stops with `stop`, and no process outlives it."""

    def __init__(self, busy, image_topic, lifetime_s, processes=True):
        """`image_topic`: a callable giving the camera topic to subscribe (found by the churn);
        `lifetime_s`: the most the busy processes live if `stop` never comes."""
        self.busy = [subprocess.Popen([sys.executable, "-c", BUSY_PROCESS, str(lifetime_s)])
                     for _ in range(busy)]
        self.image_topic = image_topic
        self.children = []  # (process, when it started)
        self.asked_to_stop = set()  # pids sent SIGINT
        self.started = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True) if processes else None
        if self.thread:
            self.thread.start()

    def run(self):
        while not self.stopping.wait(1.0):
            self.reap()
            # A new one each second while fewer than MAX_SUBSCRIBER_PROCESSES live: on a
            # machine too slow to start rclpy in a second they would pile up (a dozen were
            # seen, each starving the others and the soak's own node), which no user's
            # machine does.
            if len(self.children) < MAX_SUBSCRIBER_PROCESSES:
                child = subprocess.Popen(
                    [sys.executable, "-c", SUBSCRIBER_PROCESS, "1.5", self.image_topic()],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                self.children.append((child, time.monotonic()))
                self.started += 1

    def reap(self):
        """Forgets the subscriber processes that ended; one that hangs on its way out is asked
        to stop after 10 s (once: a second SIGINT would break its clean exit) and killed after
        20 s."""
        alive = []
        for child, started in self.children:
            if child.poll() is not None:
                continue
            age = time.monotonic() - started
            if age > 20.0:
                child.kill()
                child.wait()
                continue
            if age > 10.0 and child.pid not in self.asked_to_stop:
                child.send_signal(signal.SIGINT)
                self.asked_to_stop.add(child.pid)
            alive.append((child, started))
        self.children = alive

    def stop(self):
        self.stopping.set()
        if self.thread:
            self.thread.join()
        for process in self.busy:
            process.kill()
            process.wait()
        for child, _ in self.children:
            end_gently(child)


def end_gently(child, grace_s=5.0):
    """Ends a DDS client with SIGINT, as a user's Ctrl-C does, and kills it only if it is still
    there after `grace_s`. Fast DDS's shared-memory ports hold process-shared mutexes: a client
    killed while it holds one leaves every other participant on the machine (the soak's own node
    included) waiting on it forever, which is how earlier soaks hung."""
    if child.poll() is not None:
        return
    child.send_signal(signal.SIGINT)
    try:
        child.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


# Seconds between two samples of the bridge's memory.
SAMPLE_SECONDS = 1.0
# Seconds the soak's loop may go without a sample before its stacks are dumped.
WATCHDOG_S = 120.0
# Which of a phase's settled samples gives its level: the low decile, the floor the memory
# comes back to. A leak lifts the floor; a world being built (two worlds alive for a moment)
# or a frame in flight lifts only the samples that catch it.
FLOOR_QUANTILE = 0.1


def run(binary, config, minutes, warmup_minutes=2.0, camera_on=60.0, camera_off=60.0, extra_args=(),
        report=print, max_memory_mb=8000.0, client_nice=0, busy=0, subscriber_processes=False):
    """Runs the soak; returns its figures (a dict). `report` takes each printed line.

    Memory is sampled every second. With camera phases it is compared like with like: the
    level each phase with cameras subscribed (render memory held) and each phase without
    (released once render.idle_release has passed) settled at (`phase_levels`); growth after
    the warm-up is the larger of the two series' growth from the first third of their phases
    to the last third."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    bridge = Bridge(binary, config, extra_args)
    # Users' nodes run at the normal priority (client_nice 0); the niced case gives way as
    # the bridge's ROS thread used to (ros.nice, 10). The load processes inherit it.
    if client_nice:
        os.nice(client_nice)
    load = None
    timestep = None
    figures = {"config": str(config), "minutes": minutes, "memory_mb": []}
    probe = MachineProbe(minutes * 60.0 + ANSWER_TIMEOUT + 60.0)
    rclpy.init()
    try:
        clock = ClockWatch(rclpy)
        churn = Churn(rclpy, bridge, camera_on, camera_off)
        if busy or subscriber_processes:
            load = UserLoad(busy, lambda: churn.image_topic, minutes * 60.0 + 120.0, subscriber_processes)
        executor = SingleThreadedExecutor()
        executor.add_node(churn.node)
        start_stats = bridge.stats()
        started = time.monotonic()
        start_memory = resident_mb(bridge.proc.pid)
        figures["memory_mb"].append(start_memory)
        report(f"soak: {config} for {minutes} min, bridge pid {bridge.proc.pid}, start {start_memory:.1f} MB")
        next_mark = started + 60.0
        next_sample = started + SAMPLE_SECONDS
        # (seconds since start, MB, cameras subscribed) every SAMPLE_SECONDS.
        samples = []
        steals = [(time.time(), steal_seconds())]
        end = started + minutes * 60.0
        minute = 0
        while time.monotonic() < end and bridge.alive():
            executor.spin_once(timeout_sec=0.01)
            now = time.monotonic()
            if now >= next_sample:
                next_sample += SAMPLE_SECONDS
                # A watchdog: if this loop stops for WATCHDOG_S (a client library hung under
                # it), every thread's stack goes to stderr, so the hang says where it is.
                faulthandler.dump_traceback_later(WATCHDOG_S, exit=False)
                samples.append((now - started, memory_mb(bridge.proc.pid), churn.cameras_phase()))
                steals.append((time.time(), steal_seconds()))
            if now >= next_mark:
                minute += 1
                next_mark += 60.0
                stats = bridge.stats()
                timestep = timestep or stats_timestep(bridge, stats, start_stats, now - started)
                split = memory_mb(bridge.proc.pid) or {}
                memory = split.get("rss")
                figures["memory_mb"].append(memory)
                owners = anonymous_owners_mb(bridge.proc.pid)
                figures.setdefault("anonymous_owners_mb", []).append(owners)
                rtf = (stats["steps"] - start_stats["steps"]) * timestep / (now - started)
                report(f"minute {minute:3d}: resident {memory or 0:8.1f} MB (anonymous "
                       f"{split.get('anon', 0):.1f}: "
                       + ", ".join(f"{owner} {mb:.1f}" for owner, mb in owners.items())
                       + f"; files {split.get('file', 0):.1f}), requests {churn.sent} sent / "
                       f"{churn.answered} answered, longest /clock gap this minute "
                       f"{clock.mark() * 1e3:6.1f} ms, real-time factor {rtf:.4f}, "
                       f"messages received {churn.received}, legacy {churn.legacy_received}")
                if memory is not None and memory > max_memory_mb:
                    report(f"stopped early: the bridge holds more than {max_memory_mb:.0f} MB")
                    figures["stopped_early"] = True
                    break
        alive = bridge.alive()
        # The last requests get their answers; none is sent meanwhile, so that every request
        # counted is either answered or has waited ANSWER_TIMEOUT.
        churn.stop_requests()
        settle = time.monotonic() + ANSWER_TIMEOUT
        while churn.pending and time.monotonic() < settle and alive:
            executor.spin_once(timeout_sec=0.05)
        churn.check_pending()
        wall = time.monotonic() - started
        cpu = thread_cpu_seconds(bridge.proc.pid)
        stats = bridge.stats() if alive else start_stats
        timestep = timestep or stats_timestep(bridge, stats, start_stats, wall)
        clock.stopping = True
        churn.close()
        for gap, end in clock.worst:
            near = [f"{what} {end - at:.3f} s before" for at, what in churn.events if 0 <= end - at <= 1.0]
            stolen = steal_around(steals, end - gap, end)
            stolen = "" if stolen is None else (f"; the host took {stolen[0] * 1e3:.0f} ms of CPU from this "
                                                f"machine in the {stolen[1]:.1f} s around it")
            still = probe.within(end - gap, end)
            if still > 0:
                stolen += f"; a CPU stood still {still * 1e3:.1f} ms of it"
            figures.setdefault("worst_gaps", []).append(
                f"{gap * 1e3:.1f} ms ending {time.strftime('%H:%M:%S', time.localtime(end))}"
                f".{int(end % 1 * 1000):03d}: {', '.join(near) or 'no request within 1 s'}{stolen}")
        figures["steal_seconds"] = steals[-1][1] - steals[0][1]
        # /clock goes out when sim time moved, at most at ros.rates.clock (1000 Hz).
        period = max(1.0 / 1000.0, timestep)
        limit = 10.0 * period
        # Each gap and what is left of it outside the CPUs' stalls.
        gaps = [(gap, gap - probe.within(end - gap, end)) for gap, end in clock.gaps]
        figures.update(
            alive=alive,
            sent=churn.sent,
            answered=churn.answered,
            failed=churn.failed[:20],
            clock_messages=clock.count,
            longest_clock_gap=clock.longest_gap,
            clock_period=period,
            gaps_over_10_periods=sum(gap > limit for gap, _ in gaps),
            # Gaps over 10 periods that would have been within them but for a CPU's stall.
            machine_gaps=sum(gap > limit >= own for gap, own in gaps),
            longest_own_gap=max((own for _, own in gaps), default=0.0),
            probe_granted=probe.granted,
            probe_refusal=probe.refusal,
            machine_stalls=[(cpu, late) for cpu, _, late in probe.stalls],
            real_time_factor=(stats["steps"] - start_stats["steps"]) * timestep / wall,
            received=churn.received,
            legacy_received=churn.legacy_received,
            wall_seconds=wall,
            cpu_seconds=cpu,
        )
    finally:
        faulthandler.cancel_dump_traceback_later()
        probe.stop()
        if load:
            load.stop()
            figures["subscriber_processes"] = load.started
        rclpy.shutdown()
        log = bridge.close()
    figures["log_tail"] = log[-4000:]
    figures["log"] = log
    figures["physics_faults"] = physics_faults(log)
    figures["warmup_minutes"] = warmup_minutes
    figures["samples"] = samples
    figures["phases"] = phase_levels(samples, warmup_minutes * 60.0)
    figures["anonymous_phases"] = phase_levels(samples, warmup_minutes * 60.0, "anon")
    figures["growth_after_warmup"] = growth(figures["phases"])
    figures["growth_from_first_minute"] = growth_from_first_minute(samples)
    figures["anonymous_growth"] = growth(figures["anonymous_phases"])
    return figures


def growth_from_first_minute(samples):
    """Resident memory at the end over that after the first minute, minus one (a fraction;
    None for a run under two minutes): the plain end-against-start figure, which phases of
    streaming and idling also move."""
    firsts = [m["rss"] for t, m, _ in samples if m and 55.0 <= t <= 65.0]
    ends = [m["rss"] for _, m, _ in samples[-10:] if m]
    if not firsts or not ends or samples[-1][0] < 120.0:
        return None
    return min(ends) / min(firsts) - 1.0


def phase_levels(samples, warmup, field="rss"):
    """The memory (`field` of each sample) that each phase (cameras subscribed or not; without
    camera phases, each minute) ending after `warmup` seconds settled at: the low decile of
    the samples in its second half, after the render memory came or went. {phase: [MB, ...]}"""
    levels = {}
    phase = []
    for (t, memory, cameras), following in zip(samples, samples[1:] + [None]):
        if memory is not None:
            phase.append(memory[field])
        changes = following is None or following[2] != cameras
        if not cameras and not changes:
            # Without camera phases, a phase is a minute.
            changes = int(following[0] // 60) != int(t // 60)
        if not changes:
            continue
        # A phase cut short by the end of the run (under 5 samples) is not a phase.
        if len(phase) >= 5 and t >= warmup:
            settled = sorted(phase[len(phase) // 2:])
            levels.setdefault("streaming" if cameras else "idle", []).append(
                settled[int(len(settled) * FLOOR_QUANTILE)])
        phase = []
    return levels


def growth(levels):
    """How much the phases of the last third of the run settled above those of the first
    third, the larger over idle and streaming phases (a fraction; None without two phases of
    a kind)."""
    growths = []
    for values in levels.values():
        if len(values) >= 2:
            third = max(1, len(values) // 3)
            first, last = sum(values[:third]) / third, sum(values[-third:]) / third
            growths.append((last - first) / first)
    return max(growths) if growths else None


def stats_timestep(bridge, stats, start_stats, wall):
    """The world's timestep, as the console reports it (older builds: from the step counter
    and the sim clock since the start, which a reset may disturb)."""
    if "timestep" in stats:
        return stats["timestep"]
    import yaml

    written = (yaml.safe_load(pathlib.Path(bridge.config).read_text()).get("world") or {}).get("timestep")
    if written:
        return float(written)
    steps = stats["steps"] - start_stats["steps"]
    time_advanced = stats["time"] - start_stats["time"]
    if steps > 0 and time_advanced > 0:
        return time_advanced / steps
    return 0.002


def thirds(phase, levels):
    """A series of phase levels, in words: its first and last thirds."""
    third = max(1, len(levels) // 3)
    first, last = sum(levels[:third]) / third, sum(levels[-third:]) / third
    return f"{phase} {first:.1f} -> {last:.1f} MB (first and last {third} of {len(levels)} phases)"


def summary(figures, report=print):
    """Each figure against its target; returns whether all were met."""
    growth = figures["growth_after_warmup"]
    if growth is None:
        growth = float("inf")
    anonymous = figures.get("anonymous_growth")
    anonymous = "n/a" if anonymous is None else f"{anonymous * 100:+.2f} %"
    gap_periods = figures["longest_clock_gap"] / figures["clock_period"]
    own_gaps = figures.get("gaps_over_10_periods", 0) - figures.get("machine_gaps", 0)
    own_periods = figures.get("longest_own_gap", figures["longest_clock_gap"]) / figures["clock_period"]
    rtf = figures["real_time_factor"]
    unanswered = figures["sent"] - figures["answered"]
    plain = figures.get("growth_from_first_minute")
    lines = [
        (f"memory from the first minute to the end: "
         f"{'n/a (under 2 min)' if plain is None else f'{plain * 100:+.2f} %'} (target < 2 %)",
         plain is None or plain < 0.02),
        (f"memory growth after the first {figures['warmup_minutes']:g} min, phase against like phase: "
         f"{growth * 100:+.2f} % "
         f"({', '.join(thirds(phase, levels) for phase, levels in figures['phases'].items())}; "
         f"anonymous memory {anonymous}; target < 2 %)", growth < 0.02),
        (f"longest /clock gap: {figures['longest_clock_gap'] * 1e3:.1f} ms = {gap_periods:.1f} publish periods "
         f"({figures['clock_messages']} messages, {figures.get('gaps_over_10_periods', 0)} gaps over 10 "
         f"periods, {figures.get('machine_gaps', 0)} of them while a CPU stood still; "
         f"{own_gaps} the bridge's own, the longest {own_periods:.1f} periods; target <= 10 periods "
         f"{'outside the CPUs' + chr(39) + ' stalls' if figures.get('probe_granted') else 'everywhere'})",
         own_periods <= 10.0),
        (f"requests: {figures['sent']} sent, {figures['answered']} answered, {unanswered} unanswered "
         f"(target: every one)", unanswered == 0),
        (f"real-time factor: {rtf:.4f} (target 1.00 +- 0.01)", abs(rtf - 1.0) <= 0.01),
        (f"bridge alive at the end: {figures['alive']}", figures["alive"]),
    ]
    for text, met in lines:
        report(f"  {text}: {'met' if met else 'NOT met'}")
    owners = [o for o in figures.get("anonymous_owners_mb", []) if o]
    if len(owners) >= 2:
        report("  anonymous memory by owner, minute 1 -> end: "
               + ", ".join(f"{owner} {owners[0][owner]:.1f} -> {owners[-1][owner]:.1f} MB" for owner in owners[0]))
    if "steal_seconds" in figures:
        report(f"  CPU time the host took from this machine (steal): {figures['steal_seconds']:.1f} s "
               f"in {figures['wall_seconds']:.0f} s")
    if figures.get("physics_faults"):
        faults, windows, total = figures["physics_faults"]
        report(f"  page faults in the physics thread after the first minute: {faults}, in {windows} "
               f"of {total} diagnostics windows")
    if "probe_granted" in figures:
        stalls = [late for _, late in figures["machine_stalls"]]
        per_cpu = collections.Counter(cpu for cpu, _ in figures["machine_stalls"])
        report(f"  CPUs standing still (a probe process per CPU at SCHED_FIFO {PROBE_PRIORITY} woke over "
               f"{STALL_S * 1e3:.0f} ms late): "
               + (f"{len(stalls)} times ({', '.join(f'CPU {c}: {n}' for c, n in sorted(per_cpu.items())) or 'none'}), "
                  f"{sum(stalls):.2f} s in all, the longest {max(stalls, default=0) * 1e3:.1f} ms"
                  if figures["probe_granted"] else f"not measured: SCHED_FIFO refused ({figures['probe_refusal']})"))
    cpu = figures.get("cpu_seconds") or {}
    if cpu:
        wall = figures["wall_seconds"]
        busiest = sorted(cpu.items(), key=lambda kv: -kv[1])[:8]
        report(f"  CPU of the bridge: {sum(cpu.values()):.0f} s in {wall:.0f} s "
               f"({sum(cpu.values()) / wall * 100:.1f} % of a core); by thread: "
               + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in busiest))
    for gap in figures.get("worst_gaps", []):
        report(f"  /clock gap {gap}")
    for failure in figures["failed"]:
        report(f"  failed: {failure}")
    return all(met for _, met in lines)


CASES = {"normal": 0, "niced": 10}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.environ.get("MUJOCO_BRIDGE_BIN",
                                                           str(REPO / "target" / "release" / "mujoco_bridge")))
    parser.add_argument("--config", default=str(REPO / "config" / "default.yaml"))
    parser.add_argument("--minutes", type=float, default=30.0, help="minutes of each case")
    parser.add_argument("--warmup-minutes", type=float, default=2.0)
    parser.add_argument("--camera-on", type=float, default=60.0, help="seconds cameras are subscribed per phase")
    parser.add_argument("--camera-off", type=float, default=60.0, help="seconds they are not")
    parser.add_argument("--cases", default="normal,niced",
                        help="the clients' priority, in order: normal (niceness 0, as users run their "
                             "nodes) and niced (niceness 10)")
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 1,
                        help="processes that keep a core busy beside the clients (default: one per core)")
    parser.add_argument("--no-subscriber-processes", action="store_true",
                        help="no subscriber process started every second")
    parser.add_argument("--max-memory-mb", type=float, default=8000.0,
                        help="stop early when the bridge holds more (a leaking build would take the machine)")
    parser.add_argument("--json", help="also write the figures to this file (one entry per case)")
    parser.add_argument("--log", help="write the bridge's log to this file (one per case, named "
                                      "FILE-CASE, when there are several)")
    parser.add_argument("bridge_args", nargs="*", help="more arguments for the bridge (after --)")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown or [CASES[c] for c in cases] != sorted(CASES[c] for c in cases):
        parser.error(f"--cases: from {', '.join(CASES)}, in that order (niceness only goes up)")
    results, met = {}, True
    for case in cases:
        print(f"== case {case}: clients at niceness {CASES[case]}, {args.busy} busy processes, "
              f"subscriber processes {'off' if args.no_subscriber_processes else 'every second'}", flush=True)
        figures = run(args.binary, args.config, args.minutes, args.warmup_minutes, args.camera_on,
                      args.camera_off, args.bridge_args, max_memory_mb=args.max_memory_mb,
                      client_nice=CASES[case], busy=args.busy,
                      subscriber_processes=not args.no_subscriber_processes)
        met = summary(figures) and met
        figures["log_lines"] = figures["log"].count("\n")
        print(f"  log: {figures['log_lines']} lines", flush=True)
        if not figures["alive"]:
            print(figures["log_tail"])
        if args.log:
            log = pathlib.Path(args.log)
            if len(cases) > 1:
                log = log.with_name(f"{log.stem}-{case}{log.suffix}")
            log.write_text(figures["log"])
        results[case] = figures
    if len(results) > 1:
        print("== side by side")
        for case, figures in results.items():
            plain = figures.get("growth_from_first_minute")
            print(f"  {case:6s}: longest /clock gap {figures['longest_clock_gap'] * 1e3:.1f} ms "
                  f"({figures['longest_clock_gap'] / figures['clock_period']:.1f} periods), "
                  f"{figures['gaps_over_10_periods']} gaps over 10 periods ({figures.get('machine_gaps', 0)} while "
                  f"a CPU stood still), real-time factor "
                  f"{figures['real_time_factor']:.4f}, memory first minute -> end "
                  f"{'n/a' if plain is None else f'{plain * 100:+.2f} %'}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {case: {k: v for k, v in f.items() if k != "log"} for case, f in results.items()}, indent=1))
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
