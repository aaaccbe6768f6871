"""Robots described for Gazebo, run unchanged: the real upstream descriptions in
../shared/robots/gazebo, expanded by the real xacro through an ament prefix (as their launch
files expand them), loaded with --urdf. Every `<gazebo>` sensor they declare (lidars, IMUs,
cameras) publishes on the topic its users read (gz-sim's `<topic>`, Classic's remappings) in the
frame it names, at its rate; lidars and cameras see a wall spawned where the test puts it; the
drive plugins and ROSbot's ros2_control skid steer move them with cmd_vel; `--summary` says what
each block gave. rclpy and the ros2 CLI are the clients, in the suite's private network
namespace."""
import itertools
import math
import os
import pathlib
import subprocess
import xml.etree.ElementTree as ET

import pytest

rclpy = pytest.importorskip("rclpy")
from sensor_msgs.msg import LaserScan  # noqa: E402

from conftest import (REPO, ROS2, Bridge, Launch, echo_once, install_prefix, latest_message,  # noqa: E402
                      needs_ros2_cli, spin_until)
from test_ros_spawn import spawn, spawn_request  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

GAZEBO = REPO.parent / "shared" / "robots" / "gazebo"
PACKAGES = [
    "nav2_minimal_tb4/nav2_minimal_tb4_description",
    "linorobot2/linorobot2_description",
    "rosbot/rosbot_description",
    "rosbot/ros_components_description",
    "rosbot/rosbot_controller",
]
XACRO = REPO / ".deps" / "venv" / "bin" / "xacro"
# A slab whose near face is 2 m ahead of the robot's origin, on the floor, 2 m tall.
WALL = """<mujoco model="wall"><worldbody>
  <body name="slab" pos="2.1 0 1"><geom type="box" size="0.1 3 1" rgba="0.8 0.2 0.2 1"/></body>
</worldbody></mujoco>"""


class Robot:
    """One upstream robot: how its launch expands it, its lidar facing the wall, and every
    sensor it declares as (topic, type, frame, Hz)."""

    def __init__(self, entry, args, lidar, sensors, fov, odometry=None, controllers=()):
        self.entry, self.args, self.sensors = entry, args, sensors
        # The odometry topic of its drive (a plugin, or ros2_control's diff drive), and the
        # controllers its bringup spawns
        self.odometry, self.controllers = odometry, controllers
        # camera_info topic: the camera's <horizontal_fov> in radians
        self.fov = fov
        # topic, frame, rays, range_max, the lidar frame's yaw on the robot
        self.scan, self.scan_frame, self.rays, self.range_max, self.yaw = lidar


ROBOTS = {
    "linorobot2 (Classic)": Robot(
        "linorobot2/linorobot2_description/urdf/robots/2wd.urdf.xacro", [],
        ("scan", "laser", 360, 12.0, 0.0),
        [("imu/data", "Imu", "imu_link", 20), ("scan", "LaserScan", "laser", 10),
         ("/camera/color/image_raw", "Image", "camera_depth_link", 30),
         ("/camera/depth/image_rect_raw", "Depth", "camera_depth_link", 30),
         ("/camera/color/camera_info", "CameraInfo", "camera_depth_link", 30)],
        {"/camera/color/camera_info": 1.50098}, odometry="odom/unfiltered"),
    "turtlebot4 (gz-sim)": Robot(
        "nav2_minimal_tb4/nav2_minimal_tb4_description/urdf/standard/turtlebot4.urdf.xacro", [],
        ("scan", "rplidar_link", 360, 20.0, math.pi / 2),
        [("imu", "Imu", "imu_link", 200), ("scan", "LaserScan", "rplidar_link", 10),
         ("rgbd_camera/image", "Image", "oakd_rgb_camera_optical_frame", 10),
         ("rgbd_camera/depth_image", "Depth", "oakd_rgb_camera_optical_frame", 10),
         ("rgbd_camera/camera_info", "CameraInfo", "oakd_rgb_camera_optical_frame", 10)],
        {"rgbd_camera/camera_info": 1.25}, odometry="/odom"),
    "rosbot (Ignition)": Robot(
        "rosbot/rosbot_description/urdf/rosbot.urdf.xacro",
        ["mecanum:=False", "use_sim:=True", "use_gpu:=True", "simulation_engine:=ignition-gazebo",
         "namespace:="],
        ("scan", "laser", 1600, 10.0, math.pi),
        [("imu/data_raw", "Imu", "imu_link", 25), ("scan", "LaserScan", "laser", 10),
         *[(f"range/{c}", "LaserScan", f"{c}_range", 5) for c in ("fl", "fr", "rl", "rr")],
         ("camera/color/image_raw", "Image", "camera_color_optical_frame", 30),
         ("camera/color/camera_info", "CameraInfo", "camera_color_optical_frame", 30),
         ("camera/depth/image_raw", "Depth", "camera_depth_optical_frame", 10),
         ("camera/depth/camera_info", "CameraInfo", "camera_depth_optical_frame", 10)],
        {"camera/color/camera_info": 1.0472, "camera/depth/camera_info": 1.0472},
        # Four wheels, two a side, on diff_drive_controller; the plugin remaps its
        # cmd_vel_unstamped to cmd_vel.
        odometry="rosbot_base_controller/odom", controllers=("rosbot_base_controller",)),
}


