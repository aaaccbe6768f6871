"""A world that changes while it runs, seen by a legacy ZMQ client and the --console: a Panda
spawned from the console gets its discovery JSON and its rows on the running server; the
default robot's rows go on through the change with the same values; a delete stops the
Panda's rows; a spawn that fails names the file and changes nothing."""
import json
import os
import pathlib
import time

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


def test_console_spawn_and_delete_with_the_legacy_protocol():
    bridge = Bridge("default.yaml")
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
