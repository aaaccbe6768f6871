"""A ROS-side fuzz: random and malformed requests to every service and action of the node and
random messages (and raw bytes that are no message at all) to every topic it subscribes,
on both backends; every request is answered, and at the end the bridge is alive and steps in
real time. The seed is fixed (set MUJOCO_BRIDGE_FUZZ_SEED for another run)."""
import math
import os
import random
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
# Installed with the ros2 CLI (scripts/setup-ros-tools.sh); without it this test skips.
utilities = pytest.importorskip("rosidl_runtime_py.utilities")
get_action, get_message, get_service = utilities.get_action, utilities.get_message, utilities.get_service

from conftest import Bridge, spin_until  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

NODE = "/mujoco_bridge/"
# Requests per service, goals per action, messages per topic.
ROUNDS = int(os.environ.get("MUJOCO_BRIDGE_FUZZ_ROUNDS", "25"))
ANSWER_TIMEOUT = 60.0
STRINGS = ["", "mobile", "arm_elbow", "world", "../../../etc/passwd", "/etc/passwd", "${HOME}/x.yaml",
           "$(env HOME)", "<mujoco><worldbody/></mujoco>", "<robot name='r'><link name='l'/></robot>",
           "package://nope/x.urdf", "file:///dev/zero", "ünïcødé ✓", "a" * 5000, "\x01\x02",
           "<mujoco>" + "<a>" * 3000 + "</a>" * 3000 + "</mujoco>"]
FLOATS = [0.0, -0.0, 1.0, -1.0, 1e-300, 1e308, -1e308, math.inf, -math.inf, math.nan, 3.14159, 1e6]
INT_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "byte": (0, 255), "octet": (0, 255), "char": (0, 255),
              "int16": (-2**15, 2**15 - 1), "uint16": (0, 2**16 - 1), "int32": (-2**31, 2**31 - 1),
              "uint32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1), "uint64": (0, 2**64 - 1)}


def random_value(rng, kind, depth=0):
    """A random value for a rosidl field type string."""
    if kind.startswith("sequence<"):
        inner = kind[len("sequence<"):-1]
        bound = None
        if "," in inner:
            inner, bound = inner.split(",")
            bound = int(bound)
        count = rng.choice([0, 0, 1, 2, 3, 7]) if depth < 3 else 0
        # Now and then a long one (of numbers: a list of long texts would make a message of
        # tens of MB, which the middleware fragments beyond what some reassemble).
        scalar = inner.split(",")[0].strip() in INT_RANGES or inner.startswith(("double", "float", "boolean"))
        if rng.random() < 0.05 and depth == 0 and scalar:
            count = 2000
        if bound is not None:
            count = min(count, bound)
        return [random_value(rng, inner.strip(), depth + 1) for _ in range(count)]
    if kind.endswith("]") and "[" in kind:
        inner, size = kind[:-1].split("[")
        return [random_value(rng, inner, depth + 1) for _ in range(int(size))]
    if kind in ("double", "float"):
        value = rng.choice(FLOATS) if rng.random() < 0.6 else rng.uniform(-1e3, 1e3)
        return value if kind == "double" or not math.isfinite(value) or abs(value) < 3e38 else 1e38
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in INT_RANGES:
        lo, hi = INT_RANGES[kind]
        value = rng.choice([lo, hi, 0, 1, rng.randint(lo, hi)])
        return bytes([value]) if kind in ("byte",) else value
    if kind in ("string", "wstring") or kind.startswith("string<"):
        text = rng.choice(STRINGS)
        if kind.startswith("string<"):
            text = text[:int(kind[len("string<"):-1])]
        return text
    message = get_message(kind)()
    fill(rng, message, depth + 1)
    return message


def fill(rng, message, depth=0):
    for name, kind in message.get_fields_and_field_types().items():
        try:
            setattr(message, name, random_value(rng, kind, depth))
        except (AssertionError, TypeError, ValueError, AttributeError):
            pass  # rclpy refuses what its type cannot hold: the field keeps its default
    return message


def bridge_interfaces(ros):
    """The services, actions and subscribed topics of the node (names and types)."""
    deadline = time.monotonic() + 30
    while True:
        services = [(n, t[0]) for n, t in ros.get_service_names_and_types()
                    if n.startswith(NODE) or n.startswith("/controller_manager/") or "_action/" in n
                    or n.endswith("/get_result")]
        subscribed = []
        if ("mujoco_bridge", "/") in ros.get_node_names_and_namespaces():
            subscribed = ros.get_subscriber_names_and_types_by_node("mujoco_bridge", "/")
        if any("spawn_entity" in n for n, _ in services) and subscribed:
            break
        assert time.monotonic() < deadline, "the node's interfaces were not discovered"
        rclpy.spin_once(ros, timeout_sec=0.2)
    plain = [(n, t) for n, t in services if "/_action/" not in n]
    actions = sorted({(n.split("/_action/")[0], t.replace("_SendGoal", "").replace("/srv/", "/action/"))
                      for n, t in services if n.endswith("/_action/send_goal")})
    topics = [(n, t[0]) for n, t in subscribed if n not in ("/parameter_events", "/clock")]
    return plain, actions, topics


