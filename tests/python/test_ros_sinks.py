"""One sample, every sink: the sampler fills each message once, encodes it once and hands the
same bytes to the ROS 2 node's publishers and to the MCAP recording. An rclpy subscriber
(raw: the serialized message as it came off the wire) and the official `mcap` reader must
find the same messages, byte for byte, on either backend."""
import os
import subprocess

import pytest

rclpy = pytest.importorskip("rclpy")
from mcap.reader import make_reader  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from conftest import BINARY, REPO  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

TOPICS = {"/joint_states": JointState, "/odom": Odometry}


def recorded(path):
    """The payloads of TOPICS' messages in the MCAP file at `path`, per topic."""
    found = {topic: [] for topic in TOPICS}
    with open(path, "rb") as f:
        for _, channel, message in make_reader(f).iter_messages(topics=list(TOPICS)):
            found[channel.topic].append(bytes(message.data))
    return found


def test_a_ros_subscriber_and_the_recording_get_the_same_bytes_of_each_sample(ros, tmp_path):
    path = tmp_path / "run.mcap"
    received = {topic: [] for topic in TOPICS}
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    for topic, kind in TOPICS.items():
        ros.create_subscription(kind, topic, received[topic].append, qos, raw=True)
    bridge = subprocess.Popen(
        [BINARY, "--duration", "8", "--mcap", str(path), "--set", "zmq.enabled=false"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    while bridge.poll() is None:
        rclpy.spin_once(ros, timeout_sec=0.05)
    for _ in range(20):
        rclpy.spin_once(ros, timeout_sec=0.05)
    log = bridge.stderr.read()
    assert bridge.returncode == 0, log[-3000:]
    in_file = recorded(path)
    for topic in TOPICS:
        ros_bytes = [bytes(b) for b in received[topic]]
        file_bytes = set(in_file[topic])
        missing = [b for b in ros_bytes if b not in file_bytes]
        print(f"{topic}: {len(ros_bytes)} received on ROS, {len(in_file[topic])} in the file, "
              f"{len(ros_bytes) - len(missing)} of the received byte for byte in the file")
        # 100 Hz (joint_states) and 50 Hz (odom) over most of the 8 s once discovery matched
        # (while the run has not begun or has ended, the same state goes out again: count
        # each state once).
        assert len(set(ros_bytes)) >= 200, f"{topic}: the subscriber got too little to compare"
        assert not missing, f"{topic}: {len(missing)} messages on ROS that the file does not hold"
        # The file began before discovery matched: it holds at least what ROS got.
        assert len(in_file[topic]) >= len(ros_bytes)
