"""The legacy URLab ZMQ protocol, checked by a client that behaves like the existing Python
policies and dashboards: exact row layouts and lengths, ordering, prefix, joint and
actuator discovery, control batches and single-actuator messages moving the real Unitree
G1, set_gains semantics, reset clearing sticky values, the twist and actions rows, and
malformed input that is dropped while the server keeps going."""
import json
import math
import os
import pathlib
import random
import struct

import zmq
from conftest import CAMERA_WORLD, REPO, Bridge, bridge_of, free_ports, joint_row, row_sets

REPO_MODELS = pathlib.Path(os.environ.get("MUJOCO_BRIDGE_MODELS", REPO / ".deps" / "models"))

G1_JOINTS = [
    "left_hip_pitch_joint", "left_hip_roll_joint", "left_hip_yaw_joint", "left_knee_joint",
    "left_ankle_pitch_joint", "left_ankle_roll_joint", "right_hip_pitch_joint",
    "right_hip_roll_joint", "right_hip_yaw_joint", "right_knee_joint", "right_ankle_pitch_joint",
    "right_ankle_roll_joint", "waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint",
    "left_shoulder_pitch_joint", "left_shoulder_roll_joint", "left_shoulder_yaw_joint",
    "left_elbow_joint", "left_wrist_roll_joint", "left_wrist_pitch_joint", "left_wrist_yaw_joint",
    "right_shoulder_pitch_joint", "right_shoulder_roll_joint", "right_shoulder_yaw_joint",
    "right_elbow_joint", "right_wrist_roll_joint", "right_wrist_pitch_joint",
    "right_wrist_yaw_joint",
]
G1_SENSORS = {"imu_ang_vel": 3, "imu_lin_vel": 3, "imu_lin_acc": 3, "imu_upvector": 3, "root_angmom": 3}


def discovery(bridge):
    info = bridge.info_socket()
    assert info.poll(10000), "no discovery message"
    return json.loads(info.recv())


def test_state_rows_have_the_exact_layouts_and_order(g1):
    sub = g1.state_socket(b"g1/")
    g1.console("realtime")
    sets = row_sets(sub, 50)
    expected = (
        [b"g1/base_state/floating_base_joint"]
        + [f"g1/joint/{j}".encode() for j in G1_JOINTS]
        + [f"g1/sensor/{s}".encode() for s in G1_SENSORS]
        + [b"g1/twist"]
    )
    joint_ids = {}
    for row_set in sets:
        assert [t for t, _ in row_set] == expected, "model order, then twist; no actions while zero"
        for topic, payload in row_set:
            kind, name = topic.decode().split("/", 1)[1].split("/")[0], topic.decode().split("/")[-1]
            if kind == "joint":
                jid, pos, vel, acc = joint_row(payload)
                assert joint_ids.setdefault(name, jid) == jid, "joint ids are stable"
                assert all(math.isfinite(v) for v in (pos, vel, acc))
            elif kind == "base_state":
                assert len(payload) == 52
                values = struct.unpack("<13f", payload)
                quat_xyzw = values[3:7]
                assert abs(math.sqrt(sum(q * q for q in quat_xyzw)) - 1) < 1e-5
            elif kind == "sensor":
                sid, dim = struct.unpack("<ii", payload[:8])
                assert dim == G1_SENSORS[name] and len(payload) == 8 + 4 * dim
                assert sid >= 0
            elif kind == "twist":
                assert len(payload) == 12
                assert struct.unpack("<3f", payload) == (0.0, 0.0, 0.0), "zeros when nobody drives"
    # Joint ids are MuJoCo's global indices: the free joint is 0, then the hinges in order.
    assert [joint_ids[j] for j in G1_JOINTS] == list(range(1, 30))


def test_the_floating_base_row_is_position_quaternion_xyzw_and_velocities(g1):
    g1.console("keyframe home")  # pelvis at (0, 0, 0.783675), identity orientation
    rows = g1.settled_rows(b"g1/")
    x, y, z, qx, qy, qz, qw = struct.unpack("<13f", rows[b"g1/base_state/floating_base_joint"])[:7]
    assert (round(x, 5), round(y, 5), round(z, 5)) == (0.0, 0.0, round(0.783675, 5))
    assert (qx, qy, qz, qw) == (0.0, 0.0, 0.0, 1.0), "x, y, z, w order"


