"""A world that changes while it runs, through simulation_interfaces and rclpy: a Panda and
a box spawned into the running default world get joint_states, tf frames and a
FollowJointTrajectory server; the default robot's state is bit-identical across the spawn;
deleting the box removes its topics; every spawn error code comes from a broken input and
leaves the world as it was; load_world replaces the world and leaves it paused. Runs in the
suite's private network namespace with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST."""
import os
import pathlib

import pytest

rclpy = pytest.importorskip("rclpy")
from action_msgs.msg import GoalStatus  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from conftest import REPO, Bridge, call, latest_message, spin_until  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

MODELS = pathlib.Path(os.environ.get("MUJOCO_BRIDGE_MODELS", REPO / ".deps" / "models"))
PANDA = MODELS / "menagerie" / "franka_emika_panda" / "panda.xml"
BOX = """<mujoco model="box"><worldbody>
  <body name="crate"><freejoint name="float"/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
</worldbody></mujoco>"""
SERVICES = "/mujoco_bridge/"


@pytest.fixture
def bridge(tmp_path):
    """The default world, paused; spawns may read the test's own folder."""
    bridge = Bridge("default.yaml", extra_args=["--set", f'requests.file_roots=["{tmp_path}"]'])
    yield bridge
    bridge.close()


def spawn_request(name, uri="", text="", xyz=(0.0, 0.0, 0.0), quat_xyzw=(0.0, 0.0, 0.0, 1.0), namespace=""):
    from simulation_interfaces.srv import SpawnEntity

    request = SpawnEntity.Request(name=name, uri=str(uri), resource_string=text, entity_namespace=namespace)
    request.initial_pose.header.frame_id = "world"
    p, q = request.initial_pose.pose.position, request.initial_pose.pose.orientation
    p.x, p.y, p.z = xyz
    q.x, q.y, q.z, q.w = quat_xyzw
    return request


def spawn(ros, request):
    from simulation_interfaces.srv import SpawnEntity

    return call(ros, SpawnEntity, SERVICES + "spawn_entity", request, timeout=120)


def topics_under(ros, prefix):
    return sorted(name for name, _ in ros.get_topic_names_and_types() if name.startswith(prefix))


def current_world(ros):
    from simulation_interfaces.srv import GetCurrentWorld

    return call(ros, GetCurrentWorld, SERVICES + "get_current_world", GetCurrentWorld.Request()).world


