"""ros2_control's own tools against the bridge's controller manager: the real `spawner`
(through `ros2 run controller_manager spawner`, as launch files start it) loads, configures
and activates controllers a robot's controllers file declares; `ros2 control
list_controllers` lists them with their types, states and claimed interfaces; a forward
command controller moves the joints while active and not once deactivated; an unknown type
and a controller that names an interface its joint lacks are refused one by one while the
others run; a joint_trajectory_controller takes goals only while active and its claims bar a
second controller of its joints; the spawner's `-p FILE` declares a controller through the
manager's parameters. Runs in the suite's private network namespace with LOCALHOST discovery."""
import math
import os
import re
import time

import pytest

rclpy = pytest.importorskip("rclpy")
from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory, GripperCommand, ParallelGripperCommand  # noqa: E402
from control_msgs.msg import DynamicJointState, JointTolerance, JointTrajectoryControllerState  # noqa: E402
from controller_manager_msgs.srv import SwitchController  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from conftest import Bridge, call, latest_message, needs_ros2_cli, ros2, spin_until  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("MUJOCO_BRIDGE_ROS") != "1", reason="the binary was built without the ros feature"
)

# For the embedded default robot: its arm joints are position servos, its wheels velocity
# servos.
CONTROLLERS = """\
controller_manager:
  ros__parameters:
    update_rate: 100
    joint_state_broadcaster:
      type: joint_state_broadcaster/JointStateBroadcaster
    arm_controller:
      type: position_controllers/JointGroupPositionController
    io_and_status_controller:
      type: ur_controllers/GPIOController
    wheel_as_position_controller:
      type: position_controllers/JointGroupPositionController
    arm_trajectory_controller:
      type: joint_trajectory_controller/JointTrajectoryController
    finger_gripper:
      type: position_controllers/GripperActionController
    finger_parallel:
      type: parallel_gripper_action_controller/GripperActionController
finger_parallel:
  ros__parameters:
    joint: finger_left_joint
    goal_tolerance: 0.003
finger_gripper:
  ros__parameters:
    joint: finger_left_joint
    goal_tolerance: 0.003
arm_trajectory_controller:
  ros__parameters:
    joints: [arm_shoulder_yaw, arm_shoulder_pitch, arm_elbow, arm_wrist]
    command_interfaces: [position]
    state_interfaces: [position, velocity]
    constraints:
      goal_time: 2.0
      arm_shoulder_yaw: {goal: 0.03}
arm_controller:
  ros__parameters:
    joints: [arm_shoulder_yaw, arm_elbow]
wheel_as_position_controller:
  ros__parameters:
    joints: [left_wheel_joint]
"""


def spawner(*names, check=True):
    return ros2("run", "controller_manager", "spawner", *names, "--controller-manager-timeout", "30",
                timeout=120, check=check)


def listed():
    """`ros2 control list_controllers --claimed-interfaces` without its colours: name -> (type, state)."""
    out = ros2("control", "list_controllers", "--claimed-interfaces").stdout
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and not line.startswith("\t"):
            rows[parts[0]] = (parts[1], parts[2])
    return rows, out


def arm_position(node):
    message = latest_message(node, JointState, "/joint_states")
    return dict(zip(message.name, message.position))


