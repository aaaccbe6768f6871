"""The ROS 2 node (r2r) seen by rclpy from the PyPI wheels, inside the private network
namespace the suite runs in (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST)."""
import os
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from rosgraph_msgs.msg import Clock  # noqa: E402

from conftest import Bridge  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)


def test_clock_is_published_from_the_start_also_while_paused_and_follows_sim_time():
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    bridge = Bridge("default.yaml")  # starts paused
    rclpy.init()
    try:
        node = rclpy.create_node("clock_probe")
        stamps = []
        node.create_subscription(Clock, "/clock", lambda m: stamps.append(m.clock.sec + m.clock.nanosec * 1e-9), 10)
        deadline = time.monotonic() + 20
        while len(stamps) < 5:
            assert time.monotonic() < deadline, "no /clock while paused"
            rclpy.spin_once(node, timeout_sec=0.1)
        assert set(stamps) == {0.0}, "paused at time 0: the clock is published, constant"
        bridge.console("run 500")  # 1 s of sim time in realtime
        deadline = time.monotonic() + 20
        while not stamps or stamps[-1] < 1.0:
            assert time.monotonic() < deadline, f"/clock stopped at {stamps[-1:]}"
            rclpy.spin_once(node, timeout_sec=0.1)
        assert all(b >= a for a, b in zip(stamps, stamps[1:])), "monotonic"
        assert stamps[-1] == pytest.approx(1.0, abs=1e-9), "matches the sim time of the last step"
        node.destroy_node()
    finally:
        rclpy.shutdown()
        bridge.close()
