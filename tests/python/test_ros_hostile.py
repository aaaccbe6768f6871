"""What a peer on the ROS domain may send, and what it gets: single messages that once killed
or froze the process (a huge joint_trajectory, a deeply nested or very large spawn text, a
model that shrinks the arena, a NaN control range, a pose of 1e308 m) are answered or
refused and the bridge steps on; FollowJointTrajectory and GripperCommand goals are
checked when they arrive and rejected as joint_trajectory_controller does; cancels of
ended goals get the normal answer with no ERROR line; requests stay in their lane (files
only under the allowed folders, no environment substitution, bounds on poses, velocities
and wrenches, world changes can be turned off); the legacy control socket drops a peer that
sends too much. Runs against both backends in the suite's private network namespace."""
import os
import time

import pytest
import zmq

rclpy = pytest.importorskip("rclpy")
from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory, GripperCommand  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from conftest import REPO, Bridge, call, latest_message, spin_until  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

SERVICES = "/mujoco_bridge/"
BOX = """<mujoco model="box"><worldbody>
  <body name="crate"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
</worldbody></mujoco>"""
BEST_EFFORT = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)


@pytest.fixture
def bridge(tmp_path, monkeypatch):
    # A value of the server's environment that no answer may carry.
    monkeypatch.setenv("MUJOCO_BRIDGE_SECRET", "hunter2")
    bridge = Bridge("default.yaml", extra_args=["--set", f'requests.file_roots=["{tmp_path}"]'])
    yield bridge
    bridge.close()


def spawn(ros, name, text="", uri="", xyz=(0.0, 0.0, 0.5), timeout=60):
    from simulation_interfaces.srv import SpawnEntity

    request = SpawnEntity.Request(name=name, uri=str(uri), resource_string=text)
    request.initial_pose.header.frame_id = "world"
    p = request.initial_pose.pose
    p.position.x, p.position.y, p.position.z = xyz
    p.orientation.w = 1.0
    started = time.monotonic()
    response = call(ros, SpawnEntity, SERVICES + "spawn_entity", request, timeout=timeout)
    return response.result, time.monotonic() - started


def steps_on(bridge, ros):
    """The bridge is alive and steps: the console steps it, /clock follows."""
    before = bridge.stats()["steps"]
    bridge.console("step 100")
    assert bridge.stats()["steps"] == before + 100
    latest_message(ros, Clock, "/clock", qos=BEST_EFFORT)


def test_single_messages_that_killed_or_froze_the_process_are_answered(ros, bridge):
    from simulation_interfaces.msg import Result, SpawnResult

    # ~6 MB: 200 000 empty joint names and as many empty points (it asked for 320 GB).
    huge = JointTrajectory(joint_names=[""] * 200_000)
    huge.points = [JointTrajectoryPoint() for _ in range(200_000)]
    publisher = ros.create_publisher(JointTrajectory, "/joint_trajectory", 10)
    spin_until(ros, lambda: publisher.get_subscription_count() > 0, what="the bridge's joint_trajectory")
    publisher.publish(huge)
    bridge.wait_for("rejected", 1, timeout=60)
    steps_on(bridge, ros)

    nested = "<mujoco>" + "<a>" * 60_000 + "</a>" * 60_000 + "</mujoco>"
    result, took = spawn(ros, "deep", text=nested)
    print(f"60 000 nested elements: {result.error_message[:120]!r} in {took:.2f} s")
    assert result.result == SpawnResult.RESOURCE_PARSE_ERROR and "nested deeper" in result.error_message
    assert took < 10

    large = "<mujoco>" + "<!-- filler -->" * 700_000 + "</mujoco>"
    result, took = spawn(ros, "large", text=large)
    print(f"{len(large)} bytes: {result.error_message[:120]!r} in {took:.2f} s")
    assert result.result == SpawnResult.RESOURCE_PARSE_ERROR and "limits.resource_bytes" in result.error_message
    assert took < 10

    bomb = '<!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><mujoco>&b;</mujoco>'
    result, _ = spawn(ros, "bomb", text=bomb)
    assert result.result == SpawnResult.RESOURCE_PARSE_ERROR and "entity" in result.error_message

    nan_range = ("<mujoco><worldbody><body name='b' pos='0 0 1'><joint name='j'/><geom size='.1' mass='1'/>"
                 "</body></worldbody><actuator><motor name='m' joint='j' ctrlrange='nan 1'/></actuator></mujoco>")
    result, _ = spawn(ros, "nanbot", text=nan_range)
    print(f"ctrlrange='nan 1': {result.error_message}")
    assert result.result == SpawnResult.RESOURCE_PARSE_ERROR and "ctrlrange" in result.error_message
    steps_on(bridge, ros)

    result, _ = spawn(ros, "far", text=BOX, xyz=(1e308, 0.0, 0.0))
    assert result.result == SpawnResult.INVALID_POSE and "world_bound" in result.error_message, result.error_message

    # A spawned model that asks for an 8 KB arena does not shrink the world's.
    small = BOX.replace('<mujoco model="box">', '<mujoco model="box"><size memory="8K"/>')
    result, _ = spawn(ros, "smallbox", text=small)
    assert result.result == Result.RESULT_OK, result.error_message
    bridge.console("step 2000", timeout=120)
    steps_on(bridge, ros)
    log = bridge.log_so_far()
    assert "panicked" not in log and "out of memory" not in log


