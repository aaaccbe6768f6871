"""Simulated sensors over ROS 2 (either backend), read by rclpy: stepped while paused, each
message is stamped with the sim time of the step it samples, on the rate's grid, and carries
the noise's variance in its covariances."""
import collections
import os

import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import Imu, MagneticField  # noqa: E402

from conftest import bridge_of, spin_until  # noqa: E402
from test_sim_time import NOISE, SENSOR_WORLD, on_steps  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)


def test_stepped_sensors_arrive_stamped_on_the_sim_clock_with_their_noise_in_the_covariances(ros, tmp_path):
    world = SENSOR_WORLD.replace("SEED", "3").replace("NOISE", NOISE)
    bridge = bridge_of(tmp_path, world)
    try:
        received = {"/imu": [], "/magnetic_field": []}
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        ros.create_subscription(Imu, "/imu", received["/imu"].append, qos)
        ros.create_subscription(MagneticField, "/magnetic_field", received["/magnetic_field"].append, qos)
        # Paused: the held start state arrives again and again, always stamped 0; the imu,
        # 20 ms late, has delivered nothing yet.
        spin_until(ros, lambda: len(received["/magnetic_field"]) >= 3, what="the held compass")
        stamp = lambda m: m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec  # noqa: E731
        assert {stamp(m) for m in received["/magnetic_field"]} == {0} and not received["/imu"]
        # 400 steps of 2 ms, 50 at a time (a reader's queue holds what each burst sends).
        for _ in range(8):
            bridge.console("step 50")
            ros_time = bridge.stats()["time"]
            # The compass measures 10 ms late (MuJoCo's delay); the imu arrives 20 ms late
            # (the config's latency): its newest by now measured 20 ms ago.
            lags = {"/imu": 20_000_000, "/magnetic_field": 10_000_000}
            newest = lambda topic: max(map(stamp, received[topic]), default=-1)  # noqa: E731
            spin_until(ros, lambda: all(newest(t) >= round(ros_time * 1e9) - lag
                                        for t, lag in lags.items()),
                       what=f"the sensors up to {ros_time}")
            assert newest("/imu") <= round(ros_time * 1e9) - 20_000_000
        # 200 Hz of sim time on 2 ms steps: 0, 6, 10, 16, ... ms, nothing between; the imu's
        # up to 0.78 s (the rest is on its way), the compass's 10 ms before each sample.
        grid = on_steps(200, 161)
        expected = {"/imu": grid[:-4], "/magnetic_field": [t - 10_000_000 for t in grid[2:]]}
        for topic, messages in received.items():
            stamps = sorted({stamp(m) for m in messages})
            assert stamps == expected[topic], (topic, sorted(set(stamps) ^ set(expected[topic])))
        imu = received["/imu"][-1]
        assert [imu.angular_velocity_covariance[k] for k in (0, 4, 8)] == [1e-4] * 3
        assert abs(imu.linear_acceleration_covariance[8] - 0.0025) < 1e-12
        assert imu.orientation_covariance[0] == -1.0
        compass = received["/magnetic_field"][-1]
        assert compass.header.frame_id and abs(compass.magnetic_field.y + 0.5) < 0.01
        assert list(compass.magnetic_field_covariance) == [0.0] * 9, "drift only: no white noise"
    finally:
        bridge.close()


def test_gps_and_barometer_reach_a_ros_subscriber(ros, tmp_path):
    from geometry_msgs.msg import TwistWithCovarianceStamped
    from ros_gz_interfaces.msg import Altimeter
    from sensor_msgs.msg import FluidPressure, NavSatFix

    from test_geo_sensors import GEO_WORLD, ORIGIN, pressure

    bridge = bridge_of(tmp_path, GEO_WORLD.replace("RATE", "10").replace("NOISE", "{}"))
    try:
        bridge.console("realtime")
        received = collections.defaultdict(list)
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        for kind, topic in ((NavSatFix, "/gps/fix"), (TwistWithCovarianceStamped, "/gps/vel"),
                            (FluidPressure, "/baro"), (Altimeter, "/altimeter")):
            ros.create_subscription(kind, topic, received[topic].append, qos)
        spin_until(ros, lambda: all(len(received[t]) >= 3 for t in ("/gps/fix", "/gps/vel", "/baro",
                                                                   "/altimeter")),
                   what="the GPS, the barometer and the altimeter")
    finally:
        bridge.close()
    stamp = lambda m: (m.header.stamp.sec, m.header.stamp.nanosec)  # noqa: E731
    fixes = {stamp(m): m for m in received["/gps/fix"]}
    both = [(fixes[stamp(b)], b) for b in received["/baro"] if stamp(b) in fixes]
    assert both, "fixes and pressures of the same samples"
    fix, baro = both[-1]
    assert abs(fix.latitude - ORIGIN["latitude"]) < 1e-3 and fix.header.frame_id == "gps"
    assert fix.altitude < ORIGIN["altitude"] + 50.05, "it falls"
    # The fix's height and the pressure measured one point of one sample.
    assert abs(baro.fluid_pressure - pressure(fix.altitude)) < 0.01
    heights = {stamp(m): m for m in received["/altimeter"]}
    altimeter = heights.get(stamp(fix))
    assert altimeter is not None and altimeter.vertical_reference == pytest.approx(50.05)
    assert altimeter.vertical_position == pytest.approx(fix.altitude - ORIGIN["altitude"] - 50.05, abs=1e-6)
    print(f"rclpy: {len(received['/gps/fix'])} fixes, the last {fix.latitude:.6f} N "
          f"{fix.altitude:.3f} m at {baro.fluid_pressure:.2f} Pa")


