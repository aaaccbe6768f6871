"""A world that changes while it runs, seen by a legacy ZMQ client and the --console: a Panda
spawned from the console gets its discovery JSON and its rows on the running server; the
default robot's rows go on through the change with the same values; a delete stops the
Panda's rows; a spawn that fails names the file and changes nothing; the legacy camera
streams follow: a spawned camera gets its stream, the old ones keep their endpoints; a
--record recording runs on through the changes."""
import json
import math
import os
import pathlib
import time

import zmq

from conftest import REPO, Bridge, joint_row

MODELS = pathlib.Path(os.environ.get("MUJOCO_BRIDGE_MODELS", REPO / ".deps" / "models"))
PANDA = MODELS / "menagerie" / "franka_emika_panda" / "panda.xml"


def discoveries(bridge, robot, timeout=10):
    """The next discovery JSON of `robot` on a new info subscription."""
    info = bridge.info_socket()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if info.poll(200):
                message = json.loads(info.recv())
                if message["robot"] == robot:
                    return message
        raise AssertionError(f"no discovery message of {robot}")
    finally:
        info.close()


def test_console_spawn_and_delete_with_the_legacy_protocol(tmp_path):
    recording = tmp_path / "run.csv"
    bridge = Bridge("default.yaml", extra_args=["--record", str(recording)])
    try:
        bridge.console("step 100")
        rows_before = dict(bridge.settled_rows(b"mobile/"))
        reply = bridge.console(f"spawn {PANDA} panda 1.5 0 0 1.57", timeout=120)
        words = reply.split()
        assert words[1:4] == ["spawned", "panda", "generation"] and words[4] == "1", reply
        hold_ms = float(words[words.index("hold_ms") + 1])
        assert 0 < hold_ms < 50, reply
        # The default robot's rows: the same positions and velocities, paused across the
        # change (accelerations come from a new forward pass of the new model).
        rows_after = dict(bridge.settled_rows(b"mobile/"))
        assert rows_after.keys() == rows_before.keys()
        joints = [t for t in rows_before if b"/joint/" in t]
        assert joints
        for topic in joints:
            assert joint_row(rows_after[topic])[:3] == joint_row(rows_before[topic])[:3], topic
        # The Panda joins the same server: discovery with its actuators, and its rows.
        panda = discoveries(bridge, "panda")
        assert panda["type"] == "actuator_list" and "panda_actuator1" in panda["names"]
        topics = set(bridge.settled_rows(b"panda/"))
        assert b"panda/joint/joint1" in topics, sorted(topics)
        assert bridge.stats()["generation"] == 1
        # A spawn that fails names the file, and the world stays as it was.
        bridge.proc.stdin.write("spawn /nonexistent/arm.urdf arm\n")
        bridge.proc.stdin.flush()
        error = bridge.proc.stdout.readline()
        assert error.startswith("error") and "/nonexistent/arm.urdf" in error, error
        assert bridge.stats()["generation"] == 1
        reply = bridge.console("delete panda", timeout=120)
        assert reply.split()[1:5] == ["deleted", "panda", "generation", "2"], reply
        late = bridge.state_socket_lazy(b"panda/")
        bridge.console("run 200 fast")
        time.sleep(0.5)
        assert not late.poll(200), "the deleted robot's rows stopped"
        late.close()
        assert bridge.settled_rows(b"mobile/"), "the default robot's rows go on"
    finally:
        log = bridge.close()
    assert "panicked" not in log, log[-2000:]
    # The --record recording ran through both changes, in the columns it began with.
    header, *rows = recording.read_text().splitlines()
    columns = header.split(",")
    assert columns[0] == "time" and "mobile_arm_elbow" in columns
    assert not any(c.startswith("panda") for c in columns), "the Panda came after the start"
    assert len(rows) == 300, "100 steps before the spawn, 200 after the delete"
    values = [[float(v) for v in row.split(",")] for row in rows]
    assert all(len(v) == len(columns) and all(map(math.isfinite, v)) for v in values)
    assert all(b[0] > a[0] for a, b in zip(values, values[1:])), "time increases"


# A camera on a post, two metres from a red box: spawned into the default world.
CAMERA_POST = """<mujoco model="post"><worldbody>
  <body name="head" pos="0 0 1"><camera name="eye" fovy="45" xyaxes="0 -1 0 0 0 1"/></body>
  <body name="target" pos="2 0 1"><geom type="box" size="0.1 0.3 0.3" rgba="1 0 0 1"/></body>
</worldbody></mujoco>"""


def frame_of(bridge, endpoint, topic):
    """The next frame of a legacy camera stream, on a new subscription."""
    sub = bridge.ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.connect(endpoint)
    sub.setsockopt(zmq.SUBSCRIBE, topic)
    try:
        assert sub.poll(60000), f"no frame on {endpoint}"
        got, frame = sub.recv_multipart()
        assert got == topic
        return frame
    finally:
        sub.close()


def test_legacy_camera_streams_follow_the_world(tmp_path):
    model = tmp_path / "post.xml"
    model.write_text(CAMERA_POST)
    # Spawns read files only under the allowed folders: the test's own is one.
    bridge = Bridge("default.yaml", extra_args=["--set", f'requests.file_roots=["{tmp_path}"]'])
    try:
        before = {c["name"]: c["endpoint"] for c in discoveries(bridge, "mobile")["camera_list"]}
        assert list(before) == ["front"]
        assert frame_of(bridge, before["front"], b"mobile/camera/front ")
        bridge.console(f"spawn {model} post 5 0 0", timeout=120)
        # The new camera is listed (once its stream is up) beside the old one, which keeps
        # its endpoint, and both stream the new world.
        deadline = time.monotonic() + 30
        while True:
            after = {c["name"]: c["endpoint"] for c in discoveries(bridge, "mobile")["camera_list"]}
            if "eye" in after or time.monotonic() > deadline:
                break
        assert after["front"] == before["front"] and "eye" in after, after
        assert frame_of(bridge, after["front"], b"mobile/camera/front ")
        frame = frame_of(bridge, after["eye"], b"post/camera/eye ")
        assert len(frame) == 640 * 480 * 4
        centre = 4 * (240 * 640 + 320)
        b, g, r, a = frame[centre:centre + 4]
        assert a == 255 and r > 80 and r > 2 * g and r > 2 * b, (b, g, r, a)
        bridge.console("delete post", timeout=120)
        deadline = time.monotonic() + 30
        while "eye" in {c["name"] for c in discoveries(bridge, "mobile")["camera_list"]}:
            assert time.monotonic() < deadline, "the deleted robot's camera left the list"
    finally:
        log = bridge.close()
    assert "panicked" not in log, log[-2000:]