def send_goal(ros, client, goal):
    sent = client.send_goal_async(goal)
    spin_until(ros, sent.done, what="goal answered")
    return sent.result()


def trajectory_goal(names, points):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = names
    goal.trajectory.points = [JointTrajectoryPoint(positions=p, time_from_start=Duration(sec=s, nanosec=n))
                              for p, (s, n) in points]
    return goal


def test_goals_are_checked_when_they_arrive_and_cancels_of_ended_goals_are_answered(ros, bridge):
    from action_msgs.srv import CancelGoal

    bridge.console("realtime")
    client = ActionClient(ros, FollowJointTrajectory, "/arm_controller/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=30)
    nan = float("nan")
    one = (1, 0)
    bad = {
        "NaN position": trajectory_goal(["arm_elbow"], [([nan], one)]),
        "1e30 position": trajectory_goal(["arm_elbow"], [([1e30], one)]),
        "outside the limits": trajectory_goal(["arm_elbow"], [([100.0], one)]),
        "time going back": trajectory_goal(["arm_elbow"], [([0.1], (2, 0)), ([0.2], (1, 0))]),
        "fewer positions": trajectory_goal(["arm_elbow", "arm_wrist"], [([0.1], one)]),
        "unknown joint": trajectory_goal(["no_such_joint"], [([0.1], one)]),
        "repeated joint": trajectory_goal(["arm_elbow", "arm_elbow"], [([0.1, 0.1], one)]),
    }
    for what, goal in bad.items():
        assert not send_goal(ros, client, goal).accepted, what
    log = bridge.log_so_far()
    for code in ["INVALID_GOAL (-1)", "INVALID_JOINTS (-2)"]:
        assert f"goal rejected: {code}" in log, log[-3000:]
    gripper = ActionClient(ros, GripperCommand, "/gripper_controller/gripper_cmd")
    assert gripper.wait_for_server(timeout_sec=30)
    grip = GripperCommand.Goal()
    grip.command.position = nan
    assert not send_goal(ros, gripper, grip).accepted

    # A goal the controller can follow runs to its end; cancels after that are answered.
    handle = send_goal(ros, client, trajectory_goal(["arm_elbow"], [([0.8], (0, 500_000_000))]))
    assert handle.accepted
    result = handle.get_result_async()
    spin_until(ros, result.done, timeout=60, what="goal result")
    assert result.result().result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    for _ in range(20):
        answered = handle.cancel_goal_async()
        spin_until(ros, answered.done, what="cancel answered")
        assert answered.result().return_code in (CancelGoal.Response.ERROR_GOAL_TERMINATED,
                                                 CancelGoal.Response.ERROR_REJECTED), answered.result()
    # A goal canceled while it runs ends canceled; a cancel right as a new goal preempts it
    # is answered too.
    for _ in range(10):
        first = send_goal(ros, client, trajectory_goal(["arm_elbow"], [([0.2], (2, 0))]))
        cancel = first.cancel_goal_async()
        second = send_goal(ros, client, trajectory_goal(["arm_elbow"], [([0.6], (2, 0))]))
        spin_until(ros, cancel.done, what="cancel answered")
        assert second.accepted
    bridge.console("pause")
    time.sleep(1.0)
    errors = [line for line in bridge.log_so_far().splitlines() if "ERROR" in line]
    assert errors == [], errors


def test_requests_stay_in_their_lane(ros, bridge, tmp_path):
    from rcl_interfaces.srv import SetParameters  # noqa: F401
    from simulation_interfaces.msg import Result, SpawnResult
    from simulation_interfaces.srv import GetAvailableWorlds, GetSpawnables, LoadWorld, SetEntityState

    # A file outside the allowed folders is not read, even a model; one inside is.
    outside = REPO / ".deps" / "hostile-test"
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "box.xml").write_text(BOX)
    result, _ = spawn(ros, "outbox", uri=outside / "box.xml")
    assert result.result == SpawnResult.NO_RESOURCE and "outside" in result.error_message, result.error_message
    (tmp_path / "box.xml").write_text(BOX)
    result, _ = spawn(ros, "inbox", uri=tmp_path / "box.xml")
    assert result.result == Result.RESULT_OK, result.error_message
    # A model text naming a file outside: refused before MuJoCo opens it.
    result, _ = spawn(ros, "peek", text="<mujoco><asset><mesh file='/etc/passwd'/></asset></mujoco>")
    assert result.result != Result.RESULT_OK and "outside" in result.error_message, result.error_message
    # No environment substitution in a request: the server's environment never reaches the
    # peer (the text comes back as written).
    # (A collision mesh: a missing one is an error that names it; a missing visual is left out.)
    urdf = ("<robot name='envy'><link name='base'><collision><geometry>"
            "<mesh filename='$(env MUJOCO_BRIDGE_SECRET)/nothing.stl'/></geometry></collision></link></robot>")
    result, _ = spawn(ros, "envy", text=urdf)
    print(f"$(env ...) in a URDF text: {result.error_message}")
    assert result.result != Result.RESULT_OK
    assert "$(env MUJOCO_BRIDGE_SECRET)" in result.error_message and "hunter2" not in result.error_message
    loaded = call(ros, LoadWorld, SERVICES + "load_world",
                  LoadWorld.Request(uri="${MUJOCO_BRIDGE_SECRET}/world.yaml"))
    assert loaded.result.result == LoadWorld.Response.NO_RESOURCE
    assert "${MUJOCO_BRIDGE_SECRET}" in loaded.result.error_message
    assert "hunter2" not in loaded.result.error_message
    # Listing another folder of the machine is refused.
    listed = call(ros, GetAvailableWorlds, SERVICES + "get_available_worlds",
                  GetAvailableWorlds.Request(additional_sources=["/etc"]))
    assert listed.result.result != Result.RESULT_OK and "outside" in listed.result.error_message
    assert listed.worlds == []
    spawnables = call(ros, GetSpawnables, SERVICES + "get_spawnables", GetSpawnables.Request(sources=["/"]))
    assert spawnables.result.result != Result.RESULT_OK and spawnables.spawnables == []
    # An entity state beyond the world bound or the speed bound is refused.
    state = SetEntityState.Request(entity="inbox")
    state.state.pose.position.x = 1e308
    state.state.pose.orientation.w = 1.0
    refused = call(ros, SetEntityState, SERVICES + "set_entity_state", state)
    assert refused.result.result != Result.RESULT_OK and "world_bound" in refused.result.error_message
    state.state.pose.position.x = 1.0
    state.state.twist.linear.x = 1e9
    refused = call(ros, SetEntityState, SERVICES + "set_entity_state", state)
    assert refused.result.result != Result.RESULT_OK and "speed_bound" in refused.result.error_message
    steps_on(bridge, ros)


