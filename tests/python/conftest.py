"""Shared fixtures of the end-to-end tests: the real mujoco_bridge binary, started with a
robot config on free loopback ports and driven through its --console, pyzmq clients that
behave like the legacy URLab clients, and an rclpy node with its spin and service helpers."""
import os
import pathlib
import select
import signal
import socket
import struct
import subprocess
import tempfile
import time

import pytest
import zmq

# MuJoCo's Python bindings pick their GL platform when first imported: the tests that render
# with them do so headless, as the bridge does.
os.environ.setdefault("MUJOCO_GL", "egl")
REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("MUJOCO_BRIDGE_BIN", str(REPO / "target" / "debug" / "mujoco_bridge"))


def free_ports(count):
    """Distinct free TCP ports on 127.0.0.1."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


# The bridges running now: a failing test's report carries their logs.
RUNNING = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.when == "call" and report.failed:
        for bridge in RUNNING:
            report.sections.append((f"mujoco_bridge log ({bridge.config})", bridge.log_so_far()[-6000:]))


class Bridge:
    """A running bridge: console commands, legacy sockets, and its final log."""

    def __init__(self, config, extra_args=()):
        self.state_port, self.control_port, self.info_port = free_ports(3)
        self.ctx = zmq.Context()
        config_path = config if os.path.isabs(str(config)) else REPO / "config" / config
        self.config = pathlib.Path(config_path).name
        args = [
            BINARY, "--config", str(config_path), "--console", "--mode", "paused",
            "--set", "zmq.enabled=true",
            "--set", f"zmq.state=tcp://127.0.0.1:{self.state_port}",
            "--set", f"zmq.control=tcp://127.0.0.1:{self.control_port}",
            "--set", f"zmq.info=tcp://127.0.0.1:{self.info_port}",
            *extra_args,
        ]
        env = dict(os.environ, RUST_LOG="info")
        # The log goes to a file: a full pipe would block the bridge.
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            text=True, env=env, cwd=REPO,
        )
        RUNNING.append(self)
        self.console("stats", timeout=60)  # the console answers once the sockets are bound

    def console(self, line, timeout=30):
        """Sends one console line and returns the reply; fails on 'error:' replies."""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no console reply to {line!r}"
        reply = self.proc.stdout.readline().strip()
        assert reply.startswith("ok"), f"{line!r} -> {reply!r}"
        return reply

    def log_so_far(self):
        """The log (stderr) written until now."""
        return os.pread(self.stderr.fileno(), 1 << 24, 0).decode(errors="replace")

    def stats(self):
        words = self.console("stats").split()
        return {words[i]: float(words[i + 1]) for i in range(1, len(words) - 1, 2)}

    def wait_for(self, counter, at_least, timeout=10):
        """Waits until a `stats` counter reaches `at_least`."""
        deadline = time.monotonic() + timeout
        while (value := self.stats()[counter]) < at_least:
            assert time.monotonic() < deadline, f"{counter} stayed at {value}, {at_least} expected"
            time.sleep(0.002)

    def state_socket(self, prefix=b""):
        sub = self.ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.connect(f"tcp://127.0.0.1:{self.state_port}")
        sub.setsockopt(zmq.SUBSCRIBE, prefix)
        assert sub.poll(10000), "no state rows arrive"
        return sub

    def settled_rows(self, prefix=b""):
        """The rows of the current (paused) state, read on a new subscription: one made
        after the caller's last change holds no rows published before it, whereas an old
        socket may still receive rows that were in flight."""
        sub = self.state_socket(prefix)
        try:
            return settled_rows(sub)
        finally:
            sub.close()

    def state_socket_lazy(self, prefix=b""):
        """A state subscription that does not wait for a first row (nothing is published
        while paused with zmq.publish_while_paused=false)."""
        sub = self.ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.connect(f"tcp://127.0.0.1:{self.state_port}")
        sub.setsockopt(zmq.SUBSCRIBE, prefix)
        return sub

    def info_socket(self):
        sub = self.ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.connect(f"tcp://127.0.0.1:{self.info_port}")
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        return sub

    def control_socket(self, robot="g1"):
        """A connected PUB socket, once the bridge receives from it (ZMQ drops what a PUB
        sends before the subscription is in place, so legacy clients repeat)."""
        pub = self.ctx.socket(zmq.PUB)
        pub.setsockopt(zmq.LINGER, 0)
        pub.connect(f"tcp://127.0.0.1:{self.control_port}")
        before = self.stats()["zmq_received"]
        deadline = time.monotonic() + 10
        while self.stats()["zmq_received"] == before:
            assert time.monotonic() < deadline, "the bridge never received the probe"
            pub.send_multipart([f"{robot}/control ".encode(), b""])  # too short: dropped, but counted
            time.sleep(0.01)
        return pub

    def close(self):
        """Quits and returns the log (stderr) of the run; later calls return it again."""
        if self.proc.stdin.closed:
            return self.log
        try:
            self.console("quit")
        except AssertionError:
            pass
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.stderr.seek(0)
        self.log = self.stderr.read()
        self.ctx.destroy(linger=0)
        if self in RUNNING:
            RUNNING.remove(self)
        return self.log


def row_sets(sub, count, timeout=10):
    """Reads `count` complete row sets of one articulation (joint, base and sensor rows,
    the twist row, then the actions row when non-zero); returns lists of (topic, payload).
    A set is complete when the first row of the next one arrives."""
    def closes(topic):
        return topic.endswith(b"/twist") or topic.endswith(b"/actions")

    sets, current = [], None
    previous_closed = False
    deadline = time.monotonic() + timeout
    while len(sets) < count:
        assert time.monotonic() < deadline, f"only {len(sets)} row sets in {timeout} s"
        if not sub.poll(100):
            continue
        topic, payload = sub.recv_multipart()
        if previous_closed and not closes(topic):
            if current is not None:
                sets.append(current)
            current = []  # the subscription may have started mid-set: skip that one
        if current is not None:
            current.append((topic, payload))
        previous_closed = closes(topic)
    return sets


def settled_rows(sub, timeout=10):
    """The rows of a paused state on a subscription made after the last change (see
    `Bridge.settled_rows`): reads until two consecutive row sets are byte-identical, which
    only paused ticks publish. Returns {topic: payload}."""
    deadline = time.monotonic() + timeout
    previous = None
    while True:
        assert time.monotonic() < deadline, "the state never settled"
        (current,) = row_sets(sub, 1, timeout)
        if current == previous:
            return dict(current)
        previous = current


def joint_row(payload):
    assert len(payload) == 16
    return struct.unpack("<ifff", payload)


@pytest.fixture
def ros():
    """An rclpy node with LOCALHOST discovery, for one test."""
    rclpy = pytest.importorskip("rclpy")
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    rclpy.init()
    node = rclpy.create_node("probe")
    yield node
    # destroy_node leaves the node's action clients; one that outlives the context is
    # destroyed by the collector at exit, where Fast DDS waits on its stopped event thread
    # and pytest never ends.
    for waitable in list(node.waitables):
        if hasattr(waitable, "destroy"):
            waitable.destroy()
    node.destroy_node()
    rclpy.shutdown()


def cpu_jiffies():
    """(steal, total) of /proc/stat's first line: CPU time since boot, all CPUs together.
    Steal is the time the hypervisor ran something else on this guest's CPUs."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:]]
    return (fields[7] if len(fields) > 7 else 0), sum(fields)