def test_discovery_json_lists_every_actuator(g1):
    message = discovery(g1)
    assert list(message) == ["type", "robot", "names", "ids", "mins", "maxs", "camera_list"]
    assert message["type"] == "actuator_list" and message["robot"] == "g1"
    assert message["names"] == [f"g1_{j}" for j in G1_JOINTS], "full names, in model order"
    assert message["ids"] == list(range(29))
    knee = message["names"].index("g1_left_knee_joint")
    assert (message["mins"][knee], message["maxs"][knee]) == (-139.0, 139.0), "ctrlrange when limited"
    # G1's model has one camera ("tracking"): its stream, from the state port + 3 on.
    cameras = message["camera_list"]
    assert [c["name"] for c in cameras] == ["tracking"]
    host, port = cameras[0]["endpoint"].rsplit(":", 1)
    assert host == "tcp://127.0.0.1" and g1.state_port + 3 <= int(port) <= g1.state_port + 12
    # A legacy client strips the prefix to find its actuator ids.
    by_short = {n[len("g1_"):]: i for n, i in zip(message["names"], message["ids"])}
    assert by_short["left_elbow_joint"] == 18


def test_prefix_and_joint_discovery_from_the_rows(g1):
    sub = g1.state_socket(b"")
    (row_set,) = row_sets(sub, 1)
    assert all(topic.startswith(b"g1/") for topic, _ in row_set)
    names = [t.decode().split("/")[-1] for t, _ in row_set if b"/joint/" in t]
    assert names == G1_JOINTS, "names without the articulation prefix"


def send_and_step(bridge, pub, frames, steps):
    """Sends one control-socket message, waits until the bridge has handled it, then steps."""
    handled = bridge.stats()["zmq_received"]
    pub.send_multipart(frames)
    bridge.wait_for("zmq_received", handled + 1)
    bridge.console(f"step {steps}")


def elbow_position(bridge):
    return joint_row(bridge.settled_rows(b"g1/")[b"g1/joint/left_elbow_joint"])[1]


def test_batch_and_single_actuator_control_move_the_robot(g1):
    ids = dict(zip(discovery(g1)["names"], discovery(g1)["ids"]))
    pub = g1.control_socket()
    g1.console("keyframe home")  # elbows at 1.28, PD targets held there
    assert abs(elbow_position(g1) - 1.28) < 1e-4
    # One batch: both elbows to 0.3 (the policy style: int32 N, then (id, value) pairs).
    batch = struct.pack("<i", 2) + struct.pack("<if", ids["g1_left_elbow_joint"], 0.3)
    batch += struct.pack("<if", ids["g1_right_elbow_joint"], 0.3)
    received = g1.stats()["zmq_commands"]
    pub.send_multipart([b"g1/control ", batch])
    g1.wait_for("zmq_commands", received + 2)
    g1.console("step 500")
    assert abs(elbow_position(g1) - 0.3) < 0.1
    # One actuator per message (12 bytes).
    pub.send_multipart([b"g1/control ", struct.pack("<iif", 1, ids["g1_left_elbow_joint"], 1.5)])
    g1.wait_for("zmq_commands", received + 3)
    g1.console("step 500")
    assert abs(elbow_position(g1) - 1.5) < 0.1
    # Values are sticky: nothing more is sent, the target holds.
    g1.console("step 250")
    assert abs(elbow_position(g1) - 1.5) < 0.1


def test_set_gains_semantics(g1):
    ids = dict(zip(discovery(g1)["names"], discovery(g1)["ids"]))
    pub = g1.control_socket()
    g1.console("keyframe home")
    # A torque limit of 0 on the left elbow (short name): its PD output is clamped to 0.
    gains = json.dumps({"left_elbow_joint": {"torque_limit": 0.0}}).encode()
    handled = g1.stats()["zmq_received"]
    for _ in range(3):  # legacy clients repeat set_gains
        pub.send_multipart([b"g1/set_gains ", gains])
    target = struct.pack("<iif", 1, ids["g1_left_elbow_joint"], 0.0)
    pub.send_multipart([b"g1/control ", target])
    g1.wait_for("zmq_received", handled + 4)
    g1.console("step 420")
    weak = elbow_position(g1)
    assert weak > 0.8, f"no torque: the elbow does not go to 0 ({weak})"
    # New gains naming another actuator (full name): the elbow is reset to the defaults.
    gains = json.dumps({"g1_right_elbow_joint": {"kp": 80.0}}).encode()
    handled = g1.stats()["zmq_received"]
    for _ in range(3):
        pub.send_multipart([b"g1/set_gains ", gains])
    g1.wait_for("zmq_received", handled + 3)
    g1.console("step 520")
    assert abs(elbow_position(g1)) < 0.15, "unnamed actuators get kp 100, kv 5, torque 200"


