"""The mission's bridge end to end: a teleop twist from ROS reaches a legacy locomotion policy
over the URLab ZMQ protocol, and the policy's commands move the robot, which ROS sees in
joint_states. Go1's config gives control to ZMQ (control.source: zmq)."""
import json
import os
import struct
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from geometry_msgs.msg import Twist  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from conftest import Bridge, spin_until  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

THIGHS = ["FR_thigh_joint", "FL_thigh_joint", "RR_thigh_joint", "RL_thigh_joint"]


def test_a_ros_twist_reaches_the_zmq_policy_whose_commands_move_the_robot(ros):
    bridge = Bridge("go1.yaml")  # paused
    try:
        bridge.console("keyframe stand")
        info = bridge.info_socket()
        assert info.poll(10000), "no discovery message"
        discovery = json.loads(info.recv())
        ids = dict(zip(discovery["names"], discovery["ids"]))
        policy = bridge.control_socket("go1")

        positions = {}

        def on_states(message):
            positions.update(zip(message.name, message.position))
            positions["time"] = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9

        ros.create_subscription(JointState, "joint_states", on_states, 10)
        teleop = ros.create_publisher(Twist, "cmd_vel", 10)
        spin_until(ros, lambda: teleop.get_subscription_count() > 0 and positions, what="cmd_vel and joint_states")
        start = [positions[j] for j in THIGHS]

        # Teleop: forward at 0.5 m/s, until the policy sees it in its twist row.
        twist = Twist()
        twist.linear.x = 0.5
        deadline = time.monotonic() + 20
        while True:
            assert time.monotonic() < deadline, "the twist never reached the ZMQ rows"
            teleop.publish(twist)
            bridge.console("step 1")
            vx, vy, wz = struct.unpack("<3f", bridge.settled_rows(b"go1/")[b"go1/twist"])
            if vx > 0.49:
                break
        assert (vy, wz) == (0.0, 0.0)

        # The policy: a forward command leans the thighs forward, 0.6 rad per m/s.
        target = 0.9 + 0.6 * vx
        batch = struct.pack("<i", len(THIGHS))
        for joint in THIGHS:
            batch += struct.pack("<if", ids[f"go1_{joint.replace('_joint', '')}"], target)
        handled = bridge.stats()["zmq_commands"]
        policy.send_multipart([b"go1/control ", batch])
        bridge.wait_for("zmq_commands", handled + 1)
        bridge.console("step 250")
        now = bridge.stats()["time"]
        spin_until(ros, lambda: positions["time"] >= now - 1e-9, what="joint_states of the current step")
        moved = [positions[j] for j in THIGHS]
        for joint, before, after in zip(THIGHS, start, moved):
            assert after - before > 0.15, f"{joint}: {before:.3f} -> {after:.3f}, target {target:.2f}"
    finally:
        bridge.close()
