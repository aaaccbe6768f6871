"""What Nav2 relies on, checked with rclpy as Nav2 would use it: cmd_vel drives the default
robot, nav_msgs/Odometry and the tf odom -> base_link agree with the simulation's ground
truth, and the LaserScan from the robot's fan of rangefinders measures the known distances
to the walls of a test world. Runs in the suite's private network namespace."""
import math
import os
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from geometry_msgs.msg import Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import LaserScan  # noqa: E402

from conftest import REPO, Bridge, call, spin_until  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# The default robot in a room: a wall 1.95 m ahead (face at x = 1.95) and one on its right
# (face at y = -1.5). Its laser sits 0.2 m ahead of base_link.
ROOM = f"""
world: {{timestep: 0.002, floor: true, light: true}}
robots:
  - name: mobile
    urdf: {REPO / "urdf" / "mobile_manipulator.urdf"}
    floating_base: true
    pose: {{xyz: [0, 0, 0.0805]}}
    urdf_gains: {{position_kp: 400, position_kv: 20}}
    control:
      base: {{type: diff_drive, left_wheel: left_wheel_joint, right_wheel: right_wheel_joint,
              wheel_radius: 0.08, wheel_separation: 0.46, cmd_vel_timeout: 0.5}}
  - name: walls
    mjcf_string: |
      <mujoco><worldbody>
        <body name="front" pos="2 0 0.5"><geom type="box" size="0.05 3 0.5"/></body>
        <body name="right" pos="0 -1.55 0.5"><geom type="box" size="1.5 0.05 0.5"/></body>
      </worldbody></mujoco>
"""
LASER_X = 0.2


@pytest.fixture
def room(tmp_path):
    path = tmp_path / "room.yaml"
    path.write_text(ROOM)
    bridge = Bridge(path)
    yield bridge
    bridge.close()


def drive(ros, bridge, twist, seconds):
    """Publishes `twist` on cmd_vel like a teleop node while stepping `seconds` of sim time."""
    twists = ros.create_publisher(Twist, "mobile/cmd_vel", 10)
    spin_until(ros, lambda: twists.get_subscription_count() > 0, what="the cmd_vel subscription")
    deadline = time.monotonic() + 20
    while ground_truth(ros).twist.linear.x < 0.1:  # its reader may match a little later
        assert time.monotonic() < deadline, "no cmd_vel reached the bridge"
        twists.publish(twist)
        bridge.console("step 25")
    for _ in range(int(seconds / 0.2)):
        twists.publish(twist)
        bridge.console("step 100")


def latest(ros, kind, topic, qos=10, count=2):
    messages = []
    subscription = ros.create_subscription(kind, topic, messages.append, qos)
    spin_until(ros, lambda: len(messages) >= count, what=topic)
    ros.destroy_subscription(subscription)
    return messages[-1]


def current(ros, bridge, kind, topic):
    """The message of `topic` stamped with the bridge's sim time now (paused): messages of the
    last steps' samples may still be on their way when a step returns."""
    now = round(bridge.stats()["time"] * 1e9)
    messages = []
    subscription = ros.create_subscription(kind, topic, messages.append, 10)
    stamp = lambda m: m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec  # noqa: E731
    spin_until(ros, lambda: any(stamp(m) == now for m in messages), what=f"{topic} at {now} ns")
    ros.destroy_subscription(subscription)
    return next(m for m in messages if stamp(m) == now)


def ground_truth(ros):
    from simulation_interfaces.srv import GetEntityState

    response = call(ros, GetEntityState, "/mujoco_bridge/get_entity_state", GetEntityState.Request(entity="mobile"))
    return response.state


def yaw(q):
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


def test_laser_scan_measures_the_walls(ros, room):
    room.console("step 100")
    scan = current(ros, room, LaserScan, "mobile/scan")  # stamped with the sim time
    base = ground_truth(ros).pose.position
    assert scan.header.frame_id == "mobile/laser_link"
    assert scan.angle_min == pytest.approx(-math.pi / 2, abs=1e-6)
    assert scan.angle_max == pytest.approx(math.pi / 2, abs=1e-6)
    assert scan.angle_increment == pytest.approx(math.pi / 8, abs=1e-6)
    assert len(scan.ranges) == 9 and scan.range_max == pytest.approx(8.0)
    ahead = 1.95 - (base.x + LASER_X)
    assert scan.ranges[4] == pytest.approx(ahead, abs=2e-3), "angle 0: the front wall"
    assert scan.ranges[6] == pytest.approx(ahead / math.cos(math.pi / 4), abs=3e-3), "+45 degrees: the front wall, slanted"
    assert scan.ranges[0] == pytest.approx(1.5 + base.y, abs=2e-3), "-90 degrees: the right wall"
    assert math.isinf(scan.ranges[8]), "+90 degrees: nothing within 8 m"