def test_reset_clears_sticky_values(g1):
    ids = dict(zip(discovery(g1)["names"], discovery(g1)["ids"]))
    pub = g1.control_socket()
    send_and_step(g1, pub, [b"g1/control ", struct.pack("<iif", 1, ids["g1_left_elbow_joint"], 1.0)], 500)
    assert abs(elbow_position(g1) - 1.0) < 0.1
    g1.console("reset")  # sticky values zeroed: the PD target is now 0
    g1.console("step 500")
    assert abs(elbow_position(g1)) < 0.15


def test_twist_and_actions_rows(g1):
    sub = g1.state_socket(b"g1/")
    g1.console("twist g1 0.4 -0.2 0.8")  # what a ROS teleop publishes on cmd_vel
    g1.console("step 1")  # commands, the twist among them, are taken at the next step
    g1.console("actions g1 5")
    rows = g1.settled_rows(b"g1/")
    assert struct.unpack("<3f", rows[b"g1/twist"]) == (
        struct.unpack("<f", struct.pack("<f", 0.4))[0],
        struct.unpack("<f", struct.pack("<f", -0.2))[0],
        struct.unpack("<f", struct.pack("<f", 0.8))[0],
    )
    assert struct.unpack("<i", rows[b"g1/actions"]) == (5,)
    # The actions row comes last, after the twist row that closes a row set.
    while sub.poll(0):
        sub.recv_multipart()
    topics = [sub.recv_multipart()[0] for _ in range(80)]
    after_twist = [topics[i + 1] for i in range(len(topics) - 1) if topics[i] == b"g1/twist"]
    assert after_twist and all(t == b"g1/actions" for t in after_twist)
    g1.console("actions g1 0")
    rows = g1.settled_rows(b"g1/")
    assert b"g1/actions" not in rows, "sent only when non-zero"


def test_malformed_input_is_dropped_counted_and_the_server_keeps_going(g1):
    ids = dict(zip(discovery(g1)["names"], discovery(g1)["ids"]))
    pub = g1.control_socket()
    before = g1.stats()
    bad = [
        [b"g1/control "],                                              # a single frame
        [b"g1/control ", b"\x01\x00"],                                 # shorter than N
        [b"g1/control ", struct.pack("<i", 2) + struct.pack("<if", 0, 0.1)],  # N = 2, one pair
        [b"g1/control ", struct.pack("<i", -1)],                       # negative count
        [b"g1/control ", struct.pack("<iif", 1, 999, 0.5)],            # unknown actuator id: skipped
        [b"g1/control ", struct.pack("<iif", 1, 0, float("nan"))],     # NaN
        [b"g1/control ", struct.pack("<iif", 1, 0, float("inf"))],     # infinity
        [b"g1/set_gains ", b"{not json"],                               # bad JSON
        [b"g1/set_gains ", b"[1, 2, 3]"],                               # not an object
        [b"g1/control ", b"a", b"b"],                                   # three frames
        [b"g1/control extra", b"\x00\x00\x00\x00"],                     # passes the filter, wrong topic
        [b"g1/set_gains ", json.dumps({"no_such_joint": {"kp": 1.0}}).encode()],  # no such actuator
    ]
    rng = random.Random(7)
    for _ in range(200):
        bad.append([b"g1/control ", bytes(rng.randrange(256) for _ in range(rng.randrange(40)))])
    for message in bad:
        pub.send_multipart(message)
    expected = before["zmq_received"] + len(bad)
    g1.wait_for("zmq_received", expected)
    after = g1.stats()
    # 8 structurally bad messages dropped whole; the unknown id and the NaN / infinite
    # values are skipped pairs; random bytes land in either.
    assert after["zmq_dropped"] - before["zmq_dropped"] >= 8, after
    assert after["zmq_skipped"] - before["zmq_skipped"] >= 3, after
    assert after["zmq_gains_skipped"] - before["zmq_gains_skipped"] == 1, after
    assert after["zmq_steps_lost"] == 0, after
    # Control for a robot that takes its commands from another source is ignored and counted,
    # and the log says why.
    g1.console("source g1 ros")
    pub.send_multipart([b"g1/control ", struct.pack("<iif", 1, ids["g1_left_elbow_joint"], 1.0)])
    g1.wait_for("zmq_received", after["zmq_received"] + 1)
    g1.console("step 1")
    assert g1.stats()["ignored"] == after["ignored"] + 1
    g1.console("source g1 zmq")
    # Still serving: rows flow, and the valid pair of a batch with a bad one still works.
    mixed = struct.pack("<i", 2) + struct.pack("<if", 999, 0.5)
    mixed += struct.pack("<if", ids["g1_left_elbow_joint"], 1.0)
    send_and_step(g1, pub, [b"g1/control ", mixed], 500)
    assert abs(elbow_position(g1) - 1.0) < 0.1
    log = g1.close()
    assert "dropped a message" in log, "dropped messages are logged"
    assert log.count("dropped a message") < 50, "at a limited rate"
    assert "robot 'g1' takes its commands from ros" in log, "an ignored robot's control is explained"
    assert "set_gains names no actuator 'no_such_joint'" in log