def steal_share(before):
    """The share of all CPU time the host took since `before` (a cpu_jiffies())."""
    steal, total = cpu_jiffies()
    return (steal - before[0]) / max(1, total - before[1])


def spin_until(node, predicate, timeout=20, what="condition"):
    """Spins `node` until `predicate()` holds; fails after `timeout` seconds."""
    import rclpy

    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        rclpy.spin_once(node, timeout_sec=0.05)


def latest_message(node, message_type, topic, qos=None, timeout=60):
    """The first message on `topic` that a new subscription of `node` receives (reliable,
    depth 2 unless `qos` says otherwise)."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    received = []
    qos = qos or QoSProfile(depth=2, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(message_type, topic, received.append, qos)
    spin_until(node, lambda: received, timeout, what=topic)
    return received[-1]


# A camera (fovy 45) two metres from a red box whose near face lies 1.9 m ahead on its optical
# axis, rendered at 320 x 240: the camera tests' scene (ROS topics and legacy streams).
CAMERA_WORLD = """
world: {timestep: 0.002, floor: false, light: true}
robots:
  - name: rig
    mjcf_string: |
      <mujoco><worldbody>
        <body name="head" pos="0 0 1">
          <camera name="eye" fovy="45" xyaxes="0 -1 0 0 0 1"/>
        </body>
        <body name="target" pos="2 0 1">
          <geom type="box" size="0.1 0.3 0.3" rgba="1 0 0 1"/>
        </body>
      </worldbody></mujoco>
    cameras:
      - {camera: eye, width: 320, height: 240, rate: 10, points: true}