@needs_ros2_cli
def test_the_real_spawner_and_ros2_control_drive_the_controller_manager(tmp_path, ros):
    controllers = tmp_path / "controllers.yaml"
    controllers.write_text(CONTROLLERS)
    bridge = Bridge("default.yaml", extra_args=["--set", f"robots.0.controllers={controllers}"])
    try:
        bridge.console("realtime")
        spawner("joint_state_broadcaster", "arm_controller")
        rows, out = listed()
        assert rows["joint_state_broadcaster"] == ("joint_state_broadcaster/JointStateBroadcaster", "active"), out
        assert rows["arm_controller"] == ("position_controllers/JointGroupPositionController", "active"), out
        assert "\t\tarm_shoulder_yaw/position" in out and "\t\tarm_elbow/position" in out, out
        # The broadcaster's dynamic_joint_states: each joint's interfaces with their values.
        dynamic = latest_message(ros, DynamicJointState, "/dynamic_joint_states")
        assert "arm_shoulder_yaw" in dynamic.joint_names
        values = dynamic.interface_values[dynamic.joint_names.index("arm_shoulder_yaw")]
        assert list(values.interface_names) == ["position", "velocity", "effort"], values
        assert all(map(math.isfinite, values.values))

        commands = ros.create_publisher(Float64MultiArray, "/arm_controller/commands", 10)
        spin_until(ros, lambda: commands.get_subscription_count() > 0, what="the controller's subscription")
        commands.publish(Float64MultiArray(data=[0.5, -0.7]))
        spin_until(ros, lambda: abs(arm_position(ros)["arm_shoulder_yaw"] - 0.5) < 0.02, timeout=30,
                   what="the shoulder at 0.5 rad")
        assert arm_position(ros)["arm_elbow"] == pytest.approx(-0.7, abs=0.02)

        # Deactivated, the controller's commands no longer act.
        ros2("control", "set_controller_state", "arm_controller", "inactive")
        assert listed()[0]["arm_controller"][1] == "inactive"
        commands.publish(Float64MultiArray(data=[-0.5, 0.3]))
        deadline = __import__("time").monotonic() + 2.0
        while __import__("time").monotonic() < deadline:
            rclpy.spin_once(ros, timeout_sec=0.1)
        assert arm_position(ros)["arm_shoulder_yaw"] == pytest.approx(0.5, abs=0.02), "an inactive controller moved the arm"

        # Refused one by one, with the reason in the bridge's log; the others stay active.
        for name, reason in [
            ("io_and_status_controller", "controller type 'ur_controllers/GPIOController' is not supported; supported: "),
            ("wheel_as_position_controller", "joint 'left_wheel_joint' has no position command interface (its actuator takes velocity)"),
        ]:
            refused = spawner(name, check=False)
            assert refused.returncode != 0, refused.stdout + refused.stderr
            assert reason in bridge.log_so_far(), bridge.log_so_far()[-3000:]
        # The robot's hardware component is active and stays so.
        kept = ros2("control", "set_hardware_component_state", "mobile", "active", check=False)
        assert kept.returncode == 0, kept.stdout + kept.stderr
        refused = ros2("control", "set_hardware_component_state", "mobile", "inactive", check=False)
        assert "'mobile' stays active" in bridge.log_so_far(), refused.stdout + refused.stderr
        rows, out = listed()
        assert "io_and_status_controller" not in rows, out
        assert rows["wheel_as_position_controller"][1] == "unconfigured", out
        assert rows["joint_state_broadcaster"][1] == "active", out

        # The trajectory controller, spawned, takes MoveIt-style goals on its action server;
        # its claims keep the forward controller from being activated beside it (strict).
        spawner("arm_trajectory_controller")
        client = ActionClient(ros, FollowJointTrajectory, "/arm_trajectory_controller/follow_joint_trajectory")
        assert client.wait_for_server(timeout_sec=30)

        arm = ["arm_shoulder_yaw", "arm_shoulder_pitch", "arm_elbow", "arm_wrist"]

        def send(positions, joints=arm):
            goal = FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = joints
            goal.trajectory.points = [JointTrajectoryPoint(positions=positions, time_from_start=Duration(sec=1))]
            sent = client.send_goal_async(goal)
            spin_until(ros, sent.done, what="the goal's answer")
            return sent.result()

        # allow_partial_joints_goal is false by default: a goal must name all four joints.
        assert not send([-0.4, 0.6], joints=["arm_shoulder_yaw", "arm_elbow"]).accepted
        assert "joints on incoming goal don't match the controller joints" in bridge.log_so_far()
        answer = send([-0.4, 0.3, 0.6, 0.2])
        assert answer.accepted
        result = answer.get_result_async()
        spin_until(ros, result.done, timeout=60, what="the goal's result")
        assert result.result().result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.result().result
        assert arm_position(ros)["arm_shoulder_yaw"] == pytest.approx(-0.4, abs=0.03)
        # Its ~/controller_state: the reference it commands and the joints' feedback.
        state = latest_message(ros, JointTrajectoryControllerState, "/arm_trajectory_controller/controller_state")
        assert list(state.joint_names) == arm, state.joint_names
        assert state.reference.positions[0] == pytest.approx(-0.4, abs=0.03), state.reference
        assert state.feedback.positions[0] == pytest.approx(-0.4, abs=0.03), state.feedback
        # Its ~/joint_trajectory topic: followed at once while active.
        topic = ros.create_publisher(JointTrajectory, "/arm_trajectory_controller/joint_trajectory", 10)
        spin_until(ros, lambda: topic.get_subscription_count() > 0, what="the controller's joint_trajectory")
        topic.publish(JointTrajectory(joint_names=arm, points=[
            JointTrajectoryPoint(positions=[0.3, 0.3, 0.6, 0.2], time_from_start=Duration(sec=1))]))
        spin_until(ros, lambda: abs(arm_position(ros)["arm_shoulder_yaw"] - 0.3) < 0.03, timeout=30,
                   what="the shoulder at 0.3 rad from ~/joint_trajectory")

        # Refusals as upstream sends them: a joint it does not have is rejected; a path and a
        # goal tolerance that are not met abort with their error codes.
        assert not send([0.0, 0.0, 0.0, 0.0], joints=arm[:3] + ["no_such_joint"]).accepted
        assert "joint 'no_such_joint' is not in this controller" in bridge.log_so_far()

        def outcome(positions, seconds, path=(), goal=(), goal_time=0.0):
            request = FollowJointTrajectory.Goal()
            request.trajectory.joint_names = arm
            request.trajectory.points = [JointTrajectoryPoint(
                positions=positions, time_from_start=Duration(sec=int(seconds), nanosec=int(seconds % 1 * 1e9)))]
            request.path_tolerance = [JointTolerance(name=n, position=t) for n, t in path]
            request.goal_tolerance = [JointTolerance(name=n, position=t) for n, t in goal]
            request.goal_time_tolerance = Duration(nanosec=int(goal_time * 1e9))
            sent = client.send_goal_async(request)
            spin_until(ros, sent.done, what="the goal's answer")
            assert sent.result().accepted
            done = sent.result().get_result_async()
            spin_until(ros, done.done, timeout=60, what="the goal's result")
            return done.result().result

        fast = outcome([-0.6, 0.3, 0.6, 0.2], 0.2, path=[("arm_shoulder_yaw", 0.001)])
        assert fast.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED, fast
        assert "arm_shoulder_yaw" in fast.error_string, fast
        exact = outcome([0.3, 0.5, 0.9, 0.2], 1.0, goal=[("arm_elbow", 1e-7)], goal_time=0.1)
        assert exact.error_code == FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED, exact
        assert "arm_elbow" in exact.error_string, exact
        switch = SwitchController.Request(activate_controllers=["arm_controller"], strictness=SwitchController.Request.STRICT)
        refused = call(ros, SwitchController, "/controller_manager/switch_controller", switch)
        assert not refused.ok and "cannot claim 'arm_shoulder_yaw/position', which 'arm_trajectory_controller' holds" in refused.message
        ros2("control", "set_controller_state", "arm_trajectory_controller", "inactive")
        assert not send([0.0, 0.0, 0.0, 0.0]).accepted, "an inactive trajectory controller took a goal"

        # The gripper action controller: a MoveIt-style GripperCommand goal while active, none
        # once inactive.
        spawner("finger_gripper")
        gripper = ActionClient(ros, GripperCommand, "/finger_gripper/gripper_cmd")
        assert gripper.wait_for_server(timeout_sec=30)

        def grip(position):
            goal = GripperCommand.Goal()
            goal.command.position, goal.command.max_effort = position, 10.0
            sent = gripper.send_goal_async(goal)
            spin_until(ros, sent.done, what="the gripper goal's answer")
            return sent.result()

        answer = grip(0.02)
        assert answer.accepted
        result = answer.get_result_async()
        spin_until(ros, result.done, timeout=60, what="the gripper goal's result")
        assert result.result().result.reached_goal, result.result().result
        assert arm_position(ros)["finger_left_joint"] == pytest.approx(0.02, abs=0.003)
        ros2("control", "set_controller_state", "finger_gripper", "inactive")
        assert not grip(0.01).accepted, "an inactive gripper controller took a goal"

        # The parallel gripper action controller: a ParallelGripperCommand names the joint.
        spawner("finger_parallel")
        parallel = ActionClient(ros, ParallelGripperCommand, "/finger_parallel/gripper_cmd")
        assert parallel.wait_for_server(timeout_sec=30)
        goal = ParallelGripperCommand.Goal()
        goal.command.name, goal.command.position = ["finger_left_joint"], [0.01]
        sent = parallel.send_goal_async(goal)
        spin_until(ros, sent.done, what="the parallel gripper goal's answer")
        assert sent.result().accepted
        result = sent.result().get_result_async()
        spin_until(ros, result.done, timeout=60, what="the parallel gripper goal's result")
        reached = result.result().result
        assert reached.reached_goal and list(reached.state.name) == ["finger_left_joint"], reached
        assert reached.state.position[0] == pytest.approx(0.01, abs=0.003), reached
        ros2("control", "set_controller_state", "finger_parallel", "inactive")

        # A controller the robot's file does not declare, given to the spawner with -p: its
        # type and parameters reach the manager through its parameters, as upstream.
        extra = tmp_path / "finger.yaml"
        extra.write_text("finger_controller:\n  ros__parameters:\n"
                         "    type: position_controllers/JointGroupPositionController\n"
                         "    joints: [finger_left_joint]\n")
        spawner("finger_controller", "-p", str(extra))
        assert listed()[0]["finger_controller"] == ("position_controllers/JointGroupPositionController", "active")
        fingers = ros.create_publisher(Float64MultiArray, "/finger_controller/commands", 10)
        spin_until(ros, lambda: fingers.get_subscription_count() > 0, what="the finger controller's subscription")
        fingers.publish(Float64MultiArray(data=[0.03]))
        spin_until(ros, lambda: abs(arm_position(ros)["finger_left_joint"] - 0.03) < 0.004, timeout=30,
                   what="the finger at 0.03 m")
    finally:
        bridge.close()
        # `ros2 control` starts the ros2 CLI's daemon (its verbs have no --no-daemon).
        ros2("daemon", "stop", check=False)
    # Gone from the graph (this probe's client too) before the next test lists what the
    # bridge serves.
    client.destroy()
    gripper.destroy()
    parallel.destroy()
    spin_until(ros, lambda: not any(name in n for n, _ in ros.get_service_names_and_types()
                                    for name in ("arm_trajectory_controller", "finger_gripper",
                                                 "finger_parallel")),
               timeout=60, what="the bridge's action servers to leave the graph")