def test_spawn_keeps_the_running_robot_and_the_spawned_ones_are_full_robots(ros, bridge):
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import DeleteEntity, GetSimulatorFeatures

    features = call(ros, GetSimulatorFeatures, SERVICES + "get_simulator_features", GetSimulatorFeatures.Request())
    assert {"mjcf", "urdf", "xacro", "yaml"} <= set(features.features.spawn_formats)
    bridge.console("step 300")
    before = latest_message(ros, JointState, "/joint_states")
    assert len(before.name) > 0
    response = spawn(ros, spawn_request("panda", uri=PANDA, xyz=(1.5, 0.0, 0.0)))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    assert response.entity_name == "panda"
    response = spawn(ros, spawn_request("box", text=BOX, xyz=(0.0, 1.5, 0.5)))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    # Paused throughout: the default robot's joints are exactly where they were.
    after = latest_message(ros, JointState, "/joint_states")
    assert list(after.name) == list(before.name)
    assert list(after.position) == list(before.position)
    assert list(after.velocity) == list(before.velocity)
    from simulation_interfaces.msg import EntityCategory, EntityFilters
    from simulation_interfaces.srv import GetEntities

    def entities(category):
        filters = EntityFilters(categories=[EntityCategory(category=category)])
        return list(call(ros, GetEntities, SERVICES + "get_entities", GetEntities.Request(filters=filters)).entities)

    assert entities(EntityCategory.CATEGORY_ROBOT) == ["mobile", "panda"]
    # The parameters follow: the spawned robots' config fields are declared.
    from rcl_interfaces.srv import GetParameters

    names = call(ros, GetParameters, SERVICES + "get_parameters",
                 GetParameters.Request(names=["robots.0.name", "robots.1.name", "robots.2.name"])).values
    assert [v.string_value for v in names] == ["mobile", "panda", "box"]
    assert entities(EntityCategory.CATEGORY_DYNAMIC_OBJECT) == ["box"]
    # The default robot's camera renders the new world (its render thread followed it).
    from sensor_msgs.msg import Image

    frame = latest_message(ros, Image, "/front/image_raw", timeout=90)
    assert frame.width > 0 and len(frame.data) == frame.step * frame.height
    # The Panda is a full robot under its name: joint states, tf frames, trajectory action.
    panda = latest_message(ros, JointState, "/panda/joint_states")
    assert "joint1" in panda.name and len(panda.name) >= 7
    frames, tf_messages = set(), []

    def on_tf(message):
        frames.update(t.child_frame_id for t in message.transforms)
        tf_messages.append(message)

    ros.create_subscription(TFMessage, "/tf", on_tf, 10)
    bridge.console("realtime")
    spin_until(ros, lambda: any(f.startswith("panda/") for f in frames) and any(f.startswith("box/") for f in frames),
               what="tf frames of the panda and the box")
    client = ActionClient(ros, FollowJointTrajectory, "/panda/joint_trajectory_controller/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=30)
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ["joint1"]
    goal.trajectory.points = [JointTrajectoryPoint(positions=[0.4], time_from_start=Duration(sec=1))]
    sent = client.send_goal_async(goal)
    spin_until(ros, sent.done, what="goal accepted")
    assert sent.result().accepted
    result = sent.result().get_result_async()
    spin_until(ros, result.done, timeout=60, what="goal result")
    assert result.result().result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    moved = latest_message(ros, JointState, "/panda/joint_states")
    assert abs(moved.position[list(moved.name).index("joint1")] - 0.4) < 0.05
    # Delete the box: its topics go, the rest stays.
    box_topics = topics_under(ros, "/box/")
    assert box_topics, "the box publishes under /box/"
    deleted = call(ros, DeleteEntity, SERVICES + "delete_entity", DeleteEntity.Request(entity="box"), timeout=120)
    assert deleted.result.result == Result.RESULT_OK, deleted.result.error_message
    # Nothing is published for the box any more...
    late = []
    listener = ros.create_subscription(JointState, "/box/joint_states", late.append, 10)
    # The bridge publishes the box's last tf before it answers, but a reader may still
    # hold those (another topic, no order between them): up to its depth of 10. Those
    # go by before the frames are looked at.
    seen = len(tf_messages)
    spin_until(ros, lambda: len(tf_messages) > seen + 12, what="tf after the delete's answer")
    frames.clear()
    spin_until(ros, lambda: any(f.startswith("panda/") for f in frames), what="tf after the delete")
    assert not any(f.startswith("box/") for f in frames)
    late.clear()
    seen = len(tf_messages)
    spin_until(ros, lambda: len(tf_messages) > seen + 20, what="more tf")
    assert late == []
    ros.destroy_subscription(listener)
    # ... and rcl destroys its publishers: the topics leave the graph. (ros2-client keeps
    # a dropped writer in the graph that rmw_fastrtps sees: RustDDS's dispose of it does
    # not reach Fast DDS's discovery, so the DDS build is not held to this.)
    if os.environ.get("MUJOCO_BRIDGE_BACKEND") == "r2r":
        spin_until(ros, lambda: not topics_under(ros, "/box/joint_states"), what="the box's joint_states to go")
    gone = call(ros, DeleteEntity, SERVICES + "delete_entity", DeleteEntity.Request(entity="box"))
    assert gone.result.result == Result.RESULT_NOT_FOUND
    # The name can be used again.
    again = spawn(ros, spawn_request("box", text=BOX, xyz=(0.0, -1.5, 0.5)))
    assert again.result.result == Result.RESULT_OK, again.result.error_message
    # A deleted robot's action answers no more goals; spawned again, it serves them again
    # (one server per action name, taken over by the new robot).
    deleted = call(ros, DeleteEntity, SERVICES + "delete_entity", DeleteEntity.Request(entity="panda"), timeout=120)
    assert deleted.result.result == Result.RESULT_OK, deleted.result.error_message

    def run_goal(position):
        goal.trajectory.points = [JointTrajectoryPoint(positions=[position], time_from_start=Duration(sec=1))]
        sent = client.send_goal_async(goal)
        spin_until(ros, sent.done, what="goal answered")
        if not sent.result().accepted:
            return None
        result = sent.result().get_result_async()
        spin_until(ros, result.done, timeout=60, what="goal result")
        return result.result()

    gone = run_goal(0.2)
    assert gone is None or gone.status == GoalStatus.STATUS_ABORTED
    response = spawn(ros, spawn_request("panda", uri=PANDA, xyz=(1.5, 0.0, 0.0)))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    back = run_goal(-0.3)
    assert back.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    bridge.console("pause")


# A swinging arm with a damped position servo (its joint range in degrees, as MJCF reads it).
ARM = """<mujoco model="arm"><worldbody>
  <body name="link"><joint name="swing" axis="0 0 1" range="-100 100"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/></body>
</worldbody><actuator><position name="swing" joint="swing" kp="50" kv="3" ctrlrange="-2 2"/></actuator></mujoco>"""


def test_a_robot_spawned_again_takes_its_subscriptions_over(ros, bridge):
    """A deleted robot's command subscriptions do not pile up: spawned again under its name,
    it has one subscription per command topic, and it follows the commands that arrive; the
    replaced worlds go, one live world is left."""
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import DeleteEntity

    for _ in range(4):
        response = spawn(ros, spawn_request("arm", text=ARM, xyz=(0.0, 1.5, 0.5)))
        assert response.result.result == Result.RESULT_OK, response.result.error_message
        deleted = call(ros, DeleteEntity, SERVICES + "delete_entity", DeleteEntity.Request(entity="arm"), timeout=120)
        assert deleted.result.result == Result.RESULT_OK, deleted.result.error_message
    response = spawn(ros, spawn_request("arm", text=ARM, xyz=(0.0, 1.5, 0.5)))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    commands = ros.create_publisher(JointState, "/arm/joint_commands", 10)
    topics = ["/arm/cmd_vel", "/arm/joint_commands", "/arm/joint_trajectory"]
    spin_until(ros, lambda: all(ros.count_subscribers(t) >= 1 for t in topics), what="the arm's subscriptions")
    # Five spawns of the arm, one subscription per topic (before: one more per spawn). The
    # DDS build frees a dropped reader, but RustDDS's dispose of it does not reach Fast
    # DDS's discovery (as for writers, above), so the graph rclpy sees is not its measure.
    if os.environ.get("MUJOCO_BRIDGE_BACKEND") == "r2r":
        counts = {t: ros.count_subscribers(t) for t in topics}
        assert counts == {t: 1 for t in topics}, counts
    states = []
    ros.create_subscription(JointState, "/arm/joint_states", states.append, 10)
    bridge.console("realtime")

    def at_target():
        commands.publish(JointState(name=["swing"], position=[0.8]))
        if not states:
            return False
        k = list(states[-1].name).index("swing")
        return abs(states[-1].position[k] - 0.8) < 0.02 and abs(states[-1].velocity[k]) < 0.05

    spin_until(ros, at_target, timeout=30, what="the arm at rest at 0.8 rad")
    # Nor do the worlds: with no parameter, snapshot or camera request since, the replaced
    # ones go (the parameter table held the start's world until its next request).
    from diagnostic_msgs.msg import DiagnosticArray

    diagnostics = []
    ros.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)

    def live_worlds():
        values = [v for m in diagnostics[-1:] for s in m.status for v in s.values if v.key == "live_worlds"]
        return int(values[0].value) if values else None

    spin_until(ros, lambda: live_worlds() is not None, timeout=30, what="/diagnostics")
    spin_until(ros, lambda: live_worlds() == 1, timeout=15, what=f"one live world (last: {live_worlds()})")
    bridge.console("pause")