"""


# Two lidars on a mast before a wall: the lidar tests' scene (ROS topics, MCAP recordings).
# Two robots share the world, so topics and frames carry the robot's name (rig/...).
# The wall's face lies 2.9 m ahead of the mast (x = 2.9 in the lidar frames); the mast's own
# sphere encloses both lidars, so only rays that pass through it reach the wall.
LIDAR_WALL = 2.9
LIDAR_WORLD = """
world: {timestep: 0.002, floor: false, light: true}
robots:
  - name: rig
    mjcf_string: |
      <mujoco><worldbody>
        <body name="mast" pos="0 0 1">
          <geom type="sphere" size="0.2" rgba="0 0 1 1"/>
        </body>
      </worldbody></mujoco>
    lidars:
      - {name: velo, body: mast, channels: 8, samples: 90, vertical_fov: [-10, 10],
         horizontal_fov: [-30, 30], range_min: 0.05, range_max: 10, rate: 5}
      - {name: laser, body: mast, xyz: [0, 0, 0.05], channels: 1, samples: 61,
         horizontal_fov: [-30, 30], range_min: 0.05, range_max: 10, rate: 5}
  - name: wall
    mjcf_string: |
      <mujoco><worldbody>
        <body name="slab" pos="3 0 1"><geom type="box" size="0.1 3 3"/></body>
      </worldbody></mujoco>