def test_contacts_and_the_foot_flag_reach_a_ros_subscriber(ros, tmp_path):
    from ros_gz_interfaces.msg import Contacts
    from std_msgs.msg import Bool

    from test_contact_sensors import MJCF, WORLD

    model = "\n".join("      " + line for line in MJCF.splitlines())
    bridge = bridge_of(tmp_path, WORLD.replace("MODEL", model))
    try:
        received = collections.defaultdict(list)
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        for kind, topic in ((Contacts, "/box_contact"), (Bool, "/foot_contact/in_contact")):
            ros.create_subscription(kind, topic, received[topic].append, qos)
        # Paused, the held start state arrives first: the foot in the air.
        spin_until(ros, lambda: received["/foot_contact/in_contact"], what="the held flag")
        bridge.console("realtime")
        # The foot lands after 0.3 s of sim time.
        spin_until(ros, lambda: any(m.data for m in received["/foot_contact/in_contact"])
                   and received["/box_contact"], what="the contacts and the foot's flag")
    finally:
        bridge.close()
    box = received["/box_contact"][-1]
    lift = sum(w.body_1_wrench.force.z for pair in box.contacts for w in pair.wrenches)
    assert box.header.frame_id == "world" and lift == pytest.approx(2 * 9.81, rel=0.05)
    assert box.contacts[0].collision1.name == "rig::box::box_geom"
    assert box.contacts[0].collision2.name == "rig::world::ground"
    assert not received["/foot_contact/in_contact"][0].data, "in the air at the start"
    print(f"rclpy: {len(received['/box_contact'])} contact messages, the box carried by "
          f"{lift:.2f} N; {len(received['/foot_contact/in_contact'])} flags")


def test_segmentation_boxes_and_the_lens_reach_a_ros_subscriber(ros, tmp_path):
    from sensor_msgs.msg import CameraInfo, Image
    from vision_msgs.msg import Detection2DArray, LabelInfo

    from test_segmentation import HEIGHT, MJCF, WIDTH, WORLD

    model = "\n".join("      " + line for line in MJCF.splitlines())
    world = (WORLD.replace("MODEL", model).replace("WIDTH", str(WIDTH))
             .replace("HEIGHT", str(HEIGHT))
             .replace("segmentation: true", "segmentation: true, distortion: {k1: -0.1, p1: 0.001}"))
    bridge = bridge_of(tmp_path, world)
    try:
        bridge.console("realtime")
        received = collections.defaultdict(list)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        topics = ((Image, "/eye/instance/labels_map"), (LabelInfo, "/eye/semantic/label_info"),
                  (Detection2DArray, "/eye/detections"), (CameraInfo, "/eye/camera_info"))
        for kind, topic in topics:
            ros.create_subscription(kind, topic, received[topic].append, qos)
        spin_until(ros, lambda: all(received[t] for _, t in topics), what="the segmentation topics")
    finally:
        bridge.close()
    labels = received["/eye/instance/labels_map"][-1]
    assert (labels.encoding, labels.width, labels.height) == ("rgb8", WIDTH, HEIGHT)
    classes = {c.class_id: c.class_name for c in received["/eye/semantic/label_info"][-1].class_map}
    assert classes == {0: "background", 1: "class_1", 2: "crate", 20: "cap"}
    boxes = received["/eye/detections"][-1]
    assert {d.id for d in boxes.detections} == {"rig::crate", "rig::ball"}
    assert boxes.header.frame_id == "eye_optical_frame"
    assert list(received["/eye/camera_info"][-1].d) == [-0.1, 0.0, 0.001, 0.0, 0.0]
    print(f"rclpy: {len(boxes.detections)} boxes, classes {sorted(classes.values())}")