def prefix(root):
    """An ament prefix whose share/ holds the vendored packages, as the README recipe makes."""
    marks = root / "share" / "ament_index" / "resource_index" / "packages"
    marks.mkdir(parents=True)
    for package in PACKAGES:
        source = GAZEBO / package
        (marks / source.name).touch()
        (root / "share" / source.name).symlink_to(source)
    return root


def expand(tmp_path, robot):
    root = prefix(tmp_path / "prefix")
    env = dict(os.environ, AMENT_PREFIX_PATH=str(root))
    urdf = tmp_path / (pathlib.Path(robot.entry).stem + ".urdf")
    expanded = subprocess.run([str(XACRO), str(GAZEBO / robot.entry), *robot.args], env=env,
                              check=True, capture_output=True, text=True)
    urdf.write_text(expanded.stdout)
    return urdf, env


def run(name, tmp_path, monkeypatch):
    if not GAZEBO.exists() or not XACRO.exists():
        pytest.skip("../shared/robots/gazebo or xacro is not there")
    described = ROBOTS[name]
    urdf, env = expand(tmp_path, described)
    # The bridge resolves package:// meshes through the same prefix.
    monkeypatch.setenv("AMENT_PREFIX_PATH", env["AMENT_PREFIX_PATH"])
    config = tmp_path / "robot.yaml"
    # Gazebo's empty world: a ground plane and a sun.
    config.write_text(f"world: {{floor: true, light: true}}\nrobots:\n  - name: {urdf.stem.replace('.', '_')}\n    urdf: {urdf}\n")
    bridge = Bridge(str(config), extra_args=["--set", f'requests.file_roots=["{tmp_path}"]'])
    return bridge, described


@pytest.fixture(params=list(ROBOTS), ids=list(ROBOTS))
def robot(request, tmp_path, monkeypatch):
    bridge, described = run(request.param, tmp_path, monkeypatch)
    yield bridge, described
    bridge.close()


DRIVEN = [name for name, robot in ROBOTS.items() if robot.odometry]


@pytest.fixture(params=DRIVEN, ids=DRIVEN)
def driven(request, tmp_path, monkeypatch):
    bridge, described = run(request.param, tmp_path, monkeypatch)
    yield bridge, described
    bridge.close()