"""


def bridge_of(tmp_path, world, extra_args=()):
    """A bridge on the config text `world` (written under `tmp_path`)."""
    config = tmp_path / "world.yaml"
    config.write_text(world)
    return Bridge(str(config), extra_args=list(extra_args))


def call(node, service_type, name, request, timeout=20):
    """Calls a service and returns its response. The node keeps one client per service:
    a new client is discovered anew, which takes seconds on some DDS implementations."""
    clients = node.__dict__.setdefault("_test_clients", {})
    client = clients.get((service_type, name))
    if client is None:
        client = clients[(service_type, name)] = node.create_client(service_type, name)
    assert client.wait_for_service(timeout_sec=timeout), f"{name} is not served"
    future = client.call_async(request)
    spin_until(node, future.done, timeout, what=name)
    return future.result()


@pytest.fixture
def g1():
    bridge = Bridge("g1.yaml")
    yield bridge
    bridge.close()


# The `ros2` CLI and launch of ROS 2 Jazzy, installed by scripts/setup-ros-tools.sh from the
# vendored sources when the machine has them.
ROS2 = REPO / ".deps" / "venv" / "bin" / "ros2"
needs_ros2_cli = pytest.mark.skipif(
    not ROS2.exists() or os.environ.get("MUJOCO_BRIDGE_ROS") != "1",
    reason="the ros2 CLI and launch are not installed (scripts/setup-ros-tools.sh found no "
           "../shared/vendor/ros2-jazzy-python)" if not ROS2.exists() else "ROS 2 tests are off",
)


def ros2_env(prefix=None):
    """The environment the `ros2` CLI runs in: the wheel prefix (and install prefixes: one
    or a list) on AMENT_PREFIX_PATH, discovery on this machine."""
    venv = REPO / ".deps" / "venv"
    extra = prefix if isinstance(prefix, list) else [prefix] if prefix else []
    prefixes = [str(p) for p in extra] + [str(venv)]
    return dict(os.environ, AMENT_PREFIX_PATH=":".join(prefixes), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
                PATH=f"{venv / 'bin'}:{os.environ['PATH']}", PYTHONUNBUFFERED="1")


def ros2(*args, timeout=60, prefix=None, check=True):
    """Runs `ros2 ARGS...` (never through the daemon) and returns the finished process."""
    run = subprocess.run([str(ROS2), *args], capture_output=True, text=True, timeout=timeout, env=ros2_env(prefix))
    if check:
        assert run.returncode == 0, f"ros2 {' '.join(args)}: exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    return run


def echo_once(topic, message_type, timeout=90, prefix=None):
    """The first message on `topic`, as `ros2 topic echo --once` prints it. Once the message
    is out, the CLI gets 10 s to exit and is then stopped as Ctrl-C stops it: in CI it once
    printed the message and was still there 90 s later (the soak saw rclpy hang the same way
    inside Fast DDS's shared-memory transport), which is the client's affair, not the
    bridge's; such a hang is printed, not hidden."""
    echo = subprocess.Popen([str(ROS2), "topic", "echo", "--no-daemon", "--once", topic, message_type],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ros2_env(prefix),
                            start_new_session=True)
    printed = []
    try:
        deadline = time.monotonic() + timeout
        while not printed or printed[-1].rstrip("\n") != "---":
            if not select.select([echo.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise AssertionError(f"ros2 topic echo {topic}: no message in {timeout} s")
            line = echo.stdout.readline()
            if not line:
                break
            printed.append(line)
        try:
            code = echo.wait(timeout=10)
        except subprocess.TimeoutExpired:
            print(f"ros2 topic echo {topic}: printed its message but did not exit in 10 s; stopped with SIGINT")
            code = 0
        assert code == 0, f"ros2 topic echo {topic}: exit {code}\n{''.join(printed)}\n{echo.stderr.read()[-2000:]}"
    finally:
        if echo.poll() is None:
            os.killpg(echo.pid, signal.SIGINT)
            try:
                echo.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(echo.pid, signal.SIGKILL)
                echo.wait()
        echo.stdout.close()
        echo.stderr.close()
    return "".join(printed)


class Launch:
    """`ros2 launch ARGS...` running in the background, its output kept, stopped as Ctrl-C in
    a terminal stops it."""

    def __init__(self, prefix, *args):
        self.prefix = prefix
        self.log = tempfile.TemporaryFile(mode="w+")
        # SIGINT as a terminal gives it, whatever the suite was started from: a shell that
        # runs it in the background hands SIGINT down ignored, and Python then keeps ignoring
        # it, so `ros2 launch` would never hear the stop below.
        self.proc = subprocess.Popen([str(ROS2), "launch", *args], stdout=self.log,
                                     stderr=subprocess.STDOUT, text=True, env=ros2_env(prefix),
                                     start_new_session=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def echo(self, topic, message_type):
        assert self.proc.poll() is None, f"ros2 launch ended early:\n{self.output()}"
        return echo_once(topic, message_type, prefix=self.prefix)

    def output(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        """SIGINT, as Ctrl-C in a terminal; returns the exit code and what it printed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode, self.output()


def install_prefix(root, binary=BINARY):
    """An install prefix as colcon lays this package out (colcon-ros-cargo): the binary in
    lib/mujoco_bridge, launch/config/urdf and package.xml in share/mujoco_bridge, and the
    package's marker in the ament index."""
    import shutil

    share = root / "share" / "mujoco_bridge"
    share.mkdir(parents=True)
    for name in ("launch", "config", "urdf"):
        shutil.copytree(REPO / name, share / name)
    shutil.copy2(REPO / "package.xml", share / "package.xml")
    (root / "lib" / "mujoco_bridge").mkdir(parents=True)
    (root / "lib" / "mujoco_bridge" / "mujoco_bridge").symlink_to(binary)
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "mujoco_bridge").touch()
    return root
