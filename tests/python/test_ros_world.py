"""The ROS 2 node with several robots in one world, seen by rclpy: namespaces and prefixed
frames, sensor topics against the legacy rows of the same steps, the simulation_interfaces
services, the wrench topic and publisher rates. Runs in the suite's private network
namespace with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST."""
import math
import os
import struct
import subprocess
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import Imu, JointState, Range  # noqa: E402

from conftest import BINARY, REPO, Bridge, call, spin_until  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

URDF = REPO / "urdf" / "mobile_manipulator.urdf"
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)

# Two default robots, a wall in front of alpha and a load hanging from a force-torque
# sensor (mapped explicitly; the robots' sensors are found by site). Alpha asks for three
# rays of its laser fan as Range topics too; beta gets only what is found (the fan as a
# scan, no Range topics).
WORLD = f"""
world: {{timestep: 0.002, floor: true, light: true}}
robots:
  - name: alpha
    urdf: {URDF}
    floating_base: true
    pose: {{xyz: [0, 0, 0.0805]}}
    ros:
      range:
        - {{topic: range/range_4, sensor: range_4}}
        - {{topic: range/range_0, sensor: range_0}}
        - {{topic: range/range_8, sensor: range_8}}
  - name: beta
    urdf: {URDF}
    floating_base: true
    pose: {{xyz: [0, 3, 0.0805]}}
  - name: wall
    mjcf_string: |
      <mujoco><worldbody>
        <body name="slab" pos="2 0 0.5"><geom type="box" size="0.05 1 0.5"/></body>
      </worldbody></mujoco>
  - name: rig
    mjcf_string: |
      <mujoco><worldbody>
        <body name="post" pos="0 -2 1"><geom type="box" size="0.02 0.02 0.02" mass="0.1"/>
          <body name="load" pos="0 0 -0.1"><site name="mount" pos="0 0 0.01"/>
            <geom type="sphere" size="0.05" mass="2" pos="0.1 0 -0.05"/></body>
        </body>
      </worldbody>
      <sensor><force name="ft_force" site="mount"/><torque name="ft_torque" site="mount"/></sensor>
      </mujoco>
    ros:
      force_torque:
        - {{topic: wrist_ft, force: ft_force, torque: ft_torque}}
"""


@pytest.fixture
def world_config(tmp_path):
    path = tmp_path / "world.yaml"
    path.write_text(WORLD)
    return path


@pytest.fixture
def world(world_config):
    """The world above, under the node namespace /sim (given with --ros-args)."""
    bridge = Bridge(world_config, ["--ros-args", "-r", "__ns:=/sim"])
    yield bridge
    bridge.close()


def latest(ros, kind, topic, qos=10, count=2, timeout=20):
    """The newest of `count` messages on `topic`."""
    messages = []
    subscription = ros.create_subscription(kind, topic, messages.append, qos)
    spin_until(ros, lambda: len(messages) >= count, timeout, what=topic)
    ros.destroy_subscription(subscription)
    return messages[-1]


def sensor_rows(bridge, robot, names):
    """{sensor: values} from the legacy rows of the current (paused) step."""
    sub = bridge.state_socket(f"{robot}/sensor/".encode())
    found = {}
    deadline = time.monotonic() + 10
    while len(found) < len(names):
        assert time.monotonic() < deadline, f"no rows for {set(names) - set(found)}"
        if not sub.poll(100):
            continue
        topic, payload = sub.recv_multipart()
        name = topic.decode().rsplit("/", 1)[1]
        if name in names:
            _, dim = struct.unpack_from("<ii", payload)
            found[name] = struct.unpack_from(f"<{dim}f", payload, 8)
    sub.close()
    return found


