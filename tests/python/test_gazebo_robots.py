"""Robots described for Gazebo, run unchanged: the real upstream descriptions in
../shared/robots/gazebo, expanded by the real xacro through an ament prefix (as their launch
files expand them), loaded with --urdf. Their `<gazebo>` lidars publish on the topic their
users read (gz-sim's `<topic>`, Classic's `~/out` remapping) in the frame they name, at their
rate, and see a wall spawned where the test puts it. rclpy is the client, in the suite's
private network namespace."""
import math
import os
import pathlib
import subprocess

import pytest

rclpy = pytest.importorskip("rclpy")
from sensor_msgs.msg import LaserScan  # noqa: E402

from conftest import REPO, Bridge, latest_message  # noqa: E402
from test_ros_spawn import spawn, spawn_request  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

GAZEBO = REPO.parent / "shared" / "robots" / "gazebo"
PACKAGES = [
    "nav2_minimal_tb4/nav2_minimal_tb4_description",
    "linorobot2/linorobot2_description",
]
XACRO = REPO / ".deps" / "venv" / "bin" / "xacro"
# A slab whose near face is 2 m ahead of the robot's origin, on the floor, 2 m tall.
WALL = """<mujoco model="wall"><worldbody>
  <body name="slab" pos="2.1 0 1"><geom type="box" size="0.1 3 1"/></body>
</worldbody></mujoco>"""


def prefix(root):
    """An ament prefix whose share/ holds the vendored packages, as the README recipe makes."""
    marks = root / "share" / "ament_index" / "resource_index" / "packages"
    marks.mkdir(parents=True)
    for package in PACKAGES:
        source = GAZEBO / package
        (marks / source.name).touch()
        (root / "share" / source.name).symlink_to(source)
    return root


def expand(tmp_path, entry):
    root = prefix(tmp_path / "prefix")
    env = dict(os.environ, AMENT_PREFIX_PATH=str(root))
    urdf = tmp_path / (pathlib.Path(entry).stem + ".urdf")
    urdf.write_text(subprocess.run([str(XACRO), str(GAZEBO / entry)], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    return urdf, env


@pytest.fixture(params=[
    # entry, topic, frame, rays, range_max, the lidar link's yaw on the robot
    ("linorobot2/linorobot2_description/urdf/robots/2wd.urdf.xacro", "scan", "laser", 360, 12.0, 0.0),
    ("nav2_minimal_tb4/nav2_minimal_tb4_description/urdf/standard/turtlebot4.urdf.xacro",
     "scan", "rplidar_link", 360, 20.0, math.pi / 2),
], ids=["linorobot2 (Classic)", "turtlebot4 (gz-sim)"])
def robot(request, tmp_path, monkeypatch):
    if not GAZEBO.exists() or not XACRO.exists():
        pytest.skip("../shared/robots/gazebo or xacro is not there")
    entry, *expected = request.param
    urdf, env = expand(tmp_path, entry)
    # The bridge resolves package:// meshes through the same prefix.
    monkeypatch.setenv("AMENT_PREFIX_PATH", env["AMENT_PREFIX_PATH"])
    config = tmp_path / "robot.yaml"
    config.write_text(f"robots:\n  - name: {urdf.stem.replace('.', '_')}\n    urdf: {urdf}\n")
    bridge = Bridge(str(config), extra_args=["--set", f'requests.file_roots=["{tmp_path}"]'])
    yield bridge, expected
    bridge.close()


def test_a_gazebo_lidar_publishes_where_its_users_read_it_and_sees_the_wall(robot, ros):
    bridge, (topic, frame, rays, range_max, yaw) = robot
    from simulation_interfaces.msg import Result

    spawned = spawn(ros, spawn_request("wall", text=WALL))
    assert spawned.result.result == Result.RESULT_OK, spawned.result.error_message
    bridge.console("realtime")
    scan = latest_message(ros, LaserScan, topic)
    assert scan.header.frame_id == frame
    assert len(scan.ranges) == rays
    assert abs(scan.range_max - range_max) < 1e-6
    # The beam along the robot's +x: at -yaw in the lidar's frame (angles taken round a turn).
    def off_ahead(i):
        angle = scan.angle_min + i * scan.angle_increment + yaw
        return abs(math.remainder(angle, 2 * math.pi))
    ahead = min(range(rays), key=off_ahead)
    print(f"{topic}: {len(scan.ranges)} rays in {frame}, {scan.ranges[ahead]:.3f} m ahead")
    assert 1.7 < scan.ranges[ahead] < 2.1, "the wall 2 m ahead of the robot"
    assert math.isinf(scan.ranges[(ahead + rays // 2) % rays]), "nothing behind"