DIFF_DRIVE = """\
controller_manager:
  ros__parameters:
    update_rate: 100
    diff_drive_controller:
      type: diff_drive_controller/DiffDriveController
diff_drive_controller:
  ros__parameters:
    left_wheel_names: [left_wheel_joint]
    right_wheel_names: [right_wheel_joint]
    wheel_separation: 0.46
    wheel_radius: 0.08
    cmd_vel_timeout: 0.5
    linear:
      x: {has_velocity_limits: true, max_velocity: 0.2}
"""


@needs_ros2_cli
def test_a_diff_drive_controller_drives_the_base_while_active_and_its_odom_integrates_it(tmp_path, ros):
    """The default robot without its config's base: the diff_drive_controller of its
    controllers file gives it one, driven by the controller's ~/cmd_vel (TwistStamped)."""
    from geometry_msgs.msg import TwistStamped
    from nav_msgs.msg import Odometry

    controllers = tmp_path / "controllers.yaml"
    controllers.write_text(DIFF_DRIVE)
    bridge = Bridge("default.yaml", extra_args=["--set", f"robots.0.controllers={controllers}",
                                                "--set", "robots.0.control.base=null"])
    try:
        bridge.console("realtime")
        assert "base from" in bridge.log_so_far() and "diff_drive_controller 'diff_drive_controller'" in bridge.log_so_far()
        spawner("diff_drive_controller")
        rows, out = listed()
        assert rows["diff_drive_controller"] == ("diff_drive_controller/DiffDriveController", "active"), out
        assert "\t\tleft_wheel_joint/velocity" in out and "\t\tright_wheel_joint/velocity" in out, out
        twist = ros.create_publisher(TwistStamped, "/diff_drive_controller/cmd_vel", 10)
        spin_until(ros, lambda: twist.get_subscription_count() > 0, what="the controller's cmd_vel subscription")

        def x():
            return latest_message(ros, Odometry, "/diff_drive_controller/odom").pose.pose.position.x

        def drive(seconds):
            message = TwistStamped()
            message.twist.linear.x = 0.4
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                twist.publish(message)
                rclpy.spin_once(ros, timeout_sec=0.05)

        start = x()
        drive(2.0)
        moved = x() - start
        # 0.4 m/s asked, 0.2 m/s allowed (linear.x.max_velocity), for about 2 s, as the
        # wheels' odometry integrates it.
        assert 0.2 < moved < 0.6, moved
        ros2("control", "set_controller_state", "diff_drive_controller", "inactive")
        time.sleep(1.0)  # the last twist times out (cmd_vel_timeout 0.5 s)
        still = x()
        drive(1.5)
        assert abs(x() - still) < 0.02, "an inactive diff drive moved the base"
    finally:
        bridge.close()
        ros2("daemon", "stop", check=False)