def test_every_spawn_error_code_leaves_the_world_as_it_was(ros, bridge, tmp_path):
    from simulation_interfaces.msg import SpawnResult

    broken_mesh = tmp_path / "broken.xml"
    broken_mesh.write_text(
        "<mujoco><asset><mesh name='m' file='missing.stl'/></asset>"
        "<worldbody><body><geom type='mesh' mesh='m'/></body></worldbody></mujoco>")
    world_before = current_world(ros)
    before = latest_message(ros, JointState, "/joint_states")
    cases = [
        (spawn_request("empty"), SpawnResult.NO_RESOURCE),
        (spawn_request("nowhere", uri=tmp_path / "nowhere.urdf"), SpawnResult.NO_RESOURCE),
        (spawn_request("mobile", text=BOX), SpawnResult.NAME_NOT_UNIQUE),
        (spawn_request("9lives", text=BOX), SpawnResult.NAME_INVALID),
        (spawn_request("boxy", text=BOX, namespace="bad ns"), SpawnResult.NAMESPACE_INVALID),
        (spawn_request("sdf", text="<sdf version='1.9'><model name='m'/></sdf>"), SpawnResult.UNSUPPORTED_FORMAT),
        (spawn_request("web", uri="https://example.com/robot.urdf"), SpawnResult.UNSUPPORTED_FORMAT),
        (spawn_request("torn", text="<mujoco><worldbody>"), SpawnResult.RESOURCE_PARSE_ERROR),
        (spawn_request("meshless", uri=broken_mesh), SpawnResult.MISSING_ASSETS),
        (spawn_request("tilted", text=BOX, quat_xyzw=(0.0, 0.0, 0.5, 0.5)), SpawnResult.INVALID_POSE),
        (spawn_request("lost", text=BOX, xyz=(float("nan"), 0.0, 0.0)), SpawnResult.INVALID_POSE),
    ]
    for request, code in cases:
        response = spawn(ros, request)
        assert response.result.result == code, (request.name, response.result.error_message)
        assert response.result.error_message, request.name
    assert "missing.stl" in spawn(ros, cases[8][0]).result.error_message
    assert current_world(ros).description == world_before.description
    after = latest_message(ros, JointState, "/joint_states")
    assert list(after.position) == list(before.position)