def test_world_changes_can_be_turned_off(ros):
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import DeleteEntity

    bridge = Bridge("default.yaml", extra_args=["--set", "requests.world_changes=false"])
    try:
        result, _ = spawn(ros, "box", text=BOX)
        assert result.result == Result.RESULT_OPERATION_FAILED and "turned off" in result.error_message
        deleted = call(ros, DeleteEntity, SERVICES + "delete_entity", DeleteEntity.Request(entity="mobile"))
        assert deleted.result.result == Result.RESULT_OPERATION_FAILED
        assert bridge.stats()["generation"] == 0
    finally:
        bridge.close()


def test_the_legacy_control_socket_drops_a_peer_that_sends_too_much(bridge):
    # A client the bridge hears (control_socket waits for that), which then sends too much.
    flood = bridge.control_socket("mobile")
    before = bridge.stats()["zmq_received"]
    for _ in range(5):
        flood.send_multipart([b"mobile/control ", b"\0" * (2 << 20)])  # 2 MB, the limit is 1 MB
    time.sleep(1.0)
    # Nothing of it arrived (ZMQ dropped the connection); a well-behaved client is heard.
    assert bridge.stats()["zmq_received"] == before
    flood.close()
    pub = bridge.control_socket("mobile")
    assert bridge.stats()["zmq_received"] > before
    pub.close()
    bridge.console("step 10")