RAMPED = DIFF_DRIVE.replace(
    "      x: {has_velocity_limits: true, max_velocity: 0.2}\n",
    "      x: {max_velocity: 1.0, has_acceleration_limits: true, max_acceleration: 0.25}\n"
) + "    base_frame_id: imu_link\n"


@needs_ros2_cli
def test_a_diff_drive_ramps_at_its_acceleration_limit_and_halts_when_deactivated(tmp_path, ros):
    """`linear.x.max_acceleration` 0.25 m/s^2: asked for 1 m/s, the base's odometry speeds up
    at that rate in sim time, not at once; deactivated at speed, the controller halts the
    wheels at once (upstream's on_deactivate), past its ramp and its 0.5 s cmd_vel timeout.
    `base_frame_id` names the link the odometry describes."""
    from geometry_msgs.msg import TwistStamped
    from nav_msgs.msg import Odometry

    controllers = tmp_path / "controllers.yaml"
    controllers.write_text(RAMPED)
    bridge = Bridge("default.yaml", extra_args=["--set", f"robots.0.controllers={controllers}",
                                                "--set", "robots.0.control.base=null"])
    try:
        bridge.console("realtime")
        spawner("diff_drive_controller")
        twist = ros.create_publisher(TwistStamped, "/diff_drive_controller/cmd_vel", 10)
        spin_until(ros, lambda: twist.get_subscription_count() > 0, what="the controller's cmd_vel subscription")
        nothing = SwitchController.Request(strictness=SwitchController.Request.BEST_EFFORT)
        call(ros, SwitchController, "/controller_manager/switch_controller", nothing)
        odom = latest_message(ros, Odometry, "/diff_drive_controller/odom")
        # imu_link sits 0.13 m above base_link, the root.
        assert odom.child_frame_id == "imu_link" and odom.pose.pose.position.z > 0.13, odom
        speeds = []
        ros.create_subscription(Odometry, "/diff_drive_controller/odom", lambda m: speeds.append(
            (m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, m.twist.twist.linear.x)), 50)
        message = TwistStamped()
        message.twist.linear.x = 1.0

        def at_speed():
            twist.publish(message)
            return speeds and speeds[-1][1] > 0.5
        spin_until(ros, at_speed, timeout=30, what="the base at 0.5 m/s")
        moving = [(t, v) for t, v in speeds if v > 0.02]
        (t0, v0), (t1, v1) = moving[0], moving[-1]
        rate = (v1 - v0) / (t1 - t0)
        print(f"ramp: {v0:.3f} -> {v1:.3f} m/s over {t1 - t0:.2f} s sim: {rate:.3f} m/s^2 "
              "(limit 0.25)")
        assert rate == pytest.approx(0.25, rel=0.15), moving
        # Deactivated through the manager's service while the twist still comes (its client
        # made beforehand: a new one takes seconds to discover).
        deactivate = SwitchController.Request(deactivate_controllers=["diff_drive_controller"],
                                              strictness=SwitchController.Request.STRICT)
        twist.publish(message)
        assert call(ros, SwitchController, "/controller_manager/switch_controller", deactivate).ok
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            twist.publish(message)
            rclpy.spin_once(ros, timeout_sec=0.02)
        peak = max(range(len(speeds)), key=lambda i: speeds[i][1])
        t_peak, v_peak = speeds[peak]
        still = next((t - t_peak for t, v in speeds[peak:] if abs(v) < 0.02), None)
        print(f"deactivated at {v_peak:.3f} m/s: below 0.02 m/s {still} s sim later")
        # Ramping down at 0.25 m/s^2 would take 2 s from 0.5 m/s, after the 0.5 s timeout;
        # halted, the wheels' servos stop the base within a few tenths.
        assert still is not None and still < 0.3, speeds[peak:]
    finally:
        bridge.close()
        ros2("daemon", "stop", check=False)


