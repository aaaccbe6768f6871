"""MCAP recording and replay, read by real readers: the `mcap` library with
`mcap-ros2-support` decodes every message from the schemas in the file, and `rosbags` (a
pure-Python rosbag2 reader with its own copy of the ROS 2 Jazzy message definitions) opens the
file as a ROS 2 bag. The counts are held against what the bridge's run report says it wrote."""
import collections
import os
import re
import signal
import struct
import subprocess
import time

from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.stream_reader import StreamReader
from mcap.records import Channel, Message, Schema
from mcap_ros2.decoder import DecoderFactory

from conftest import BINARY, REPO

GO1 = ["--config", "config/go1.yaml", "--set", "zmq.enabled=false", "--timestep", "0.001"]
STEPS = "/mujoco_bridge/steps"


def run_bridge(*args, timeout=180):
    """Runs a batch to its end; returns (stdout's run line, the log)."""
    done = subprocess.run(
        [BINARY, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout,
        env=dict(os.environ, RUST_LOG="info"),
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout, done.stderr


def report(stdout, log):
    """The run line's steps and the streams' line of the log, as numbers."""
    steps = int(re.search(r"steps (\d+)", stdout).group(1))
    line = re.search(
        r"streams: (\d+) messages logged, (\d+) failed; step records: (\d+) written, (\d+) dropped",
        log,
    )
    assert line, log[-3000:]
    logged, failed, written, dropped = map(int, line.groups())
    return steps, logged, failed, written, dropped


def decoded_messages(path):
    """(topic, schema name, decoded message) of every message, in the file's order."""
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        assert reader.get_header().profile == "ros2"
        return [(c.topic, s.name, m) for s, c, _, m in reader.iter_decoded_messages(log_time_order=False)]


def by_topic(path):
    """{topic: [(log time, schema name, decoded message)]} of a recording, in its order."""
    found = collections.defaultdict(list)
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for schema, channel, message, m in reader.iter_decoded_messages(log_time_order=False):
            found[channel.topic].append((message.log_time, schema.name, m))
    return found


def test_a_recording_holds_every_step_and_every_message_the_run_reports(tmp_path):
    path = tmp_path / "go1.mcap"
    stdout, log = run_bridge(*GO1, "--duration", "5", "--mcap", str(path), "--every-step")
    steps, logged, failed, written, dropped = report(stdout, log)
    messages = decoded_messages(path)
    records = [m for topic, _, m in messages if topic == STEPS]
    others = [(topic, name) for topic, name, _ in messages if topic != STEPS]
    print(f"Go1 at 1 kHz for 5 s: {steps} steps; {len(records)} step records decoded, "
          f"{written} written, {dropped} dropped; {len(others)} topic messages decoded, "
          f"{logged} logged, {failed} failed")
    assert steps == 5000 and written == steps and dropped == 0 and failed == 0
    assert len(records) == steps, "a step record is missing"
    assert [r.step for r in records] == list(range(1, steps + 1)), "steps out of order or missing"
    assert all(abs(r.time - r.step * 0.001) < 1e-9 for r in records)
    assert len(records[-1].qpos) == 19 and len(records[-1].ctrl) == 12
    assert len(others) == logged, "the file holds other than what the run report counts"
    counts = {}
    for topic, name in others:
        counts[(topic, name)] = counts.get((topic, name), 0) + 1
    print("topics:", sorted(counts.items()))
    joint_states = counts.get(("/joint_states", "sensor_msgs/msg/JointState"), 0)
    # joint_states at its 100 Hz of sim time, and the start's sample, however long a busy host
    # stretches the run's wall time (it was sampled on the wall clock before).
    wall = float(re.search(r"wall time ([0-9.]+) s", stdout).group(1))
    assert joint_states == 100 * 5 + 1, (joint_states, wall)
    for topic in ["/tf", "/tf_static", "/clock", "/odom", "/diagnostics"]:
        assert any(t == topic for t, _ in others), f"{topic} not recorded"


def test_rosbags_opens_the_recording_as_a_ros2_bag(tmp_path):
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    path = tmp_path / "run.mcap"
    run_bridge(*GO1, "--duration", "2", "--mcap", str(path))
    typestore = get_typestore(Stores.ROS2_JAZZY)
    with Reader(path) as bag:
        types = {c.topic: c.msgtype for c in bag.connections}
        assert types["/joint_states"] == "sensor_msgs/msg/JointState", types
        assert types["/tf"] == "tf2_msgs/msg/TFMessage", types
        wanted = [c for c in bag.connections if c.topic in ("/joint_states", "/tf")]
        names, frames, count = set(), set(), 0
        for connection, _, raw in bag.messages(connections=wanted):
            # Decoded with rosbags' own Jazzy definitions, not the file's schemas.
            message = typestore.deserialize_cdr(raw, connection.msgtype)
            count += 1
            if connection.topic == "/joint_states":
                names.update(message.name)
                assert len(message.position) == len(message.name)
            else:
                frames.update(t.child_frame_id for t in message.transforms)
    print(f"rosbags read {count} joint_states and tf messages; joints {sorted(names)[:3]}...; "
          f"frames {sorted(frames)[:3]}...")
    assert "FL_hip_joint" in names and len(names) == 12, names
    assert "trunk" in frames, frames


def test_a_killed_recorder_leaves_a_file_readable_up_to_its_last_flush(tmp_path):
    path = tmp_path / "killed.mcap"
    proc = subprocess.Popen(
        [BINARY, *GO1, "--mcap", str(path), "--every-step"], cwd=REPO,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=dict(os.environ, RUST_LOG="info"),
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline and (not path.exists() or path.stat().st_size < 200_000):
            time.sleep(0.2)
        time.sleep(3.0)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    # No summary, no footer: read record by record, as far as the file goes.
    schemas, channels, records = {}, {}, []
    decoder = DecoderFactory()
    cut = None
    with open(path, "rb") as f:
        try:
            for record in StreamReader(f).records:
                if isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message) and channels[record.channel_id].topic == STEPS:
                    channel = channels[record.channel_id]
                    decode = decoder.decoder_for(channel.message_encoding, schemas[channel.schema_id])
                    records.append(decode(record.data))
        except (McapError, EOFError, ValueError) as e:
            cut = e
    print(f"killed after {path.stat().st_size} bytes: {len(records)} step records readable "
          f"(the file ends with {type(cut).__name__ if cut else 'no cut'})")
    assert len(records) >= 1000, len(records)
    assert [r.step for r in records] == list(range(1, len(records) + 1))


def steps_of(path):
    return [(m.time, list(m.qpos), list(m.qvel)) for topic, _, m in decoded_messages(path) if topic == STEPS]


def test_a_replayed_recording_is_the_recorded_run_bit_for_bit(tmp_path):
    first, second = tmp_path / "first.mcap", tmp_path / "replayed.mcap"
    run_bridge(*GO1, "--mode", "fast", "--steps", "800", "--mcap", str(first), "--every-step")
    run_bridge(*GO1, "--mode", "fast", "--steps", "800", "--replay", str(first),
               "--mcap", str(second), "--every-step")
    recorded, replayed = steps_of(first), steps_of(second)
    same = sum(1 for a, b in zip(recorded, replayed) if a == b)
    moved = max(abs(a - b) for a, b in zip(recorded[0][1], recorded[-1][1]))
    print(f"{len(recorded)} steps recorded, {len(replayed)} replayed, {same} identical "
          f"to the bit (time, qpos, qvel); the robot moved {moved:.3g} in qpos")
    assert len(recorded) == len(replayed) == 800
    assert same == 800
    assert moved > 1e-3, "a replay of a robot standing still proves nothing"


def test_a_recording_of_another_model_is_refused_with_its_file_named(tmp_path):
    path = tmp_path / "go1.mcap"
    run_bridge(*GO1, "--mode", "fast", "--steps", "10", "--mcap", str(path), "--every-step")
    done = subprocess.run([BINARY, "--mode", "fast", "--steps", "10", "--replay", str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"{path}: step record 0 has qpos 19 values, this world's model 17" in done.stderr, \
        done.stderr[-2000:]


def test_the_console_starts_and_stops_a_recording(tmp_path):
    from conftest import Bridge

    path = tmp_path / "console.mcap"
    bridge = Bridge("default.yaml")
    try:
        assert bridge.console(f"mcap {path} steps") == f"ok recording to {path}"
        bridge.proc.stdin.write(f"mcap {tmp_path / 'second.mcap'}\n")
        bridge.proc.stdin.flush()
        refused = bridge.proc.stdout.readline().strip()
        assert refused == f"error: already recording to {path}", refused
        bridge.console("step 250")
        reply = bridge.console("mcap stop")
    finally:
        bridge.close()
    print(f"console: {reply}")
    assert reply == f"ok recorded {path}: step records 250 written, 0 dropped"
    records = [m for topic, _, m in decoded_messages(path) if topic == STEPS]
    assert len(records) == 250 and records[-1].step - records[0].step == 249


def test_a_recording_holds_the_lidars_scans(tmp_path):
    from conftest import LIDAR_WALL, LIDAR_WORLD

    config = tmp_path / "lidars.yaml"
    config.write_text(LIDAR_WORLD)
    path = tmp_path / "lidars.mcap"
    run_bridge("--config", str(config), "--duration", "1.5", "--mcap", str(path))
    messages = decoded_messages(path)
    clouds = [m for topic, name, m in messages
              if topic == "/rig/velo/points" and name == "sensor_msgs/msg/PointCloud2"]
    scans = [m for topic, name, m in messages
             if topic == "/rig/laser/scan" and name == "sensor_msgs/msg/LaserScan"]
    cloud, scan = clouds[-1], scans[-1]
    xs = [struct.unpack_from("<f", bytes(cloud.data), 12 * i)[0] for i in range(cloud.width)]
    print(f"{len(clouds)} point clouds ({len(xs)} points, x {min(xs):.4f}..{max(xs):.4f} m) and "
          f"{len(scans)} scans (nearest {min(scan.ranges):.4f} m) recorded; wall at {LIDAR_WALL} m")
    # 5 Hz for about 1.5 s.
    assert len(clouds) >= 4 and len(scans) >= 4
    assert cloud.header.frame_id == "rig/velo_frame" and len(xs) == 8 * 90
    assert all(abs(x - LIDAR_WALL) < 1e-4 for x in xs)
    assert len(scan.ranges) == 61 and abs(min(scan.ranges) - LIDAR_WALL) < 1e-3
