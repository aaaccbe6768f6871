"""The streams benchmark (issue 28), on release builds, driving the binary as a user does.
Each part measures its cases side by side in one run, alternating where it repeats:

  (a) physics steps/s in fast mode with the MCAP recorder on (every topic at its rate and
      every step) against off, Go1 at 1 kHz; target >= 0.95; with the process's CPU per
      simulated second in each case;
  (b) bytes per minute of recording, real time: topics alone, and topics with every step;
  (c) CPU per 1000 messages delivered to one client on the same five 1 kHz topics: the
      Foxglove server (the no-ROS build: the sampler's, frames and server threads, a Node.js
      @foxglove/ws-protocol client) against the ROS 2 node (r2r; its threads, an rclpy
      subscriber);
  (d) real-time factor with a Foxglove client that stops reading, against no client;
      target 1.00 +- 0.01.

Run: bash scripts/bench-streams.sh (the ROS part in a private network namespace).
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
from foxglove_stall import stalled_client  # noqa: E402

PLAIN = os.environ["BENCH_PLAIN_BIN"]  # the no-ROS release build
ROS = os.environ["BENCH_ROS_BIN"]  # the r2r release build
GO1 = ["--config", "config/go1.yaml", "--set", "zmq.enabled=false", "--timestep", "0.001"]
TOPICS = ["/clock", "/joint_states", "/tf", "/odom", "/diagnostics"]
AT_1KHZ = [arg for t in ["clock", "joint_states", "tf", "odom", "diagnostics"]
           for arg in ("--set", f"ros.rates.{t}=1000")]


def cpu_of_run(binary, *args):
    """Runs to the end; returns (stdout, log, CPU seconds the process used)."""
    before = os.times()
    proc = subprocess.Popen([binary, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, RUST_LOG="info"))
    out, log = proc.communicate(timeout=600)
    assert proc.returncode == 0, log[-3000:]
    # Reaped: its CPU is now among the children's.
    after = os.times()
    cpu = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    return out, log, cpu


def number(pattern, text):
    return float(re.search(pattern, text).group(1))


def part_a(rounds=4, steps=300000):
    rates = {"off": [], "on": []}
    cpu = {"off": [], "on": []}
    startup = {}
    logged = []
    with tempfile.TemporaryDirectory() as folder:
        def args(case, name, count):
            extra = [] if case == "off" else ["--mcap", f"{folder}/{name}.mcap", "--every-step"]
            return [*GO1, "--mode", "fast", "--steps", str(count), *extra]
        # What starting and stopping cost (loading, the first world's plans, the camera's GL
        # context, closing the file), taken off each round's CPU.
        for case in ["off", "on"]:
            startup[case] = cpu_of_run(PLAIN, *args(case, "startup", 1))[2]
        for round_ in range(rounds):
            order = ["off", "on"] if round_ % 2 == 0 else ["on", "off"]
            for case in order:
                out, log, seconds = cpu_of_run(PLAIN, *args(case, f"a{round_}", steps))
                wall = number(r"wall time ([0-9.]+) s", out)
                rates[case].append(steps / wall)
                cpu[case].append((seconds - startup[case]) / (steps * 0.001))
                if case == "on":
                    logged.append(re.search(r"streams: (\d+) messages logged, \d+ failed; "
                                            r"step records: (\d+) written, (\d+) dropped", log).groups())
    ratios = sorted(on / off for on, off in zip(rates["on"], rates["off"]))
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    median = (ratios[(rounds - 1) // 2] + ratios[rounds // 2]) / 2
    print(f"(a) Go1 1 kHz, fast mode, {rounds} x {steps} steps each: recorder off "
          f"{mean(rates['off']):.0f} steps/s, on (every topic, the head camera included, and "
          f"every step) {mean(rates['on']):.0f} steps/s; ratio median {median:.3f} (rounds "
          f"{ratios[0]:.3f}..{ratios[-1]:.3f}; target >= 0.95) {'met' if median >= 0.95 else 'NOT met'}")
    topics, written, dropped = logged[-1]
    print(f"    process CPU per simulated second (start-up taken off): off {mean(cpu['off']) * 1e3:.1f} ms, "
          f"on {mean(cpu['on']) * 1e3:.1f} ms; the last round recorded {topics} topic messages and "
          f"{written} step records, {dropped} dropped")


def part_b(seconds=20):
    no_camera = ["--set", "robots.0.cameras=[]"]
    cases = [("topics", []), ("topics + every step", ["--every-step"]),
             ("without the camera: topics", no_camera),
             ("without the camera: topics + every step", [*no_camera, "--every-step"])]
    sizes = {}
    with tempfile.TemporaryDirectory() as folder:
        for case, extra in cases:
            path = f"{folder}/b.mcap"
            cpu_of_run(PLAIN, *GO1, "--duration", str(seconds), "--mcap", path, *extra)
            sizes[case] = os.path.getsize(path) * 60 / seconds
            os.remove(path)
    print(f"(b) Go1 1 kHz, real time, {seconds} s each, default topic rates, zstd chunks; with "
          f"the head camera (640x480 at 15 Hz, raw rgb8 and depth) and without: " +
          "; ".join(f"{case} {size / 1e6:.1f} MB per minute" for case, size in sizes.items()))


def threads_cpu(pid, prefixes, but=False):
    """CPU seconds of the threads whose names start with one of `prefixes` (`but`: of all the
    others)."""
    total = 0.0
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            if any(name.startswith(p) for p in prefixes) != but:
                total += int((task / "schedstat").read_text().split()[0]) * 1e-9
        except OSError:
            pass
    return total


# The bridge's own threads that are neither the ROS node's nor its middleware's.
NOT_ROS = ["physics", "mujoco_bridge", "foxglove", "cameras", "lidars", "console",
           "mcap-steps", "recorder", "legacy"]


def measured_window(proc, seconds, count):
    """CPU of the ROS node's and its middleware's threads over `seconds`, and the messages
    `count()` reports meanwhile."""
    cpu0, n0 = threads_cpu(proc.pid, NOT_ROS, but=True), count()
    time.sleep(seconds)
    cpu1, n1 = threads_cpu(proc.pid, NOT_ROS, but=True), count()
    return cpu1 - cpu0, n1 - n0


# The threads that fill, encode and serve what a Foxglove client gets, in the build without
# ROS (where the sampler sends to the streams alone).
FOXGLOVE = ["topics", "frames", "foxglove"]


def foxglove_round(seconds, port):
    proc = subprocess.Popen([PLAIN, *GO1, *AT_1KHZ, "--foxglove", f"127.0.0.1:{port}"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(4)
        client = subprocess.Popen(
            ["node", str(REPO / "tests/node/foxglove_client.cjs"), "count",
             f"ws://127.0.0.1:{port}", str(seconds + 4), *TOPICS],
            stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, NODE_PATH=str(REPO / ".deps/node/node_modules")))
        time.sleep(2)
        cpu0 = threads_cpu(proc.pid, FOXGLOVE)
        time.sleep(seconds)
        cpu1 = threads_cpu(proc.pid, FOXGLOVE)
        seen = json.loads(client.communicate(timeout=60)[0].strip().splitlines()[-1])["seen"]
        # The client counted over its whole life; scale to the measured window.
        delivered = sum(seen.values()) * seconds / (seconds + 4 - 0.5)
        return cpu1 - cpu0, delivered
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def ros_round(seconds):
    proc = subprocess.Popen([ROS, *GO1, *AT_1KHZ], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    probe = subprocess.Popen([str(REPO / ".deps/venv/bin/python"), str(REPO / "benches/ros_clients.py"),
                              "probe", *TOPICS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert probe.stdout.readline().strip() == "ready"

        def count():
            probe.stdin.write("count\n")
            probe.stdin.flush()
            return sum(json.loads(probe.stdout.readline()).values())
        deadline = time.time() + 30
        while count() < 500 and time.time() < deadline:
            time.sleep(0.2)
        return measured_window(proc, seconds, count)
    finally:
        probe.kill()
        proc.terminate()
        proc.wait(timeout=30)


def part_c(seconds=10):
    from socket import socket
    with socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fox_cpu, fox_messages = foxglove_round(seconds, port)
    ros_cpu, ros_messages = ros_round(seconds)
    print(f"(c) Go1 1 kHz real time, {', '.join(TOPICS)} at 1 kHz, one client, {seconds} s: "
          f"CPU per 1000 messages delivered: Foxglove server (no-ROS build: its topics, frames and foxglove threads; "
          f"a Node.js ws-protocol client reading) {fox_cpu / max(fox_messages, 1) * 1e6:.1f} ms "
          f"({fox_messages / seconds:.0f} msg/s, {fox_cpu / seconds * 100:.0f} % of a core); "
          f"ROS 2 node r2r (its threads and the middleware's; an rclpy subscriber reading) "
          f"{ros_cpu / max(ros_messages, 1) * 1e6:.1f} ms "
          f"({ros_messages / seconds:.0f} msg/s, {ros_cpu / seconds * 100:.0f} % of a core)")


def part_d(seconds=30):
    from socket import socket
    factors = {}
    stalls = 0
    for case in ["no client", "a stalled client"]:
        with socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen(
            [PLAIN, *GO1, "--duration", str(seconds), "--foxglove", f"127.0.0.1:{port}"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, RUST_LOG="info"))
        client = None
        if case != "no client":
            deadline = time.time() + 30
            while client is None and time.time() < deadline:
                try:
                    client = stalled_client(port)
                except OSError:
                    time.sleep(0.1)
        out, log = proc.communicate(timeout=seconds + 60)
        if client:
            client.close()
            stalls = len(re.findall(r"outbox for client \S+ full", log))
        factors[case] = number(r"real-time factor ([0-9.]+)", out)
    print(f"(d) Go1 1 kHz real time, {seconds} s, every topic and the camera on the Foxglove "
          f"server: real-time factor with no client {factors['no client']:.3f}, with a client that "
          f"subscribed to everything and stopped reading {factors['a stalled client']:.3f} "
          f"({stalls} outbox-full reports; target 1.00 +- 0.01) "
          f"{'met' if abs(factors['a stalled client'] - 1) <= 0.01 else 'NOT met'}")


if __name__ == "__main__":
    print("== streams benchmark (Foxglove server, MCAP recorder), Unitree Go1")
    for part in sys.argv[1:] or ["a", "b", "c", "d"]:
        {"a": part_a, "b": part_b, "c": part_c, "d": part_d}[part]()