def test_enable_odom_tf_false_leaves_odom_to_base_to_a_filter(tmp_path, ros):
    """A diff_drive_controller's `enable_odom_tf`: true (the default) sends `odom -> <root
    link>` on /tf beside its ~/odom; false sends only ~/odom (robot_localization's EKF then
    publishes the transform), and no `world -> <root link>` either."""
    from nav_msgs.msg import Odometry
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    seen = {}
    for enabled in (True, False):
        controllers = tmp_path / f"controllers_{enabled}.yaml"
        controllers.write_text(DIFF_DRIVE + f"    enable_odom_tf: {str(enabled).lower()}\n")
        bridge = Bridge("default.yaml", extra_args=["--set", f"robots.0.controllers={controllers}",
                                                    "--set", "robots.0.control.base=null"])
        try:
            bridge.console("realtime")
            odom = latest_message(ros, Odometry, "/diff_drive_controller/odom")
            parents = set()
            subscription = ros.create_subscription(
                TFMessage, "/tf", lambda m: parents.update(
                    (t.header.frame_id, t.child_frame_id) for t in m.transforms),
                QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE))
            # The default robot is a URDF's: robot_state_publisher sends its links, so the
            # bridge's /tf holds odom -> base alone, or nothing.
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                rclpy.spin_once(ros, timeout_sec=0.05)
            ros.destroy_subscription(subscription)
            base = odom.child_frame_id
            seen[enabled] = sorted(p for p in parents if p[1] == base)
        finally:
            bridge.close()
    print(f"frames with child {base} on /tf: enable_odom_tf true {seen[True]}, false {seen[False]}")
    assert seen[True] == [("odom", base)]
    assert seen[False] == []


