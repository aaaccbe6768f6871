"""Legacy ZMQ benchmark: Unitree G1 at 500 Hz realtime for 60 s to a draining pyzmq client.

Prints, from one run:
- rows received per topic / physics steps (target 1.0) and the gaps (target 0);
- for control batches: in which step the bridge applies them, against the step count when
  each reached the bridge (target: the next step), and as the client sees it (sent right
  after the rows of step j arrived: applied in step j + 1 unless the client lagged).

Run: bash scripts/bench-zmq.sh   (builds the release binary first)
"""
import os
import pathlib
import struct
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))
from conftest import Bridge  # noqa: E402

SECONDS = float(os.environ.get("BENCH_SECONDS", "60"))
RATE = 500
STEPS = int(SECONDS * RATE)
PROBE_EVERY = 250  # steps between two control probes
TORQUE = 20.0


def received_twist(sub):
    """Drains what arrives; whether a twist row (the end of a step's rows) was among it."""
    seen = False
    while sub.poll(50 if seen else 200):
        seen |= sub.recv_multipart()[0] == b"g1/twist"
    return seen


def main():
    # Passthrough: the probe's value is the elbow torque, so its effect shows in that very
    # step's joint acceleration. Rows only for physics steps (none while paused).
    bridge = Bridge("g1.yaml", ["--set", "robots.0.control.mode=passthrough",
                                "--set", "zmq.publish_while_paused=false"])
    sub = bridge.state_socket_lazy(b"g1/")
    pub = bridge.control_socket()
    elbow = 18  # g1_left_elbow_joint, from the discovery message
    # Subscription check: single steps until their rows arrive (a SUB that has just
    # connected misses what was published before its subscription reached the bridge).
    checks = 0
    while True:
        assert checks < 100, "the subscription never delivered"
        bridge.console("step 1")
        checks += 1
        if received_twist(sub):
            break
    while sub.poll(50):
        sub.recv_multipart()
    counts = {}
    step = 0  # steps whose rows arrived completely (a set ends with its twist row)
    probes = []  # (step after which it was sent, sign)
    effects = {}  # probe index -> step where the elbow acceleration took the new sign
    pending = None
    sign = 1.0
    elbow_topic = b"g1/joint/left_elbow_joint"
    bridge.console(f"run {STEPS}")
    started = time.monotonic()
    while step < STEPS and time.monotonic() - started < SECONDS + 30:
        if not sub.poll(100):
            continue
        topic, payload = sub.recv_multipart()
        counts[topic] = counts.get(topic, 0) + 1
        if topic == elbow_topic and pending is not None:
            acc = struct.unpack("<ifff", payload)[3]
            if acc * probes[pending][1] > 50.0:
                effects[pending] = step + 1  # this row belongs to the step now arriving
                pending = None
        if topic == b"g1/twist":
            step += 1
            if pending is None and step % PROBE_EVERY == 0 and step + 2 < STEPS:
                sign = -sign
                probes.append((step, sign))
                pending = len(probes) - 1
                pub.send_multipart([b"g1/control ", struct.pack("<iif", 1, elbow, sign * TORQUE)])
    stats = bridge.stats()
    # Steps done when each control batch reached the bridge: the probes are the last ones.
    arrivals = [int(w) for w in bridge.console("arrivals").split()[1:]][-len(probes):]
    bridge.close()
    steps = int(stats["steps"]) - checks  # without the subscription check's steps
    per_topic = [c / steps for c in counts.values()]
    gaps = sum(steps - c for c in counts.values())
    delays = [effects[i] - probes[i][0] for i in range(len(probes)) if i in effects]
    print(f"G1 legacy ZMQ, {RATE} Hz realtime, {SECONDS:.0f} s, draining pyzmq client")
    print(f"  physics steps {steps}, row sets published {int(stats['zmq_row_sets']) - checks}, topics {len(counts)}")
    print(f"  rows received per topic / physics steps: min {min(per_topic):.4f} max {max(per_topic):.4f} (target 1.0); gaps {gaps} (target 0)")
    # Client steps count from the run's start; the bridge's from its own start.
    offset = checks
    after_arrival = [effects[i] + offset - arrivals[i] for i in range(len(probes)) if i in effects]
    print(f"  control batch arriving at the bridge after step k-1: applied in step k for "
          f"{sum(1 for d in after_arrival if d == 1)}/{len(probes)} batches "
          f"(other: {sorted(d for d in after_arrival if d != 1)}, effect not seen: {len(probes) - len(after_arrival)})")
    in_next = sum(1 for d in delays if d == 1)
    print(f"  seen from the client, a batch sent on the rows of step j: applied in step j+1 for {in_next}/{len(probes)}"
          f" (later: {sorted(d for d in delays if d != 1)}; a late one means the client read step j late)")


if __name__ == "__main__":
    main()