def test_random_requests_to_every_entry_are_answered_and_the_bridge_runs_on(ros, tmp_path):
    seed = int(os.environ.get("MUJOCO_BRIDGE_FUZZ_SEED", "2026"))
    rng = random.Random(seed)
    # Random calls to ~/record start recordings: into the test's folder, not the checkout.
    bridge = Bridge("default.yaml", extra_args=["--set", f"record.folder={tmp_path}"])
    try:
        bridge.console("realtime")
        services, actions, topics = bridge_interfaces(ros)
        # What would end the test's own world rather than test the bridge: unloading it.
        services = [(n, t) for n, t in services if not n.endswith("/unload_world")]
        assert any(n.startswith("/controller_manager/") for n, _ in services), "the controller manager's services are fuzzed too"
        sent = answered = 0
        pending = []
        for name, kind in services:
            # Deep enough for every answer of the round (the default keeps the last 10).
            client = ros.create_client(get_service(kind), name, qos_profile=QoSProfile(depth=100))
            assert client.wait_for_service(timeout_sec=30), name
            for _ in range(ROUNDS):
                request = fill(rng, get_service(kind).Request())
                pending.append((name, client.call_async(request), time.monotonic()))
                sent += 1
            # Answered before the next service's round: a slow one shows by name.
            deadline = time.monotonic() + ANSWER_TIMEOUT
            spin_until(ros, lambda: all(f.done() for _, f, _ in pending) or time.monotonic() > deadline,
                       timeout=ANSWER_TIMEOUT + 5, what=f"answers from {name}")
            unanswered = [n for n, f, _ in pending if not f.done()]
            assert not unanswered, f"no answer within {ANSWER_TIMEOUT} s: {unanswered}"
            answered += sum(f.exception() is None and f.result() is not None for _, f, _ in pending)
            pending.clear()
        goals = goals_answered = 0
        for name, kind in actions:
            client = ActionClient(ros, get_action(kind), name)
            assert client.wait_for_server(timeout_sec=30), name
            for _ in range(ROUNDS):
                goal = fill(rng, get_action(kind).Goal())
                future = client.send_goal_async(goal)
                goals += 1
                spin_until(ros, future.done, timeout=ANSWER_TIMEOUT, what=f"{name} goal answered")
                goals_answered += future.exception() is None and future.result() is not None
                handle = future.result()
                if handle.accepted and rng.random() < 0.5:
                    cancel = handle.cancel_goal_async()
                    spin_until(ros, cancel.done, timeout=ANSWER_TIMEOUT, what=f"{name} cancel answered")
        messages = garbage_sent = 0
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        for name, kind in topics:
            publisher = ros.create_publisher(get_message(kind), name, reliable)
            spin_until(ros, lambda: publisher.get_subscription_count() > 0, what=f"the bridge on {name}")
            for _ in range(ROUNDS):
                publisher.publish(fill(rng, get_message(kind)()))
                messages += 1
                # Bytes that are no message: what a broken or hostile peer puts on the wire
                # (a CDR header, then garbage; or garbage alone).
                garbage = bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 3, 17, 200, 5000])))
                header = b"\x00\x01\x00\x00" if rng.random() < 0.7 else b""
                try:
                    publisher.publish(header + garbage)
                except Exception:  # noqa: BLE001 (rclpy's RCLError lives in its C module)
                    continue  # the middleware on this side refused to send it
                garbage_sent += 1
            rclpy.spin_once(ros, timeout_sec=0.05)
        print(f"fuzz (seed {seed}): {len(services)} services, {sent} requests sent, {answered} answered; "
              f"{len(actions)} actions, {goals} goals sent, {goals_answered} answered; "
              f"{len(topics)} topics, {messages} random messages and {garbage_sent} of raw garbage")
        assert answered == sent and goals_answered == goals
        # Alive, and stepping in real time.
        assert bridge.proc.poll() is None, "the bridge ended"
        # The fuzz may have paused it or set another speed (live parameters): back to 1.
        bridge.console("speed 1")
        bridge.console("realtime")
        before, wall = bridge.stats()["steps"], time.monotonic()
        time.sleep(5.0)
        after = bridge.stats()
        rtf = (after["steps"] - before) * after["timestep"] / (time.monotonic() - wall)
        print(f"after the fuzz: real-time factor {rtf:.3f}, generation {after['generation']:.0f}")
        # Stepping at its pace (a loose bound: the machine runs the test's clients too).
        assert rtf > 0.9, rtf
        assert "panicked" not in bridge.log_so_far()
    finally:
        bridge.close()