SENSOR_ROBOT = """\
world: {floor: true}
robots:
  - name: probe
    pose: {xyz: [0, 0, 0.5]}
    mjcf_string: |
      <mujoco>
        <worldbody>
          <body name="box">
            <joint name="lift" type="slide" axis="0 0 1" range="-0.2 0.2"/>
            <geom type="box" size="0.1 0.1 0.05" mass="2"/>
            <site name="imu_site"/>
            <site name="down" pos="0 0 -0.06" zaxis="0 0 -1"/>
          </body>
        </worldbody>
        <actuator><position name="lift" joint="lift" kp="2000" kv="100"/></actuator>
        <sensor>
          <framequat name="imu_sensor_quat" objtype="site" objname="imu_site"/>
          <gyro name="imu_sensor_gyro" site="imu_site"/>
          <accelerometer name="imu_sensor_accel" site="imu_site"/>
          <force name="fts_force" site="imu_site"/>
          <torque name="fts_torque" site="imu_site"/>
          <rangefinder name="floor_range" site="down"/>
        </sensor>
      </mujoco>
    controllers: controllers.yaml
"""

BROADCASTERS = """\
controller_manager:
  ros__parameters:
    imu_sensor_broadcaster: {type: imu_sensor_broadcaster/IMUSensorBroadcaster}
    force_torque_sensor_broadcaster: {type: force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster}
    range_sensor_broadcaster: {type: range_sensor_broadcaster/RangeSensorBroadcaster}
    missing_imu_broadcaster: {type: imu_sensor_broadcaster/IMUSensorBroadcaster}
imu_sensor_broadcaster:
  ros__parameters: {sensor_name: imu_sensor, frame_id: imu_link}
force_torque_sensor_broadcaster:
  ros__parameters: {sensor_name: fts, frame_id: tool0}
range_sensor_broadcaster:
  ros__parameters: {sensor_name: floor_range, frame_id: range_link}
missing_imu_broadcaster:
  ros__parameters: {sensor_name: nowhere, frame_id: x}
"""