def test_two_robots_each_in_its_namespace_with_prefixed_frames(ros, world):
    from tf2_msgs.msg import TFMessage
    from std_msgs.msg import String

    world.console("step 5")
    for robot in ("alpha", "beta"):
        message = latest(ros, JointState, f"/sim/{robot}/joint_states")
        assert "arm_elbow" in message.name and "left_wheel_joint" in message.name
        description = latest(ros, String, f"/sim/{robot}/robot_description", LATCHED, count=1)
        assert description.data == URDF.read_text()
    frames, fixed = {}, {}
    ros.create_subscription(TFMessage, "/tf", lambda m: frames.update({(t.header.frame_id, t.child_frame_id): t for t in m.transforms}), 10)
    ros.create_subscription(TFMessage, "/tf_static", lambda m: fixed.update({(t.header.frame_id, t.child_frame_id): t for t in m.transforms}), LATCHED)
    spin_until(ros, lambda: ("beta/odom", "beta/base_link") in frames and ("alpha/odom", "alpha/base_link") in frames
               and ("alpha/laser_link", "alpha/laser_ray_4") in fixed and ("world", "beta/odom") in fixed,
               what="prefixed frames")
    # Each robot's odom frame lies where it starts.
    assert fixed[("world", "beta/odom")].transform.translation.y == pytest.approx(3.0, abs=1e-9)
    assert fixed[("world", "alpha/odom")].transform.translation.y == pytest.approx(0.0, abs=1e-9)
    assert frames[("beta/odom", "beta/base_link")].transform.translation.y == pytest.approx(0.0, abs=1e-3)
    # The MJCF rig publishes its bodies; the ray frames turn x onto the ray (here +x).
    assert ("world", "rig/post") in fixed and ("rig/post", "rig/load") in fixed
    ray = fixed[("alpha/laser_link", "alpha/laser_ray_4")].transform.rotation
    assert (ray.x, ray.y, ray.z, ray.w) == pytest.approx((0, 0, 0, 1), abs=1e-6)
    side = fixed[("alpha/laser_link", "alpha/laser_ray_8")].transform.rotation  # +y ray
    assert (side.x, side.y, side.z, side.w) == pytest.approx((0, 0, math.sqrt(0.5), math.sqrt(0.5)), abs=1e-6)
    names = [n for n, _ in ros.get_topic_names_and_types()]
    assert "/sim/beta/imu" in names and "/sim/rig/wrist_ft" in names and "/clock" in names
    # Listing ranges keeps alpha's other kinds found in the model (its IMU, its scan); the
    # rays of beta's fan go out once, in its scan.
    assert "/sim/alpha/imu" in names and "/sim/alpha/scan" in names and "/sim/beta/scan" in names
    assert "/sim/alpha/range/range_4" in names
    assert not [n for n in names if n.startswith("/sim/beta/range")], names


def test_imu_range_and_force_torque_match_the_legacy_rows_of_the_same_step(ros, world):
    from geometry_msgs.msg import WrenchStamped

    world.console("step 250")  # settled on its wheels, paused
    imu = latest(ros, Imu, "/sim/alpha/imu")
    front = latest(ros, Range, "/sim/alpha/range/range_4")
    side = latest(ros, Range, "/sim/alpha/range/range_0")
    wrench = latest(ros, WrenchStamped, "/sim/rig/wrist_ft")
    rows = sensor_rows(world, "alpha", ["imu_orientation", "imu_angular_velocity", "imu_linear_acceleration", "range_4", "range_0"])
    rig = sensor_rows(world, "rig", ["ft_force", "ft_torque"])

    assert imu.header.frame_id == "alpha/imu_link"
    w, x, y, z = rows["imu_orientation"]
    assert (imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w) == pytest.approx((x, y, z, w), abs=1e-6)
    a = imu.linear_acceleration
    assert (a.x, a.y, a.z) == pytest.approx(rows["imu_linear_acceleration"], rel=1e-5, abs=1e-5)
    assert a.z == pytest.approx(9.81, abs=0.05), "at rest the accelerometer reads gravity's reaction"
    g = imu.angular_velocity
    assert (g.x, g.y, g.z) == pytest.approx(rows["imu_angular_velocity"], abs=1e-5)

    assert front.header.frame_id == "alpha/laser_ray_4"
    assert front.range == pytest.approx(rows["range_4"][0], rel=1e-6)
    assert 1.0 < front.range < 2.0, "the wall is 1.95 m ahead of the base"
    assert front.max_range == pytest.approx(8.0) and front.radiation_type == Range.INFRARED
    # Nothing within the cutoff: MuJoCo reports the cutoff, ROS gets +Inf (REP-117).
    assert rows["range_0"][0] == 8.0 and side.range == math.inf

    assert wrench.header.frame_id == "rig/mount"
    f, t = wrench.wrench.force, wrench.wrench.torque
    assert (f.x, f.y, f.z) == pytest.approx(rig["ft_force"], rel=1e-5, abs=1e-4)
    assert (t.x, t.y, t.z) == pytest.approx(rig["ft_torque"], rel=1e-5, abs=1e-4)
    assert abs(f.z) == pytest.approx(2.0 * 9.81, rel=0.01), "the load's weight"
    assert abs(t.y) == pytest.approx(2.0 * 9.81 * 0.1, rel=0.01), "its offset 0.1 m sideways"


