"""Camera topics seen by rclpy: a red box two metres in front of a camera shows in the centre
of the RGB image in its colour, the depth image holds its distance, CameraInfo's K follows
the camera's fovy, /tf_static places the optical frame (z forward, x right, y down), and
nothing is rendered while nobody subscribes. Rendering is headless (EGL; Mesa's llvmpipe on
a machine without a GPU). Runs in the suite's private network namespace."""
import math
import os
import struct
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image, PointCloud2  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from conftest import CAMERA_WORLD, bridge_of, latest_message  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)

FOVY = 45.0
FACE = 1.9


@pytest.fixture
def rig(tmp_path):
    bridge = bridge_of(tmp_path, CAMERA_WORLD, ["--set", "zmq.enabled=false"])
    yield bridge
    log = bridge.close()
    assert "cameras are off" not in (log or ""), log


def diagnostics_value(node, key):
    array = latest_message(node, DiagnosticArray, "/diagnostics", timeout=30)
    for status in array.status:
        for value in status.values:
            if value.key == key:
                return int(value.value)
    raise AssertionError(f"/diagnostics has no {key}")


def test_a_box_in_front_shows_in_colour_at_its_depth(rig, ros):
    image = latest_message(ros, Image, "eye/image_raw")
    assert (image.width, image.height, image.encoding) == (320, 240, "rgb8")
    assert image.step == 320 * 3 and len(image.data) == 320 * 240 * 3
    assert image.header.frame_id == "eye_optical_frame"

    def pixel(u, v):
        i = v * image.step + 3 * u
        return tuple(image.data[i:i + 3])

    r, g, b = pixel(160, 120)
    print(f"centre pixel rgb {r, g, b}; corner {pixel(5, 5)}")
    assert r > 80 and r > 2 * g and r > 2 * b, (r, g, b)
    assert pixel(5, 5) != (r, g, b), "the corner sees past the box"

    depth = latest_message(ros, Image, "eye/depth/image_raw")
    assert (depth.width, depth.height, depth.encoding) == (320, 240, "32FC1")
    assert depth.step == 320 * 4 and depth.is_bigendian == 0

    def metres(u, v):
        i = v * depth.step + 4 * u
        return struct.unpack_from("<f", bytes(depth.data[i:i + 4]))[0]

    # Pixels around the optical axis (between the four central pixels) all see the face.
    centre = [metres(u, v) for u in (159, 160) for v in (119, 120)]
    print(f"depth at the centre {centre} m (face at {FACE} m); corner {metres(5, 5)}")
    for value in centre:
        assert abs(value - FACE) <= 0.001 + 0.001 * FACE, centre
    assert math.isinf(metres(5, 5)), "nothing lies behind the corner within the far plane"

    info = latest_message(ros, CameraInfo, "eye/camera_info")
    focal = 120 / math.tan(math.radians(FOVY) / 2)
    print(f"K {list(info.k)}; expected focal {focal:.3f}")
    assert (info.width, info.height) == (320, 240)
    assert info.distortion_model == "plumb_bob"
    assert abs(info.k[0] - focal) < 1e-3 * focal and abs(info.k[4] - focal) < 1e-3 * focal
    assert abs(info.k[2] - 159.5) < 1e-6 and abs(info.k[5] - 119.5) < 1e-6
    assert info.header.frame_id == "eye_optical_frame"

    cloud = latest_message(ros, PointCloud2, "eye/points")
    assert (cloud.width, cloud.height, cloud.point_step) == (320, 240, 16)
    assert [f.name for f in cloud.fields] == ["x", "y", "z", "rgb"]
    x, y, z, rgb = struct.unpack_from("<3fI", bytes(cloud.data), (120 * 320 + 160) * 16)
    print(f"centre point ({x:.5f}, {y:.5f}, {z:.5f}) m, rgb {rgb:06x}")
    assert abs(z - FACE) <= 0.001 + 0.001 * FACE, "on the box face"
    # Half a pixel right of and below the optical axis, at 1.9 m.
    assert abs(x - 0.5 * FACE / focal) < 1e-4 and abs(y - 0.5 * FACE / focal) < 1e-4
    assert (rgb >> 16) == r and (rgb >> 8 & 0xFF) == g and (rgb & 0xFF) == b
    corner = struct.unpack_from("<3f", bytes(cloud.data), (5 * 320 + 5) * 16)
    assert all(math.isnan(c) for c in corner), "nothing seen: NaN"


def test_the_optical_frame_looks_along_the_camera(rig, ros):
    tf = latest_message(ros, TFMessage, "/tf_static", qos=LATCHED)
    frame = next(t for t in tf.transforms if t.child_frame_id == "eye_optical_frame")
    assert frame.header.frame_id == "head"
    q = frame.transform.rotation

    def rotate(v):
        # v' = q v q*, with q = (w, x, y, z)
        w, x, y, z = q.w, q.x, q.y, q.z
        vx, vy, vz = v
        tx, ty, tz = 2 * (y * vz - z * vy), 2 * (z * vx - x * vz), 2 * (x * vy - y * vx)
        return (vx + w * tx + y * tz - z * ty, vy + w * ty + z * tx - x * tz,
                vz + w * tz + x * ty - y * tx)

    # REP 103 optical frame: z forward (the camera looks along the head's +x), x right (the
    # head's -y), y down (the head's -z).
    for axis, expected in [((0, 0, 1), (1, 0, 0)), ((1, 0, 0), (0, -1, 0)), ((0, 1, 0), (0, 0, -1))]:
        got = rotate(axis)
        assert all(abs(a - b) < 1e-9 for a, b in zip(got, expected)), (axis, got)


def test_nothing_is_rendered_while_nobody_subscribes(rig, ros):
    time.sleep(2.0)
    assert diagnostics_value(ros, "camera_frames_rendered") == 0
    latest_message(ros, Image, "eye/image_raw")
    deadline = time.monotonic() + 30
    while (rendered := diagnostics_value(ros, "camera_frames_rendered")) == 0:
        assert time.monotonic() < deadline, "no frame counted after a subscriber came"
    print(f"frames rendered once subscribed: {rendered}")


def test_without_gl_the_node_runs_on_and_says_cameras_are_off(monkeypatch, ros, tmp_path):
    from rosgraph_msgs.msg import Clock

    # libglvnd finds no EGL vendor: no context can be made.
    monkeypatch.setenv("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent/egl_vendor.json")
    bridge = bridge_of(tmp_path, CAMERA_WORLD, ["--set", "zmq.enabled=false"])
    try:
        latest_message(ros, Clock, "/clock", qos=QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
        # No GL context is made before a frame is asked for: nothing to say yet.
        assert "cameras are off" not in bridge.log_so_far()
        frames = []
        ros.create_subscription(Image, "eye/image_raw", frames.append, 1)
        deadline = time.monotonic() + 30
        while "cameras are off" not in bridge.log_so_far():
            assert time.monotonic() < deadline, "a frame was asked for and nothing was said"
            rclpy.spin_once(ros, timeout_sec=0.1)
        # Asked again and again (at the camera's rate): said once, and the node runs on.
        end = time.monotonic() + 2
        while time.monotonic() < end:
            rclpy.spin_once(ros, timeout_sec=0.1)
        latest_message(ros, Clock, "/clock", qos=QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
        assert frames == []
    finally:
        log = bridge.close()
    lines = [line for line in log.splitlines() if "cameras are off" in line]
    print(lines)
    assert len(lines) == 1 and "EGL" in lines[0], log