def check_scan(ros, robot, wall=(1.7, 2.1), still=True):
    """The robot's scan, its beam ahead on the wall `wall` metres away (2 m as spawned), and
    (the robot `still`, not rocking from a stop) nothing behind."""
    scan = latest_message(ros, LaserScan, robot.scan)
    assert scan.header.frame_id == robot.scan_frame
    assert len(scan.ranges) == robot.rays
    assert abs(scan.range_max - robot.range_max) < 1e-6
    # The beam along the robot's +x: at -yaw in the lidar's frame (angles taken round a turn).
    def off_ahead(i):
        angle = scan.angle_min + i * scan.angle_increment + robot.yaw
        return abs(math.remainder(angle, 2 * math.pi))
    ahead = min(range(robot.rays), key=off_ahead)
    print(f"{robot.scan}: {len(scan.ranges)} rays in {robot.scan_frame}, "
          f"{scan.ranges[ahead]:.3f} m ahead")
    assert wall[0] < scan.ranges[ahead] < wall[1], "the wall ahead of the robot"
    if still:
        assert math.isinf(scan.ranges[(ahead + robot.rays // 2) % robot.rays]), "nothing behind"
    return scan.ranges[ahead]


def period(stamps):
    """Seconds between samples: the mean gap, leaving out a frame a renderer skipped (a gap
    of two). Samples fall on steps, so a rate that does not divide the step rate alternates
    between the gaps either side of its period (200 Hz on 2 ms steps: 4 and 6 ms)."""
    gaps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
    single = [g for g in gaps if g < 1.6 * gaps[len(gaps) // 2]]
    return sum(single) / len(single)


def check_image(topic, message, depth):
    import numpy

    if depth:
        assert message.encoding == "32FC1"
        metres = numpy.frombuffer(bytes(message.data), dtype=numpy.float32)
        middle = metres.reshape(message.height, message.width)[message.height // 2, message.width // 2]
        print(f"{topic}: {message.width}x{message.height}, {middle:.3f} m in the middle")
        assert 1.5 < middle < 2.15, "the wall ahead of the camera"
    else:
        assert message.encoding == "rgb8"
        values = numpy.frombuffer(bytes(message.data), dtype=numpy.uint8)
        print(f"{topic}: {message.width}x{message.height}, {len(set(values[::7]))} shades")
        assert len(set(values[::7])) > 10, "the image is not blank"


def test_a_gazebo_robot_runs_unchanged_and_every_sensor_it_declares_publishes(robot, ros):
    """Each `<gazebo>` sensor on its topic with its type, frame and rate (in sim time); the
    lidar sees the wall the world puts ahead, the camera sees it too."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import CameraInfo, Image, Imu
    from simulation_interfaces.msg import Result

    bridge, described = robot
    spawned = spawn(ros, spawn_request("wall", text=WALL))
    assert spawned.result.result == Result.RESULT_OK, spawned.result.error_message
    # A quarter of real time: the renderer keeps up with every camera's rate on a CPU.
    bridge.console("realtime")
    bridge.console("speed 0.25")
    check_scan(ros, described)
    types = {"Imu": Imu, "LaserScan": LaserScan, "Image": Image, "Depth": Image,
             "CameraInfo": CameraInfo}
    received = {}
    for topic, kind, _, _ in described.sensors:
        received[topic] = []
        ros.create_subscription(types[kind], topic, received[topic].append,
                                QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    spin_until(ros, lambda: all(len(m) >= 8 for m in received.values()), timeout=120,
               what="8 messages on every sensor topic")
    for topic, kind, frame, hz in described.sensors:
        messages = received[topic]
        stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in messages]
        measured = 1.0 / period(stamps)
        print(f"{topic}: {kind} in {messages[-1].header.frame_id} at {measured:.1f} Hz")
        assert messages[-1].header.frame_id == frame, topic
        assert abs(measured - hz) < 0.1 * hz, f"{topic}: {measured:.1f} Hz, declared {hz}"
        if kind in ("Image", "Depth"):
            check_image(topic, messages[-1], kind == "Depth")
        if kind == "CameraInfo":
            info = messages[-1]
            fov = 2 * math.atan(info.width / 2 / info.k[0])
            print(f"{topic}: {info.width}x{info.height}, horizontal field of view {fov:.4f} rad")
            assert abs(fov - described.fov[topic]) < 1e-3, topic
    # The ros2 CLI reads the IMU as well.
    if ROS2.exists():
        imu, _, frame, _ = next(sensor for sensor in described.sensors if sensor[1] == "Imu")
        printed = echo_once(imu, "sensor_msgs/msg/Imu")
        assert f"frame_id: {frame}" in printed, printed


def test_a_gazebo_robot_drives_with_cmd_vel(driven, ros):
    """gz-sim's DiffDrive and Classic's diff_drive plugins, and ROSbot's ros2_control skid steer
    (spawned by the real spawner, as its bringup does): a twist on cmd_vel turns the wheels
    (velocity servos, not position ones), the drive's odometry topic says the robot went ahead,
    and its lidar says the wall came as much nearer."""
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from simulation_interfaces.msg import Result

    bridge, described = driven
    spawned = spawn(ros, spawn_request("wall", text=WALL))
    assert spawned.result.result == Result.RESULT_OK, spawned.result.error_message
    bridge.console("realtime")
    if described.controllers:
        from conftest import ros2
        ros2("run", "controller_manager", "spawner", *described.controllers,
             "--controller-manager-timeout", "30", timeout=120)
    before = check_scan(ros, described)
    start = latest_message(ros, Odometry, described.odometry)
    publisher = ros.create_publisher(Twist, "/cmd_vel", 10)
    twist = Twist()
    twist.linear.x = 0.3
    # The drive keeps the last twist (as Gazebo's do): one is enough, sent until it is heard.
    moved = []
    ros.create_subscription(Odometry, described.odometry, moved.append, 10)

    def ahead():
        publisher.publish(twist)
        return moved and moved[-1].pose.pose.position.x - start.pose.pose.position.x > 0.3
    spin_until(ros, ahead, timeout=60, what="the robot 0.3 m ahead on its odometry")
    last = moved[-1]
    print(f"{described.odometry}: x {last.pose.pose.position.x:.3f} m, "
          f"vx {last.twist.twist.linear.x:.3f} m/s in {last.header.frame_id}")
    assert last.header.frame_id == "odom"
    assert abs(last.twist.twist.linear.x - 0.3) < 0.05
    # Stopped, the odometry and the scan measure the same place.
    def stopped():
        publisher.publish(Twist())
        return abs(moved[-1].twist.twist.linear.x) < 1e-3
    spin_until(ros, stopped, timeout=30, what="the robot stopped")
    travelled = moved[-1].pose.pose.position.x - start.pose.pose.position.x
    nearer = before - check_scan(ros, described, wall=(0.5, 2.1), still=False)
    print(f"the wall came {nearer:.3f} m nearer; odometry says {travelled:.3f} m")
    # A skid steer's four wheels slide sideways as they turn and stop: since its controllers
    # file's 1 m/s^2 ramp is applied, ROSbot's wheel odometry reads up to ~13% short.
    slip = 0.07 if described.controllers else 0.05
    assert abs(nearer - travelled) < slip, "the wheels do not slip much"


def test_the_summary_says_what_each_gazebo_block_gave(tmp_path):
    """`--summary` of linorobot2's mecanum base: its sensors, surfaces and planar_move plugin
    taken (a planar base; its four wheels turn freely, as Gazebo leaves them)."""
    from conftest import BINARY

    if not GAZEBO.exists() or not XACRO.exists():
        pytest.skip("../shared/robots/gazebo or xacro is not there")
    mecanum = Robot("linorobot2/linorobot2_description/urdf/robots/mecanum.urdf.xacro", [],
                    (None,) * 5, [], {})
    urdf, env = expand(tmp_path, mecanum)
    run = subprocess.run([str(BINARY), "--urdf", str(urdf), "--summary"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    block = lines.index(next(line for line in lines if "<gazebo> blocks" in line))
    listed = [line.strip() for line in
              itertools.takewhile(lambda line: line.startswith("    "), lines[block + 1:])]
    print("\n".join(lines[block:block + 1] + listed))
    assert any(line.startswith("taken: sensor 'laser_lidar' (gpu_ray)") for line in listed)
    assert any(line.startswith("taken: sensor 'imu_sensor' (imu)") for line in listed)
    assert any(line.startswith("taken: sensor 'camera' (depth)") for line in listed)
    assert any(line.startswith("taken: surface of '") for line in listed)
    assert any(line.startswith("taken: plugin 'object_controller' (libgazebo_ros_planar_move.so")
               and "planar base, cmd_vel 'cmd_vel', odometry 'odom/unfiltered'" in line
               for line in listed), listed
    assert not any(line.startswith("left out") for line in listed), listed
    assert "  actuators (0)" in run.stdout, "the wheels turn freely"


POINT_SENSORS_URDF = """<?xml version="1.0"?>
<robot name="probe_bot">
  <link name="base_link">
    <inertial><mass value="2"/><inertia ixx="0.02" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.4 0.3 0.2"/></geometry></collision>
  </link>
  <link name="gps_link">
    <inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="gps_joint" type="fixed"><parent link="base_link"/><child link="gps_link"/>
    <origin xyz="0 0 0.15"/></joint>
  <gazebo reference="gps_link">
    <sensor name="navsat" type="navsat"><update_rate>5</update_rate><topic>navsat</topic>
      <navsat><position_sensing><horizontal><noise type="gaussian"><stddev>0.5</stddev></noise>
      </horizontal></position_sensing></navsat></sensor>
  </gazebo>
  <gazebo reference="base_link">
    <sensor name="baro" type="air_pressure"><update_rate>20</update_rate><topic>air_pressure</topic>
      <air_pressure><pressure><noise type="gaussian"><stddev>0.01</stddev></noise></pressure></air_pressure>
    </sensor>
    <sensor name="alt" type="altimeter"><update_rate>10</update_rate><topic>altimeter</topic></sensor>
    <sensor name="gps_classic" type="gps"><update_rate>2</update_rate>
      <plugin name="gps_plugin" filename="libgazebo_ros_gps_sensor.so">
        <ros><namespace>/rover</namespace><remapping>~/out:=fix</remapping></ros>
      </plugin></sensor>
  </gazebo>
</robot>
"""


def test_gazebo_gps_barometer_and_altimeter_publish_where_their_users_read(tmp_path, ros):
    """gz-sim's navsat, air_pressure and altimeter and Classic's gps plugin, in a robot's
    `<gazebo>` blocks: each on its topic, in its frame, at its rate, measuring the robot at
    rest on the floor of a world placed on the earth."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from ros_gz_interfaces.msg import Altimeter
    from sensor_msgs.msg import FluidPressure, NavSatFix

    urdf = tmp_path / "probe_bot.urdf"
    urdf.write_text(POINT_SENSORS_URDF)
    config = tmp_path / "robot.yaml"
    config.write_text("world: {floor: true, origin: {latitude: 47.4, longitude: 8.5, altitude: 400}}\n"
                      f"robots:\n  - name: probe_bot\n    urdf: {urdf}\n")
    bridge = Bridge(str(config))
    try:
        bridge.console("realtime")
        fix = latest_message(ros, NavSatFix, "/navsat")
        assert fix.header.frame_id == "gps_link"
        assert abs(fix.latitude - 47.4) < 1e-4 and abs(fix.longitude - 8.5) < 1e-4, fix
        assert fix.position_covariance[0] == pytest.approx(0.25), "the horizontal noise's variance"
        classic = latest_message(ros, NavSatFix, "/rover/fix")
        assert classic.header.frame_id == "base_link"
        # Standard atmosphere at the base's height above the origin's 400 m.
        pressure = latest_message(ros, FluidPressure, "/air_pressure")
        assert pressure.header.frame_id == "base_link"
        expected = 101325.0 * (1 - 2.25577e-5 * 400.1) ** 5.25588
        assert abs(pressure.fluid_pressure - expected) < 5.0, (pressure.fluid_pressure, expected)
        altitude = latest_message(ros, Altimeter, "/altimeter")
        assert abs(altitude.vertical_position) < 0.05 and abs(altitude.vertical_velocity) < 0.05
        # Rates in sim time, from the stamps.
        rates = {}
        for topic, kind in [("/navsat", NavSatFix), ("/air_pressure", FluidPressure),
                            ("/altimeter", Altimeter), ("/rover/fix", NavSatFix)]:
            stamps = []
            qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
            ros.create_subscription(kind, topic, lambda m, s=stamps: s.append(
                m.header.stamp.sec + m.header.stamp.nanosec * 1e-9), qos)
            rates[topic] = stamps
        spin_until(ros, lambda: all(len(s) >= 5 for s in rates.values()), timeout=30,
                   what="five messages on each topic")
        measured = {topic: 1.0 / period(stamps) for topic, stamps in rates.items()}
        print(f"navsat: NavSatFix in gps_link, {fix.latitude:.7f} N {fix.longitude:.7f} E; "
              f"air_pressure: {pressure.fluid_pressure:.1f} Pa (standard atmosphere {expected:.1f}); "
              f"altimeter: {altitude.vertical_position:.4f} m; rates "
              + ", ".join(f"{t} {r:.1f} Hz" for t, r in measured.items()))
        for topic, rate in [("/navsat", 5), ("/air_pressure", 20), ("/altimeter", 10), ("/rover/fix", 2)]:
            assert abs(measured[topic] - rate) < 0.05 * rate, (topic, measured[topic])
    finally:
        bridge.close()


CONTACT_AND_MAGNETOMETER_URDF = """<?xml version="1.0"?>
<robot name="bumper_bot">
  <link name="base_link">
    <inertial><mass value="2"/><inertia ixx="0.02" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.4 0.3 0.2"/></geometry></collision>
  </link>
  <link name="mag_link">
    <inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="mag_joint" type="fixed"><parent link="base_link"/><child link="mag_link"/>
    <origin xyz="0 0 0.12"/></joint>
  <gazebo reference="base_link">
    <sensor name="bumper" type="contact"><update_rate>50</update_rate>
      <contact><collision>base_link_collision</collision></contact><topic>bumper</topic></sensor>
    <sensor name="base_contact" type="contact">
      <contact><collision>base_link_collision</collision></contact>
      <plugin name="bumper_plugin" filename="libgazebo_ros_bumper.so">
        <ros><namespace>/demo</namespace><remapping>bumper_states:=bumper_demo</remapping></ros>
        <frame_name>world</frame_name></plugin></sensor>
  </gazebo>
  <gazebo reference="mag_link">
    <sensor name="compass" type="magnetometer"><update_rate>40</update_rate><topic>mag</topic>
      <pose>0 0 0 0 0 1.5707963</pose></sensor>
  </gazebo>
</robot>
"""


def test_gazebo_contact_sensors_and_magnetometer_publish_where_their_users_read(tmp_path, ros):
    """gz-sim's contact sensor and magnetometer and Classic's bumper plugin, in a robot's
    `<gazebo>` blocks: the contacts of the robot resting on the floor on each sensor's topic,
    with the flag beside them, and the world's magnetic field turned into the magnetometer's
    frame (its pose yaws it a quarter turn), each at its rate."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from ros_gz_interfaces.msg import Contacts
    from sensor_msgs.msg import MagneticField
    from std_msgs.msg import Bool

    urdf = tmp_path / "bumper_bot.urdf"
    urdf.write_text(CONTACT_AND_MAGNETOMETER_URDF)
    config = tmp_path / "robot.yaml"
    config.write_text(f"world: {{floor: true}}\nrobots:\n  - name: bumper_bot\n    urdf: {urdf}\n"
                      "    floating_base: true\n    pose: {xyz: [0, 0, 0.1]}\n")
    bridge = Bridge(str(config))
    try:
        bridge.console("realtime")
        received = {}
        qos = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
        kinds = [("/bumper", Contacts), ("/bumper/in_contact", Bool), ("/demo/bumper_demo", Contacts),
                 ("/mag", MagneticField)]
        for topic, kind in kinds:
            received[topic] = []
            ros.create_subscription(kind, topic, received[topic].append, qos)
        stamped = ["/bumper", "/demo/bumper_demo", "/mag"]
        spin_until(ros, lambda: all(len(received[t]) >= 20 for t in stamped)
                   and any(m.data for m in received["/bumper/in_contact"]),
                   timeout=30, what="twenty messages on each topic and the flag on")
    finally:
        bridge.close()
    bumper, classic = received["/bumper"][-1], received["/demo/bumper_demo"][-1]
    lift = sum(w.body_1_wrench.force.z for pair in bumper.contacts for w in pair.wrenches)
    names = {(pair.collision1.name, pair.collision2.name) for pair in bumper.contacts}
    assert all("base_link" in one and two.endswith("::floor") for one, two in names), names
    assert lift == pytest.approx(2.1 * 9.81, rel=0.05), "the robot's weight rests on its base"
    assert {(p.collision1.name, p.collision2.name) for p in classic.contacts} == names
    mag = received["/mag"][-1]
    assert mag.header.frame_id == "mag_link"
    # MuJoCo's field (0, -0.5, 0) in the world; the site's x axis points along the world's y.
    field = (mag.magnetic_field.x, mag.magnetic_field.y, mag.magnetic_field.z)
    assert field == pytest.approx((-0.5, 0.0, 0.0), abs=1e-3), field

    def rate(topic):
        stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in received[topic]]
        return 1.0 / period(stamps)

    rates = {topic: rate(topic) for topic in stamped}
    print(f"bumper: {len(bumper.contacts)} pairs {sorted(names)}, {lift:.2f} N up; magnetometer "
          f"in mag_link ({field[0]:.3f}, {field[1]:.3f}, {field[2]:.3f}) T; rates "
          + ", ".join(f"{t} {r:.1f} Hz" for t, r in rates.items()))
    for topic, expected in [("/bumper", 50), ("/demo/bumper_demo", 100), ("/mag", 40)]:
        assert abs(rates[topic] - expected) < 0.05 * expected, (topic, rates[topic])


FORCE_TORQUE_URDF = """<?xml version="1.0"?>
<robot name="ft_arm">
  <link name="arm">
    <inertial><mass value="3"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="hand">
    <inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>
      <inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="wrist" type="fixed"><parent link="arm"/><child link="hand"/>
    <origin xyz="0 0 -0.3"/></joint>
  <gazebo reference="wrist">
    <sensor name="wrist_ft" type="force_torque"><update_rate>250</update_rate>
      <topic>wrist/wrench</topic></sensor>
    <sensor name="tool_ft" type="force_torque"><pose>0 0 0.1 0 0 0</pose>
      <force_torque><frame>sensor</frame><measure_direction>parent_to_child</measure_direction>
      </force_torque></sensor>
  </gazebo>
</robot>
"""


def test_gazebo_force_torque_sensors_measure_across_their_joint_as_gazebo_does(tmp_path, ros):
    """gz-sim's force_torque sensors on a joint: the site on its child link, the wrench of the
    hand hanging off the arm in Gazebo's default direction (the child's on its parent: its
    weight pulls down and twists), and with `parent_to_child` in the sensor's own frame the
    same wrench negated, each on its topic at its rate."""
    from geometry_msgs.msg import WrenchStamped
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    urdf = tmp_path / "ft_arm.urdf"
    urdf.write_text(FORCE_TORQUE_URDF)
    config = tmp_path / "robot.yaml"
    config.write_text(f"robots:\n  - name: ft_arm\n    urdf: {urdf}\n    pose: {{xyz: [0, 0, 1]}}\n")
    bridge = Bridge(str(config))
    try:
        bridge.console("realtime")
        received = {"/wrist/wrench": [], "/tool_ft": []}
        qos = QoSProfile(depth=300, reliability=ReliabilityPolicy.RELIABLE)
        for topic, messages in received.items():
            ros.create_subscription(WrenchStamped, topic, messages.append, qos)
        spin_until(ros, lambda: all(len(m) >= 100 for m in received.values()), timeout=30,
                   what="a hundred wrenches on each topic")
    finally:
        bridge.close()
    weight, twist = 1.5 * 9.81, 1.5 * 9.81 * 0.2
    wrist, tool = received["/wrist/wrench"][-1], received["/tool_ft"][-1]

    def six(m):
        f, t = m.wrench.force, m.wrench.torque
        return (f.x, f.y, f.z, t.x, t.y, t.z)

    assert wrist.header.frame_id == "hand"
    assert six(wrist) == pytest.approx((0, 0, -weight, 0, twist, 0), abs=1e-3), six(wrist)
    assert tool.header.frame_id not in ("", "hand"), "the sensor's own frame"
    assert six(tool) == pytest.approx((0, 0, weight, 0, -twist, 0), abs=1e-3), six(tool)

    def rate(topic):
        stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in received[topic]]
        return 1.0 / period(stamps)

    rates = {topic: rate(topic) for topic in received}
    print(f"wrist (child_to_parent, frame {wrist.header.frame_id}): {six(wrist)}; tool "
          f"(parent_to_child, frame {tool.header.frame_id}): {six(tool)}; rates {rates}")
    for topic, expected in [("/wrist/wrench", 250), ("/tool_ft", 200)]:
        assert abs(rates[topic] - expected) < 0.05 * expected, (topic, rates[topic])


TB4 = ROBOTS["turtlebot4 (gz-sim)"]
TB4_BRIDGE = GAZEBO / "nav2_minimal_tb4" / "nav2_minimal_tb4_sim" / "configs" / "tb4_bridge.yaml"
# A user's ros_gz_bridge file: the lidar and IMU under the names their driver stack reads.
RENAMING_BRIDGE = """- ros_topic_name: "front/scan"
  gz_topic_name: "/scan"
  ros_type_name: "sensor_msgs/msg/LaserScan"
  gz_type_name: "gz.msgs.LaserScan"
  direction: GZ_TO_ROS
- ros_topic_name: "imu/data"
  gz_topic_name: "/imu"
  ros_type_name: "sensor_msgs/msg/Imu"
  gz_type_name: "gz.msgs.IMU"
  direction: GZ_TO_ROS
- ros_topic_name: "sonar"
  gz_topic_name: "/sonar"
  ros_type_name: "sensor_msgs/msg/Range"
  gz_type_name: "gz.msgs.LaserScan"
  direction: GZ_TO_ROS
"""


def test_tb4s_own_ros_gz_bridge_file_is_carried_entry_by_entry(tmp_path):
    """`--summary` of TurtleBot 4 with its bringup's tb4_bridge.yaml: each entry is a sensor's
    or the drive's gz topic, or one the bridge publishes of its own; none is left out."""
    from conftest import BINARY

    if not GAZEBO.exists() or not XACRO.exists():
        pytest.skip("../shared/robots/gazebo or xacro is not there")
    urdf, env = expand(tmp_path, TB4)
    run = subprocess.run([str(BINARY), "--urdf", str(urdf), "--set",
                          f"robots.0.gazebo_bridge={TB4_BRIDGE}", "--summary"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    said = [line.strip() for line in run.stdout.splitlines() if "tb4_bridge.yaml: gz" in line]
    print("\n".join(said))
    expected = {"/clock": "of its own", "joint_states": "of its own", "/tf": "of its own",
                "/odom": "the drive's odometry", "/imu": "imu 'imu'", "/scan": "lidar 'rplidar'",
                "/cmd_vel": "the drive's cmd_vel", "/rgbd_camera/camera_info": "camera_info"}
    for gz, what in expected.items():
        assert any(f"gz '{gz}' ->" in line and what in line and line.startswith("taken")
                   for line in said), (gz, said)
    assert len(said) == len(expected), said


@needs_ros2_cli
def test_ros2_launch_bridge_file_puts_each_gazebo_topic_on_its_ros_name(tmp_path):
    """`ros2 launch mujoco_bridge sim.launch.py urdf:=turtlebot4.urdf bridge:=FILE`: the lidar
    and IMU go out on the names the user's ros_gz_bridge file gives them, read with the
    `ros2` CLI; the entry that names no gz topic of the robot is said at load."""
    if not GAZEBO.exists() or not XACRO.exists():
        pytest.skip("../shared/robots/gazebo or xacro is not there")
    urdf, env = expand(tmp_path, TB4)
    bridge_file = tmp_path / "bridge.yaml"
    bridge_file.write_text(RENAMING_BRIDGE)
    install = install_prefix(tmp_path / "install")
    launch = Launch([tmp_path / "prefix", install], "mujoco_bridge", "sim.launch.py",
                    f"urdf:={urdf}", f"bridge:={bridge_file}", "headless:=true")
    try:
        scan = launch.echo("/front/scan", "sensor_msgs/msg/LaserScan")
        imu = launch.echo("/imu/data", "sensor_msgs/msg/Imu")
        topics = topic_list(install)
    finally:
        code, output = launch.stop()
    assert "frame_id: rplidar_link" in scan, scan
    assert "frame_id: imu_link" in imu, imu
    assert "/scan" not in topics and "/imu" not in topics, topics
    assert "gz '/sonar' -> ROS 'sonar': no <gazebo> sensor or plugin has that gz topic" in output
    assert code == 0, output[-3000:]


def topic_list(prefix):
    """`ros2 topic list` as printed, one topic a line."""
    from conftest import ros2

    return ros2("topic", "list", "--no-daemon", prefix=prefix).stdout.split()


WEIGHTLESS_URDF = """<?xml version="1.0"?>
<robot name="balloon">
  <link name="base_link">
    <inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.3"/></geometry></collision>
  </link>
  <gazebo reference="base_link"><turnGravityOff>true</turnGravityOff></gazebo>
</robot>
"""


def test_a_link_with_gravity_turned_off_floats_where_it_was_placed(tmp_path, ros):
    """Classic's `<turnGravityOff>`: a free balloon placed 2 m up stays there through two
    seconds of sim time, where gravity would have dropped it 19.6 m."""
    from nav_msgs.msg import Odometry
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    urdf = tmp_path / "balloon.urdf"
    urdf.write_text(WEIGHTLESS_URDF)
    config = tmp_path / "robot.yaml"
    config.write_text(f"robots:\n  - name: balloon\n    urdf: {urdf}\n    floating_base: true\n"
                      "    pose: {xyz: [0, 0, 2]}\n")
    bridge = Bridge(str(config))
    try:
        bridge.console("realtime")
        received = []
        qos = QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
        ros.create_subscription(Odometry, "/odom", received.append, qos)

        def stamp(m):
            return m.header.stamp.sec + m.header.stamp.nanosec * 1e-9

        spin_until(ros, lambda: len(received) > 1 and stamp(received[-1]) - stamp(received[0]) > 2.0,
                   timeout=30, what="two seconds of odometry")
    finally:
        bridge.close()
    heights = [m.pose.pose.position.z for m in received]
    print(f"balloon height over {stamp(received[-1]) - stamp(received[0]):.2f} s: "
          f"{min(heights):.6f}..{max(heights):.6f} m")
    assert max(heights) - min(heights) < 1e-3, (min(heights), max(heights))
    assert abs(received[-1].twist.twist.linear.z) < 1e-3


SEGMENTATION_URDF = """<?xml version="1.0"?>
<robot name="seg_rig">
  <link name="base_link"/>
  <link name="mast"/>
  <joint name="mast_joint" type="fixed"><parent link="base_link"/><child link="mast"/>
    <origin xyz="0 0 0.5"/></joint>
  <link name="crate">
    <visual><geometry><box size="0.5 0.5 0.5"/></geometry></visual>
    <collision><geometry><box size="0.5 0.5 0.5"/></geometry></collision>
  </link>
  <joint name="crate_joint" type="fixed"><parent link="base_link"/><child link="crate"/>
    <origin xyz="2 0 0.5"/></joint>
  <gazebo reference="crate">
    <plugin filename="gz-sim-label-system" name="gz::sim::systems::Label"><label>10</label></plugin>
  </gazebo>
  <gazebo reference="mast">
    <sensor name="semantic_camera" type="segmentation"><topic>seg</topic><update_rate>10</update_rate>
      <camera><segmentation_type>semantic</segmentation_type><horizontal_fov>1.0</horizontal_fov>
        <image><width>64</width><height>48</height></image></camera></sensor>
    <sensor name="box_camera" type="boundingbox_camera"><topic>boxes</topic><update_rate>10</update_rate>
      <camera><box_type>2d</box_type><horizontal_fov>1.0</horizontal_fov>
        <image><width>64</width><height>48</height></image></camera></sensor>
  </gazebo>
</robot>
"""


def test_gazebo_segmentation_and_bounding_box_cameras_see_a_labelled_link(tmp_path, ros):
    """gz-sim's segmentation and bounding-box cameras, with a Label plugin giving a crate 2 m
    ahead class 10: the semantic labels map on `seg/labels_map` marks the crate's pixels 10
    in the middle of the image and the floor 0, its colour map and camera info beside it; the
    boxes on `boxes` hold one box of class 10 about the image's centre, the colour image on
    `boxes_image`."""
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import CameraInfo, Image
    from vision_msgs.msg import Detection2DArray

    urdf = tmp_path / "seg_rig.urdf"
    urdf.write_text(SEGMENTATION_URDF)
    config = tmp_path / "robot.yaml"
    config.write_text(f"world: {{floor: true}}\nrobots:\n  - name: seg_rig\n    urdf: {urdf}\n")
    bridge = Bridge(str(config))
    kinds = [("/seg/labels_map", Image), ("/seg/colored_map", Image), ("/seg/camera_info", CameraInfo),
             ("/boxes", Detection2DArray), ("/boxes_image", Image)]
    received = {topic: [] for topic, _ in kinds}
    try:
        bridge.console("realtime")
        for topic, kind in kinds:
            ros.create_subscription(kind, topic, received[topic].append, qos_profile_sensor_data)
        spin_until(ros, lambda: all(received.values()), timeout=60, what="a message on each topic")
    finally:
        bridge.close()
    labels = received["/seg/labels_map"][-1]
    assert (labels.width, labels.height, labels.encoding) == (64, 48, "rgb8")
    assert labels.header.frame_id and labels.header.frame_id == received["/seg/camera_info"][-1].header.frame_id
    values = bytes(labels.data)[0::3]
    centre = values[24 * 64 + 32]
    classes = sorted(set(values))
    assert centre == 10, f"the crate fills the middle of the image: {centre}"
    assert classes == [0, 10], classes
    crate_pixels = sum(1 for v in values if v == 10)
    colours = {bytes(received["/seg/colored_map"][-1].data)[i:i + 3] for i in range(0, 64 * 48 * 3, 3)}
    assert len(colours) == 2, colours
    boxes = received["/boxes"][-1]
    assert [d.results[0].hypothesis.class_id for d in boxes.detections] == ["10"]
    box = boxes.detections[0].bbox
    assert abs(box.center.position.x - 31.5) < 2 and abs(box.center.position.y - 23.5) < 4, box
    assert box.size_x * box.size_y >= crate_pixels
    image = received["/boxes_image"][-1]
    assert (image.width, image.height) == (64, 48) and len(set(bytes(image.data))) > 8
    print(f"segmentation: {crate_pixels} of {64 * 48} pixels class 10 (classes {classes}), "
          f"{len(colours)} colours; boxes: {[d.id for d in boxes.detections]} class "
          f"{boxes.detections[0].results[0].hypothesis.class_id} at ({box.center.position.x:.1f}, "
          f"{box.center.position.y:.1f}) size {box.size_x:.0f}x{box.size_y:.0f}")


def test_tb4s_wheel_and_caster_surfaces_and_colours_reach_the_compiled_model(tmp_path):
    """TurtleBot 4's wheels (`mu1` 1, `kp` 1e6, `kd` 100, `minDepth` 1e-4, `maxVel` 1,
    `Gazebo/DarkGrey`) and caster (`mu1` 0.1, `kp` 1e6, `kd` 1): `--summary` says what each
    became and that `maxVel` is not read; the exported MJCF carries them on the link's geoms."""
    from conftest import BINARY

    if not GAZEBO.exists() or not XACRO.exists():
        pytest.skip("../shared/robots/gazebo or xacro is not there")
    urdf, env = expand(tmp_path, TB4)
    summary = subprocess.run([str(BINARY), "--urdf", str(urdf), "--summary"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0, summary.stderr[-2000:]
    said = [line.strip() for line in summary.stdout.splitlines()
            if "surface of '" in line or "colour" in line]
    print("\n".join(said))
    wheel = next(line for line in said if line.startswith("taken: surface of 'left_wheel"))
    assert "friction 1 " in wheel and "kp 1000000, kd 100 on 0.2 kg" in wheel, wheel
    assert "solimp width 0.0001" in wheel, wheel
    assert any(line.startswith("left out: surface of 'left_wheel") and "maxVel 1" in line
               for line in said), said
    assert any(line.startswith("taken: link 'left_wheel") and "0.175 0.175 0.175 1" in line
               for line in said), said
    exported = tmp_path / "tb4.xml"
    export = subprocess.run([str(BINARY), "--urdf", str(urdf), "--export-mjcf", str(exported)],
                            env=env, capture_output=True, text=True, timeout=120)
    assert export.returncode == 0, export.stderr[-2000:]
    bodies = {body.get("name"): body for body in ET.parse(exported).iter("body")}
    wheel_body = next(body for name, body in bodies.items() if name.endswith("_left_wheel"))
    collision = [g for g in wheel_body.findall("geom") if g.get("group") == "3"]
    visual = [g for g in wheel_body.findall("geom") if g.get("group") == "2"]
    assert collision and visual, ET.tostring(wheel_body)[:800]
    # MuJoCo's export leaves out what equals its default (dampratio 1, friction 1).
    timeconst, dampratio = (list(map(float, collision[0].get("solref").split())) + [1.0])[:2]
    # 1e6 N/m on 0.2 kg, kd 100 is under critical damping: critical, and its timeconst
    # sqrt(0.2/1e6) = 0.00045 s is held at the bridge's stiffest, 0.01 s.
    assert "timeconst 0.01 s or more" in wheel, wheel
    assert (timeconst, dampratio) == (0.01, 1.0), collision[0].attrib
    assert collision[0].get("solimp").split()[2] == "0.0001"
    assert collision[0].get("priority") == "1"
    rgba = [float(v) for v in visual[0].get("rgba").split()]
    assert rgba == pytest.approx([0.175, 0.175, 0.175, 1.0], abs=1e-6), rgba
    caster = next(body for name, body in bodies.items() if "caster" in name
                  and any(g.get("solref") for g in body.findall("geom")))
    caster_geom = next(g for g in caster.findall("geom") if g.get("solref"))
    assert float(caster_geom.get("friction").split()[0]) == pytest.approx(0.1)