def test_cmd_vel_drives_and_odometry_and_tf_agree_with_the_simulation(ros, room):
    from tf2_msgs.msg import TFMessage

    fixed = {}
    ros.create_subscription(TFMessage, "/tf_static", lambda m: fixed.update({(t.header.frame_id, t.child_frame_id): t for t in m.transforms}), LATCHED)
    spin_until(ros, lambda: ("world", "mobile/odom") in fixed, what="world -> odom")
    origin = fixed[("world", "mobile/odom")].transform
    assert (origin.translation.x, origin.translation.y, origin.translation.z) == (0.0, 0.0, 0.0), "where it starts"

    twist = Twist()
    twist.linear.x, twist.angular.z = 0.3, 0.4
    drive(ros, room, twist, 2.0)
    truth = ground_truth(ros)
    assert truth.pose.position.x > 0.3, "it drove forward"

    odom = current(ros, room, Odometry, "mobile/odom")
    assert odom.header.frame_id == "mobile/odom" and odom.child_frame_id == "mobile/base_link"
    p, t = odom.pose.pose.position, truth.pose.position
    assert (p.x, p.y, p.z) == pytest.approx((t.x, t.y, t.z), abs=1e-9), "ground truth, the odom frame at the start"
    assert yaw(odom.pose.pose.orientation) == pytest.approx(yaw(truth.pose.orientation), abs=1e-9)
    assert yaw(odom.pose.pose.orientation) > 0.3, "it turned left"
    # The twist is base_link's, in its frame: forward speed and yaw rate as commanded, and
    # the sideways slip of a point 0.1 m behind the wheel axle as it turns.
    w = odom.twist.twist.angular.z
    assert w == pytest.approx(0.4, abs=0.05)
    assert odom.twist.twist.linear.x == pytest.approx(0.3, abs=0.03)
    assert odom.twist.twist.linear.y == pytest.approx(-0.1 * w, abs=0.005)
    assert odom.header.stamp.sec + odom.header.stamp.nanosec * 1e-9 == pytest.approx(room.stats()["time"], abs=1e-9)

    frames = {}
    subscription = ros.create_subscription(TFMessage, "/tf", lambda m: frames.update({(f.header.frame_id, f.child_frame_id): f for f in m.transforms}), 10)
    spin_until(ros, lambda: ("mobile/odom", "mobile/base_link") in frames, what="odom -> base_link")
    ros.destroy_subscription(subscription)
    moved = frames[("mobile/odom", "mobile/base_link")].transform
    assert (moved.translation.x, moved.translation.y) == pytest.approx((p.x, p.y), abs=1e-9)
    assert ("world", "mobile/base_link") not in frames, "base_link has one parent: odom"


def test_wheel_odometry_follows_the_wheels(ros, tmp_path):
    path = tmp_path / "room.yaml"
    path.write_text(ROOM)
    bridge = Bridge(path, ["--set", "robots.0.ros.odometry.source=wheels"])
    try:
        twist = Twist()
        twist.linear.x, twist.angular.z = 0.3, 0.4
        drive(ros, bridge, twist, 2.0)
        truth = ground_truth(ros)
        odom = current(ros, bridge, Odometry, "mobile/odom")
        p, t = odom.pose.pose.position, truth.pose.position
        # Dead reckoning drifts (the wheels sink a little into the floor, so they roll on a
        # smaller radius than the nominal one): within 10 % of the distance driven.
        driven = math.hypot(t.x, t.y)
        assert driven > 0.4
        assert 0 < math.hypot(p.x - t.x, p.y - t.y) < 0.1 * driven
        assert yaw(odom.pose.pose.orientation) == pytest.approx(yaw(truth.pose.orientation), abs=0.1)
        w = odom.twist.twist.angular.z
        assert w == pytest.approx(0.4, abs=0.05)
        assert odom.twist.twist.linear.x == pytest.approx(0.3, abs=0.03)
        assert odom.twist.twist.linear.y == pytest.approx(-0.1 * w, abs=1e-9), "base_link trails the axle by 0.1 m"
    finally:
        bridge.close()


def test_contact_markers_carry_the_robots_weight(ros, tmp_path):
    """With sim.export_contacts, ~/contacts shows each contact and its normal force: at
    rest on the floor those forces add up to the robot's weight."""
    import re

    from visualization_msgs.msg import Marker, MarkerArray

    bridge = Bridge("default.yaml", ["--set", "sim.export_contacts=32", "--set", "ros.rates.contacts=50"])
    try:
        bridge.console("step 1000")  # settled on its wheels and caster
        arrays = []
        subscription = ros.create_subscription(MarkerArray, "/mujoco_bridge/contacts", arrays.append, 10)
        spin_until(ros, lambda: len(arrays) >= 2, what="contact markers")
        ros.destroy_subscription(subscription)
        markers = arrays[-1].markers
        assert markers[0].action == Marker.DELETEALL
        arrows = [m for m in markers[1:] if m.type == Marker.ARROW]
        spheres = [m for m in markers[1:] if m.type == Marker.SPHERE]
        assert len(arrows) == len(spheres) >= 3, "two wheels and the caster at least"
        assert all(abs(s.pose.position.z) < 0.01 for s in spheres), "on the floor"
        force = sum(math.dist((a.points[0].x, a.points[0].y, a.points[0].z), (a.points[1].x, a.points[1].y, a.points[1].z))
                    for a in arrows) / 0.002
        urdf = (REPO / "urdf" / "mobile_manipulator.urdf").read_text()
        mass = sum(float(m) for m in re.findall(r'<mass value="([0-9.eE+-]+)"', urdf))
        assert force == pytest.approx(mass * 9.81, rel=0.02), (force, mass)
    finally:
        bridge.close()