def test_load_world_replaces_the_world_and_leaves_it_paused(ros, bridge):
    from simulation_interfaces.msg import Result, SimulationState
    from simulation_interfaces.srv import GetAvailableWorlds, GetSimulationState, LoadWorld

    worlds = call(ros, GetAvailableWorlds, SERVICES + "get_available_worlds", GetAvailableWorlds.Request()).worlds
    by_name = {w.name: w.world_resource.uri for w in worlds}
    assert {"default", "panda", "go1"} <= set(by_name), by_name
    bridge.console("realtime")
    loaded = call(ros, LoadWorld, SERVICES + "load_world", LoadWorld.Request(uri=by_name["panda"]), timeout=120)
    assert loaded.result.result == Result.RESULT_OK, loaded.result.error_message
    assert loaded.world.name == "panda"
    assert current_world(ros).name == "panda"
    state = call(ros, GetSimulationState, SERVICES + "get_simulation_state", GetSimulationState.Request())
    assert state.state.state == SimulationState.STATE_STOPPED
    # The Panda is the world's only robot: its topics are the unprefixed ones.
    assert "joint1" in latest_message(ros, JointState, "/joint_states").name
    missing = call(ros, LoadWorld, SERVICES + "load_world", LoadWorld.Request(uri="/nonexistent/world.yaml"))
    assert missing.result.result == LoadWorld.Response.NO_RESOURCE
    assert "/nonexistent/world.yaml" in missing.result.error_message
    assert current_world(ros).name == "panda"