def received_within(node, message_type, topic, seconds):
    """How many messages on `topic` a new subscription of `node` receives in `seconds`."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    received = []
    subscription = node.create_subscription(
        message_type, topic, received.append, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
    node.destroy_subscription(subscription)
    return len(received)


@needs_ros2_cli
def test_sensor_broadcasters_publish_the_sensors_their_names_prefix(tmp_path, ros):
    """imu, force-torque and range sensor broadcasters read the MuJoCo sensors their
    sensor_name prefixes, as mujoco_ros2_control names them (S_quat, S_gyro, S_accel;
    S_force, S_torque), and publish only while active; one whose sensors the robot lacks
    is refused with their names."""
    from geometry_msgs.msg import WrenchStamped
    from sensor_msgs.msg import Imu, Range

    (tmp_path / "controllers.yaml").write_text(BROADCASTERS)
    config = tmp_path / "probe.yaml"
    config.write_text(SENSOR_ROBOT)
    bridge = Bridge(str(config))
    try:
        bridge.console("realtime")
        assert received_within(ros, Imu, "/imu_sensor_broadcaster/imu", 2.0) == 0, "published before activation"
        spawner("imu_sensor_broadcaster", "force_torque_sensor_broadcaster", "range_sensor_broadcaster")
        rows, out = listed()
        for name in ("imu_sensor_broadcaster", "force_torque_sensor_broadcaster", "range_sensor_broadcaster"):
            assert rows[name][1] == "active", out
        refused = spawner("missing_imu_broadcaster", check=False)
        assert refused.returncode != 0
        assert "none of the MuJoCo sensors [\"nowhere_quat\", \"nowhere_gyro\", \"nowhere_accel\"]" in bridge.log_so_far()

        imu = latest_message(ros, Imu, "/imu_sensor_broadcaster/imu")
        assert imu.header.frame_id == "imu_link"
        assert imu.linear_acceleration.z == pytest.approx(9.81, abs=0.2), imu.linear_acceleration
        assert imu.orientation.w == pytest.approx(1.0, abs=1e-3), imu.orientation
        wrench = latest_message(ros, WrenchStamped, "/force_torque_sensor_broadcaster/wrench")
        assert wrench.header.frame_id == "tool0"
        assert all(map(math.isfinite, [wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z]))
        reading = latest_message(ros, Range, "/range_sensor_broadcaster/range")
        assert reading.header.frame_id == "range_link"
        # The box's bottom site is 0.06 m below its centre, which stands 0.5 m up.
        assert reading.range == pytest.approx(0.44, abs=0.02), reading.range
        ros2("control", "set_controller_state", "imu_sensor_broadcaster", "inactive")
        assert received_within(ros, Imu, "/imu_sensor_broadcaster/imu", 2.0) == 0, "published while inactive"
        assert received_within(ros, Range, "/range_sensor_broadcaster/range", 2.0) > 0, "the active one stopped"
    finally:
        bridge.close()
        ros2("daemon", "stop", check=False)


URDF_SENSOR_ROBOT = """\
world: {floor: true}
robots:
  - name: probe
    controllers: controllers.yaml
    # Resting on the floor: a body welded to the world reads no acceleration.
    floating_base: true
    pose: {xyz: [0, 0, 0.05]}
    urdf_string: |
      <robot name="probe">
        <link name="base">
          <inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
          <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
        </link>
        <ros2_control name="probe" type="system">
          <hardware>
            <plugin>mujoco_ros2_control/MujocoSystemInterface</plugin>
            <param name="linear_acceleration_mjcf_suffix">_acc</param>
          </hardware>
          <sensor name="imu_sensor">
            <param name="mujoco_type">imu</param>
            <param name="mujoco_sensor_name">body_imu</param>
            <state_interface name="orientation.w"/>
            <state_interface name="linear_acceleration.z"/>
          </sensor>
        </ros2_control>
        <mujoco>
          <worldbody><body name="base"><site name="imu_site"/></body></worldbody>
          <sensor>
            <framequat name="body_imu_quat" objtype="site" objname="imu_site"/>
            <accelerometer name="body_imu_acc" site="imu_site"/>
          </sensor>
        </mujoco>
      </robot>