def test_simulation_interfaces_services(ros, world):
    from simulation_interfaces.msg import EntityCategory, EntityFilters, Result, SimulationState, SimulatorFeatures, TagsFilter
    from simulation_interfaces.srv import (
        GetEntities, GetEntitiesStates, GetEntityState, GetSimulationState, GetSimulatorFeatures,
        ResetSimulation, SetEntityState, SetSimulationState, StepSimulation,
    )

    ns = "/sim/mujoco_bridge/"
    features = call(ros, GetSimulatorFeatures, ns + "get_simulator_features", GetSimulatorFeatures.Request()).features.features
    assert {SimulatorFeatures.STEP_SIMULATION_MULTIPLE, SimulatorFeatures.ENTITY_STATE_SETTING, SimulatorFeatures.SIMULATION_STATE_PAUSE} <= set(features)

    def state():
        return call(ros, GetSimulationState, ns + "get_simulation_state", GetSimulationState.Request()).state.state

    def set_state(target):
        return call(ros, SetSimulationState, ns + "set_simulation_state", SetSimulationState.Request(state=SimulationState(state=target))).result

    def step(n):
        return call(ros, StepSimulation, ns + "step_simulation", StepSimulation.Request(steps=n)).result

    assert state() == SimulationState.STATE_PAUSED
    assert step(100).result == Result.RESULT_OK
    assert world.stats()["time"] == pytest.approx(0.2, abs=1e-9), "exactly 100 steps of 2 ms"
    assert set_state(SimulationState.STATE_PLAYING).result == Result.RESULT_OK
    assert state() == SimulationState.STATE_PLAYING
    assert set_state(SimulationState.STATE_PLAYING).result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    refused = step(1)
    assert refused.result == Result.RESULT_OPERATION_FAILED and "paused" in refused.error_message
    assert set_state(SimulationState.STATE_PAUSED).result == Result.RESULT_OK
    assert set_state(SimulationState.STATE_STOPPED).result == Result.RESULT_OK
    assert state() == SimulationState.STATE_STOPPED and world.stats()["time"] == 0.0
    assert set_state(SimulationState.STATE_PAUSED).result == SetSimulationState.Response.INCORRECT_TRANSITION
    assert step(50).result == Result.RESULT_OK and state() == SimulationState.STATE_PAUSED
    reset = call(ros, ResetSimulation, ns + "reset_simulation", ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_ALL)).result
    assert reset.result == Result.RESULT_OK and world.stats()["time"] == 0.0

    def entities(**filters):
        response = call(ros, GetEntities, ns + "get_entities", GetEntities.Request(filters=EntityFilters(**filters)))
        assert response.result.result == Result.RESULT_OK, response.result.error_message
        return list(response.entities)

    assert entities() == ["alpha", "beta", "wall", "rig"]
    assert entities(filter="^[ab]") == ["alpha", "beta"]
    assert entities(categories=[EntityCategory(category=EntityCategory.CATEGORY_HUMAN)]) == []

    def entity(name):
        response = call(ros, GetEntityState, ns + "get_entity_state", GetEntityState.Request(entity=name))
        return response.result, response.state

    result, beta = entity("beta")
    assert result.result == Result.RESULT_OK and beta.header.frame_id == "world"
    assert (beta.pose.position.x, beta.pose.position.y, beta.pose.position.z) == pytest.approx((0, 3, 0.0805), abs=1e-9)
    assert entity("nobody")[0].result == Result.RESULT_NOT_FOUND

    request = SetEntityState.Request(entity="alpha")
    request.state.pose.position.x, request.state.pose.position.y, request.state.pose.position.z = 1.0, -1.0, 0.5
    request.state.pose.orientation.z, request.state.pose.orientation.w = math.sqrt(0.5), math.sqrt(0.5)
    request.state.twist.linear.x = 0.5
    request.state.twist.angular.z = 0.25
    result = call(ros, SetEntityState, ns + "set_entity_state", request).result
    assert result.result == Result.RESULT_OK, result.error_message
    result, alpha = entity("alpha")
    p, q = alpha.pose.position, alpha.pose.orientation
    assert (p.x, p.y, p.z) == pytest.approx((1.0, -1.0, 0.5), abs=1e-9)
    assert (q.x, q.y, q.z, q.w) == pytest.approx((0, 0, math.sqrt(0.5), math.sqrt(0.5)), abs=1e-9)
    assert alpha.twist.linear.x == pytest.approx(0.5, abs=1e-9)
    assert alpha.twist.angular.z == pytest.approx(0.25, abs=1e-9), "angular velocity given and read in the world frame"

    # Paused: the states of several entities at once are those read one by one.
    both = call(ros, GetEntitiesStates, ns + "get_entities_states", GetEntitiesStates.Request(filters=EntityFilters(filter="^(alpha|beta)$")))
    assert both.result.result == Result.RESULT_OK, both.result.error_message
    assert list(both.entities) == ["alpha", "beta"]
    assert both.states == [alpha, entity("beta")[1]]
    tagged = call(ros, GetEntitiesStates, ns + "get_entities_states", GetEntitiesStates.Request(filters=EntityFilters(tags=TagsFilter(tags=["red"]))))
    assert tagged.result.result == Result.RESULT_FEATURE_UNSUPPORTED and list(tagged.entities) == []

    request.entity = "wall"
    fixed = call(ros, SetEntityState, ns + "set_entity_state", request).result
    assert fixed.result == Result.RESULT_OPERATION_FAILED and "free joint" in fixed.error_message
    request.entity = "beta"
    request.state.pose.orientation.w = math.nan
    bad = call(ros, SetEntityState, ns + "set_entity_state", request).result
    assert bad.result == SetEntityState.Response.INVALID_POSE
    assert entity("beta")[1].pose.position.y == pytest.approx(3.0, abs=1e-9), "a refused pose changes nothing"