def test_entity_info_bounds_named_poses_and_simulate_steps(ros, bridge):
    from simulation_interfaces.action import SimulateSteps
    from simulation_interfaces.msg import Bounds, EntityCategory, EntityInfo, Result, TagsFilter
    from simulation_interfaces.srv import (
        GetEntityBounds, GetEntityInfo, GetNamedPoseBounds, GetNamedPoses, SetEntityInfo,
    )

    response = spawn(ros, spawn_request("box", text=BOX, xyz=(0.0, 1.5, 0.5)))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    info = call(ros, GetEntityInfo, SERVICES + "get_entity_info", GetEntityInfo.Request(entity="box"))
    assert info.result.result == Result.RESULT_OK
    assert info.info.category.category == EntityCategory.CATEGORY_DYNAMIC_OBJECT
    robot = call(ros, GetEntityInfo, SERVICES + "get_entity_info", GetEntityInfo.Request(entity="mobile")).info
    assert robot.category.category == EntityCategory.CATEGORY_ROBOT and "mobile_manipulator.urdf" in robot.description
    given = EntityInfo(category=EntityCategory(category=EntityCategory.CATEGORY_STATIC_OBJECT),
                       description="a crate", tags=["cargo"])
    assert call(ros, SetEntityInfo, SERVICES + "set_entity_info",
                SetEntityInfo.Request(entity="box", info=given)).result.result == Result.RESULT_OK
    info = call(ros, GetEntityInfo, SERVICES + "get_entity_info", GetEntityInfo.Request(entity="box")).info
    assert (info.description, list(info.tags)) == ("a crate", ["cargo"])
    missing = call(ros, GetEntityInfo, SERVICES + "get_entity_info", GetEntityInfo.Request(entity="ghost"))
    assert missing.result.result == Result.RESULT_NOT_FOUND
    # The box's bounds in its own frame: its 0.2 m cube.
    bounds = call(ros, GetEntityBounds, SERVICES + "get_entity_bounds", GetEntityBounds.Request(entity="box")).bounds
    assert bounds.type == Bounds.TYPE_BOX and len(bounds.points) == 2
    upper, lower = bounds.points
    assert (upper.x, upper.y, upper.z) == pytest.approx((0.1, 0.1, 0.1), abs=1e-9)
    assert (lower.x, lower.y, lower.z) == pytest.approx((-0.1, -0.1, -0.1), abs=1e-9)
    # Keyframes are the named poses: the default robot's `ready`, with its root pose.
    poses = call(ros, GetNamedPoses, SERVICES + "get_named_poses", GetNamedPoses.Request()).poses
    ready = next(p for p in poses if p.name == "mobile_ready")
    assert "keyframe" in ready.tags and "mobile" in ready.tags
    assert ready.pose.position.z == pytest.approx(0.0805)
    tagged = call(ros, GetNamedPoses, SERVICES + "get_named_poses",
                  GetNamedPoses.Request(tags=TagsFilter(tags=["nothing"]))).poses
    assert list(tagged) == []
    pose_bounds = call(ros, GetNamedPoseBounds, SERVICES + "get_named_pose_bounds",
                       GetNamedPoseBounds.Request(name="mobile_ready"))
    assert pose_bounds.result.result == Result.RESULT_OK and pose_bounds.bounds.type == Bounds.TYPE_EMPTY
    unknown = call(ros, GetNamedPoseBounds, SERVICES + "get_named_pose_bounds", GetNamedPoseBounds.Request(name="x"))
    assert unknown.result.result == Result.RESULT_NOT_FOUND
    # SimulateSteps: 250 steps while paused, with feedback.
    steps_before = bridge.stats()["steps"]
    client = ActionClient(ros, SimulateSteps, SERVICES + "simulate_steps")
    assert client.wait_for_server(timeout_sec=30)
    feedback = []
    sent = client.send_goal_async(SimulateSteps.Goal(steps=250), feedback_callback=lambda f: feedback.append(f.feedback))
    spin_until(ros, sent.done, what="simulate_steps accepted")
    result = sent.result().get_result_async()
    spin_until(ros, result.done, timeout=60, what="simulate_steps result")
    assert result.result().result.result.result == Result.RESULT_OK
    assert bridge.stats()["steps"] == steps_before + 250
    spin_until(ros, lambda: feedback and feedback[-1].remaining_steps == 0, what="the last feedback")
    assert feedback[-1].completed_steps == 250


def test_unload_world_then_spawn_into_the_empty_world(ros, bridge):
    from simulation_interfaces.msg import Result, SimulationState
    from simulation_interfaces.srv import GetCurrentWorld, GetEntities, GetSimulationState, LoadWorld, UnloadWorld

    unloaded = call(ros, UnloadWorld, SERVICES + "unload_world", UnloadWorld.Request(), timeout=120)
    assert unloaded.result.result == Result.RESULT_OK, unloaded.result.error_message
    again = call(ros, UnloadWorld, SERVICES + "unload_world", UnloadWorld.Request())
    assert again.result.result == UnloadWorld.Response.NO_WORLD_LOADED
    none = call(ros, GetCurrentWorld, SERVICES + "get_current_world", GetCurrentWorld.Request())
    assert none.result.result == GetCurrentWorld.Response.NO_WORLD_LOADED
    state = call(ros, GetSimulationState, SERVICES + "get_simulation_state", GetSimulationState.Request())
    assert state.state.state == SimulationState.STATE_NO_WORLD
    assert list(call(ros, GetEntities, SERVICES + "get_entities", GetEntities.Request()).entities) == []
    # Something spawned into the empty world; then a world loaded over it.
    response = spawn(ros, spawn_request("box", text=BOX, xyz=(0.0, 0.0, 0.5)))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    assert list(call(ros, GetEntities, SERVICES + "get_entities", GetEntities.Request()).entities) == ["box"]
    loaded = call(ros, LoadWorld, SERVICES + "load_world",
                  LoadWorld.Request(uri=str(REPO / "config" / "default.yaml")), timeout=120)
    assert loaded.result.result == Result.RESULT_OK, loaded.result.error_message
    assert "left_wheel_joint" in latest_message(ros, JointState, "/joint_states").name
    assert list(call(ros, GetEntities, SERVICES + "get_entities", GetEntities.Request()).entities) == ["mobile"]