"""


@needs_ros2_cli
def test_a_urdf_ros2_control_sensor_names_the_mujoco_sensors_its_broadcaster_reads(tmp_path, ros):
    """The URDF's <ros2_control><sensor name="imu_sensor"> maps the broadcaster's sensor_name
    to the MuJoCo sensors its mujoco_sensor_name and the hardware's suffix parameters name
    (body_imu_quat, body_imu_acc), as mujoco_ros2_control does."""
    from sensor_msgs.msg import Imu

    (tmp_path / "controllers.yaml").write_text(
        "controller_manager:\n  ros__parameters:\n"
        "    imu_sensor_broadcaster: {type: imu_sensor_broadcaster/IMUSensorBroadcaster}\n"
        "imu_sensor_broadcaster:\n  ros__parameters: {sensor_name: imu_sensor, frame_id: imu_link}\n")
    config = tmp_path / "probe.yaml"
    config.write_text(URDF_SENSOR_ROBOT)
    bridge = Bridge(str(config))
    try:
        bridge.console("realtime")
        spawner("imu_sensor_broadcaster")
        imu = latest_message(ros, Imu, "/imu_sensor_broadcaster/imu")
        assert imu.header.frame_id == "imu_link"
        assert imu.linear_acceleration.z == pytest.approx(9.81, abs=0.3), imu.linear_acceleration
        assert imu.orientation.w == pytest.approx(1.0, abs=1e-3), imu.orientation
        assert imu.angular_velocity_covariance[0] == -1.0, "no gyro: marked as not given"
    finally:
        bridge.close()
        ros2("daemon", "stop", check=False)