def test_a_wrench_message_pushes_the_body_its_frame_names(ros, world):
    from geometry_msgs.msg import WrenchStamped
    from simulation_interfaces.srv import GetEntityState

    publisher = ros.create_publisher(WrenchStamped, "/sim/mujoco_bridge/wrench", 10)
    spin_until(ros, lambda: publisher.get_subscription_count() > 0, what="the wrench subscription")
    push = WrenchStamped()
    push.header.frame_id = "beta/base_link"
    push.wrench.force.x = 300.0  # in base_link's frame, which is the world's here

    def beta_velocity():
        return call(ros, GetEntityState, "/sim/mujoco_bridge/get_entity_state", GetEntityState.Request(entity="beta")).state.twist.linear

    deadline = time.monotonic() + 20
    while beta_velocity().x < 0.2:
        assert time.monotonic() < deadline, "the wrench never moved beta"
        publisher.publish(push)
        world.console("step 10")
    assert abs(beta_velocity().y) < 0.05
    push.header.frame_id = "no_such_body"
    before = world.stats()["rejected"]
    deadline = time.monotonic() + 20
    while world.stats()["rejected"] == before:
        assert time.monotonic() < deadline, "an unknown frame was not refused"
        publisher.publish(push)
        world.console("step 1")


def test_publisher_rates_come_from_the_config(ros, world_config):
    counts = {"joint_states": 0, "imu": 0, "range": 0}
    bridge = Bridge(world_config, ["--set", "ros.rates.joint_states=0", "--set", "ros.rates.imu=200",
                                   "--set", "ros.rates.range=10"])
    try:
        ros.create_subscription(JointState, "alpha/joint_states", lambda m: counts.__setitem__("joint_states", counts["joint_states"] + 1), 10)
        ros.create_subscription(Imu, "alpha/imu", lambda m: counts.__setitem__("imu", counts["imu"] + 1), 10)
        ros.create_subscription(Range, "alpha/range/range_4", lambda m: counts.__setitem__("range", counts["range"] + 1), 10)
        spin_until(ros, lambda: counts["imu"] >= 400 and counts["range"] >= 1, what="imu and range messages")
        assert counts["joint_states"] == 0, "rate 0 turns a publisher off"
        assert counts["imu"] > 5 * counts["range"], counts
    finally:
        bridge.close()


def test_a_sensor_mapping_that_names_a_missing_sensor_is_refused_with_its_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(WORLD.replace("torque: ft_torque}", "torque: ft_force}"))
    run = subprocess.run([BINARY, "--config", str(path), "--steps", "1"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "robots[3].ros.force_torque[0].torque: sensor 'ft_force' is not a torque sensor" in run.stderr
    assert str(path) in run.stderr
