"""rclpy clients of the ROS 2 benchmark (benches/ros.rs starts them; not run alone).

  probe TOPIC ...   subscribes to the topics (raw, undecoded) and answers each stdin line
                    "count" with one JSON line {topic: messages received so far}
  echo              republishes /bench/ping on /bench/pong (the rclpy -> rclpy baseline)
  latency NS SAMPLES SHARE_SECONDS
                    (b) command -> state latency through the bridge (robot topics under NS)
                    beside the echo round trip, then (c) the share of 1 kHz joint_states
                    received over SHARE_SECONDS; prints the figures
"""
import json
import os
import sys
import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


def message_type(topic):
    from diagnostic_msgs.msg import DiagnosticArray
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, JointState
    from tf2_msgs.msg import TFMessage

    for suffix, kind in [("clock", Clock), ("joint_states", JointState), ("tf", TFMessage),
                         ("diagnostics", DiagnosticArray), ("imu", Imu), ("odom", Odometry)]:
        if topic.endswith(suffix):
            return kind
    raise SystemExit(f"ros_clients: no message type known for {topic}")


def probe(topics):
    node = rclpy.create_node("bench_probe")
    counts = {t: 0 for t in topics}
    lock = threading.Lock()

    # Raw (serialized) messages, taken in batches every few milliseconds instead of one
    # executor wake-up and Python callback per message: the probe's own CPU would otherwise
    # compete for the machine's two cores with the physics it is there to measure. The
    # queue (depth 100) holds far more than one batch at 1 kHz, so none is lost by waiting.
    subscriptions = [
        (topic, node.create_subscription(message_type(topic), topic, lambda _: None, RELIABLE,
                                         raw=True))
        for topic in topics
    ]

    def answer():
        for line in sys.stdin:
            if line.strip() == "count":
                with lock:
                    print(json.dumps(counts), flush=True)
        os._exit(0)

    threading.Thread(target=answer, daemon=True).start()
    print("ready", flush=True)
    while True:
        for topic, subscription in subscriptions:
            taken = 0
            with subscription.handle:
                while subscription.handle.take_message(subscription.msg_type, True) is not None:
                    taken += 1
            with lock:
                counts[topic] += taken
        time.sleep(0.005)


def echo():
    from std_msgs.msg import Float64

    node = rclpy.create_node("bench_echo")
    pong = node.create_publisher(Float64, "/bench/pong", RELIABLE)
    node.create_subscription(Float64, "/bench/ping", pong.publish, RELIABLE)
    rclpy.spin(node)


def quantiles(values):
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return pick(0.5), pick(0.99)


def spin_in_background(node):
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()


def wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"ros_clients: timed out waiting for {what}")
        time.sleep(0.01)


def latency(namespace, samples, share_seconds):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64

    node = rclpy.create_node("bench_client")
    # Callbacks stamp arrivals with perf_counter and wake the main thread.
    arrived = threading.Event()
    pong_time = [0.0]

    def on_pong(_):
        pong_time[0] = time.perf_counter()
        arrived.set()

    node.create_subscription(Float64, "/bench/pong", on_pong, RELIABLE)
    ping = node.create_publisher(Float64, "/bench/ping", RELIABLE)
    # The bridge: joint commands in, joint_states out.
    joint = "FR_thigh_joint"
    states = []  # (receipt time, stamp in ns)
    watch = {"effort_before": None, "effort": 0.0, "hit": 0.0}

    def on_state(message):
        now = time.perf_counter()
        effort = message.effort[list(message.name).index(joint)]
        states.append((now, message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec))
        watch["effort"] = effort
        before = watch["effort_before"]
        if before is not None and abs(effort - before) > 8.0:
            watch["effort_before"] = None
            watch["hit"] = now
            arrived.set()

    node.create_subscription(JointState, f"{namespace}joint_states", on_state, RELIABLE)
    commands = node.create_publisher(JointState, f"{namespace}joint_commands", RELIABLE)
    spin_in_background(node)
    wait(lambda: ping.get_subscription_count() > 0 and commands.get_subscription_count() > 0
         and len(states) > 100, 30, "the echo node and the bridge")
    time.sleep(1.0)  # let discovery settle both ways

    echo_times = []
    for k in range(samples):
        arrived.clear()
        sent = time.perf_counter()
        ping.publish(Float64(data=float(k)))
        if not arrived.wait(5):
            raise SystemExit("ros_clients: an echo was lost")
        echo_times.append(pong_time[0] - sent)
        time.sleep(0.005)

    # Alternate the thigh's position target: the actuator force (effort) jumps by
    # kp * 0.2 = 20 N m in the first step that applies the command.
    bridge_times = []
    targets = [0.7, 0.9]
    for k in range(samples + 1):
        time.sleep(0.04)  # the leg's transient has died down
        arrived.clear()
        watch["effort_before"] = watch["effort"]
        sent = time.perf_counter()
        commands.publish(JointState(name=[joint], position=[targets[k % 2]]))
        if not arrived.wait(5):
            raise SystemExit("ros_clients: a command had no effect in joint_states")
        if k > 0:  # the first one only moves the leg to the first target
            bridge_times.append(watch["hit"] - sent)

    e50, e99 = quantiles(echo_times)
    b50, b99 = quantiles(bridge_times)
    print(f"(b) command -> state latency seen by rclpy, {samples} samples each:")
    print(f"    bridge (joint_commands -> physics step -> joint_states at 1 kHz): p50 {b50 * 1e3:.3f} ms, p99 {b99 * 1e3:.3f} ms")
    print(f"    rclpy -> rclpy echo round trip (same run):                      p50 {e50 * 1e3:.3f} ms, p99 {e99 * 1e3:.3f} ms")

    # (c) every joint_states message over the window, by receipt time.
    time.sleep(1.0)
    start_index = len(states)
    start = time.perf_counter()
    time.sleep(share_seconds)
    end_index = len(states)
    elapsed = time.perf_counter() - start
    window = states[start_index:end_index]
    expected = 1000.0 * elapsed
    stamps = len({s for _, s in window})
    steps = (window[-1][1] - window[0][1]) / 1e6 + 1 if window else 0  # 1 ms steps
    print(f"(c) 1 kHz joint_states over {elapsed:.1f} s: received {len(window)} of {expected:.0f} "
          f"published at the configured rate, share {len(window) / expected:.4f} (target >= 0.999); "
          f"distinct sim stamps {stamps} over {steps:.0f} physics steps ({stamps / max(steps, 1):.4f})")
    sys.stdout.flush()
    os._exit(0)


def main():
    rclpy.init()
    mode = sys.argv[1]
    if mode == "probe":
        probe(sys.argv[2:])
    elif mode == "echo":
        echo()
    elif mode == "latency":
        latency(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        raise SystemExit(f"ros_clients: unknown mode {mode}")


if __name__ == "__main__":
    main()