def test_robots_with_their_own_endpoints_get_their_own_server(tmp_path):
    go1 = REPO_MODELS / "menagerie" / "unitree_go1" / "go1.xml"
    ports = free_ports(3)
    config = tmp_path / "two.yaml"
    config.write_text(
        "world: {floor: true}\n"
        "robots:\n"
        f"  - name: left\n    mjcf: {go1}\n    pose: {{xyz: [0, 1, 0]}}\n"
        f"  - name: right\n    mjcf: {go1}\n    pose: {{xyz: [0, -1, 0]}}\n"
        f"    zmq: {{state: tcp://127.0.0.1:{ports[0]}, control: tcp://127.0.0.1:{ports[1]}, info: tcp://127.0.0.1:{ports[2]}}}\n"
    )
    bridge = Bridge(config)
    try:
        shared = bridge.state_socket(b"")
        (row_set,) = row_sets(shared, 1)
        assert {t.split(b"/")[0] for t, _ in row_set} == {b"left"}
        own = bridge.ctx.socket(zmq.SUB)
        own.connect(f"tcp://127.0.0.1:{ports[0]}")
        own.setsockopt(zmq.SUBSCRIBE, b"")
        assert own.poll(10000)
        (row_set,) = row_sets(own, 1)
        assert {t.split(b"/")[0] for t, _ in row_set} == {b"right"}
    finally:
        bridge.close()


def test_camera_frames_stream_as_bgra_on_their_port(tmp_path):
    (camera_port,) = free_ports(1)
    bridge = bridge_of(tmp_path, CAMERA_WORLD, ["--set", f"zmq.camera_port={camera_port}"])
    try:
        message = discovery(bridge)
        assert message["camera_list"] == [
            {"name": "eye", "endpoint": f"tcp://127.0.0.1:{camera_port}"}
        ]
        sub = bridge.ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.connect(f"tcp://127.0.0.1:{camera_port}")
        sub.setsockopt(zmq.SUBSCRIBE, b"rig/camera/eye ")
        assert sub.poll(60000), "no camera frame"
        topic, frame = sub.recv_multipart()
        assert topic == b"rig/camera/eye ", "the topic ends in a space"
        assert len(frame) == 320 * 240 * 4
        centre = 4 * (120 * 320 + 160)
        b, g, r, a = frame[centre:centre + 4]
        print(f"legacy camera: centre pixel B, G, R, A {b, g, r, a}")
        assert a == 255 and r > 80 and r > 2 * g and r > 2 * b, (b, g, r, a)
        # Rows run top to bottom: the box fills the middle rows, not the top one.
        assert frame[4 * 160:4 * 160 + 4] != frame[centre:centre + 4]
        sub.close()
    finally:
        bridge.close()
