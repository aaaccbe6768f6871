"""Ray-cast lidars seen by rclpy: a 3D lidar's points land on a wall at its known distance
(and none on the lidar's own robot, whose geoms surround it), a planar lidar's LaserScan
holds the wall's distance along each ray, and both are framed on their body through
/tf_static. Runs in the suite's private network namespace."""
import math
import os
import struct

import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import LaserScan, PointCloud2  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from conftest import LIDAR_WALL as WALL, LIDAR_WORLD as WORLD, bridge_of, latest_message  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)

@pytest.fixture
def rig(tmp_path):
    bridge = bridge_of(tmp_path, WORLD, ["--set", "zmq.enabled=false"])
    yield bridge
    bridge.close()


def test_points_land_on_the_wall_and_not_on_the_own_robot(rig, ros):
    cloud = latest_message(ros, PointCloud2, "rig/velo/points")
    assert cloud.header.frame_id == "rig/velo_frame"
    assert [f.name for f in cloud.fields] == ["x", "y", "z"] and cloud.point_step == 12
    points = [struct.unpack_from("<3f", bytes(cloud.data), 12 * i) for i in range(cloud.width)]
    xs = [p[0] for p in points]
    print(f"{len(points)} points of 720 rays; x from {min(xs):.4f} to {max(xs):.4f} m "
          f"(wall at {WALL} m)")
    assert len(points) == 8 * 90, "every ray reaches the wall through the mast's own sphere"
    for x, y, z in points:
        assert abs(x - WALL) < 1e-4, (x, y, z)
        assert abs(y) <= WALL * math.tan(math.radians(30)) + 1e-4
        assert abs(z) <= WALL / math.cos(math.radians(30)) * math.tan(math.radians(10)) + 1e-4


def test_a_planar_lidar_scans_the_wall(rig, ros):
    scan = latest_message(ros, LaserScan, "rig/laser/scan")
    assert scan.header.frame_id == "rig/laser_frame"
    assert len(scan.ranges) == 61
    assert abs(scan.angle_min + math.radians(30)) < 1e-6
    assert abs(scan.angle_max - math.radians(30)) < 1e-6
    for i, r in enumerate(scan.ranges):
        angle = scan.angle_min + i * scan.angle_increment
        assert abs(r - WALL / math.cos(angle)) < 1e-4, (i, r)
    print(f"scan: {scan.ranges[30]:.5f} m ahead, {scan.ranges[0]:.5f} m at -30 degrees")


def test_lidar_frames_sit_on_their_body(rig, ros):
    tf = latest_message(ros, TFMessage, "/tf_static", qos=LATCHED)
    frames = {t.child_frame_id: t for t in tf.transforms}
    assert frames["rig/velo_frame"].header.frame_id == "rig/mast"
    laser = frames["rig/laser_frame"]
    assert laser.header.frame_id == "rig/mast"
    assert abs(laser.transform.translation.z - 0.05) < 1e-12
