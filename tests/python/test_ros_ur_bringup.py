"""Universal Robots' own Gazebo bringup (`../shared/robots/ur`, unchanged upstream files) run
against the bridge: their xacro, their controllers YAML and their `ur_sim_control.launch.py`
with only the two actions that start gz sim swapped for one that starts the bridge. Their
spawners activate joint_state_broadcaster and joint_trajectory_controller; the UR-specific
controller types are refused one by one while the rest run; `ros2 action send_goal` moves
the UR5e through the trajectory controller. Runs with the real `ros2 launch`, spawner,
`ros2 control` and `ros2 action`, in the suite's private network namespace."""
import difflib
import re
import sys

import pytest

from conftest import REPO, Launch, echo_once, install_prefix, needs_ros2_cli, ros2

UR = REPO.parent / "shared" / "robots" / "ur"
UPSTREAM_LAUNCH = UR / "ur_simulation_gz" / "launch" / "ur_sim_control.launch.py"
JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]
# The ur_controllers types of ur_controllers.yaml: the UR driver's, not ros2_control's.
UR_SPECIFIC = {
    "io_and_status_controller": "ur_controllers/GPIOController",
    "speed_scaling_state_broadcaster": "ur_controllers/SpeedScalingStateBroadcaster",
    "force_torque_sensor_broadcaster": "ur_controllers/ForceTorqueStateBroadcaster",
    "scaled_joint_trajectory_controller": "ur_controllers/ScaledJointTrajectoryController",
}

# What starts the simulator in upstream's launch file (ros_gz_sim's create and gz_sim.launch.py)
# and what starts it here: the bridge, given the robot_description that robot_state_publisher
# gets. It finds the controllers file where gz_ros2_control does, in the URDF's <gazebo> plugin.
GZ_NODES = re.compile(r"    # GZ nodes\n    gz_spawn_entity = Node\(.*?\n    \)\n\n    gz_launch_description = "
                      r"IncludeLaunchDescription\(.*?\n    \)\n", re.S)
BRIDGE_NODE = """    # The simulator: mujoco_bridge
    mujoco_bridge = Node(
        package="mujoco_bridge",
        executable="mujoco_bridge",
        output="screen",
        parameters=[{"use_sim_time": True}, robot_description],
    )
"""
GZ_STARTS = "        gz_spawn_entity,\n        gz_launch_description,\n"
BRIDGE_STARTS = "        mujoco_bridge,\n"

pytestmark = pytest.mark.skipif(not UPSTREAM_LAUNCH.exists(), reason="../shared/robots/ur is not there")


def bridge_launch_file(folder):
    """Upstream's ur_sim_control.launch.py with the simulator swapped; the lines taken out
    (all from the gz part) and the lines put in."""
    upstream = UPSTREAM_LAUNCH.read_text()
    gz_part = GZ_NODES.findall(upstream)
    assert len(gz_part) == 1 and upstream.count(GZ_STARTS) == 1, "upstream's launch file changed"
    ours = GZ_NODES.sub(lambda _: BRIDGE_NODE, upstream).replace(GZ_STARTS, BRIDGE_STARTS)
    path = folder / "ur_sim_mujoco.launch.py"
    path.write_text(ours)
    diff = [line for line in difflib.unified_diff(upstream.splitlines(), ours.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    removed = [line[1:] for line in diff if line.startswith("-")]
    added = [line[1:] for line in diff if line.startswith("+")]
    return path, removed, added, (gz_part[0] + GZ_STARTS).splitlines()


def ur_prefix(root):
    """An ament prefix in which ur_description and ur_simulation_gz are the vendored folders,
    and robot_state_publisher (which has no wheel) a stand-in that records its
    robot_description and waits for SIGINT as the real one does."""
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    for package in ("ur_description", "ur_simulation_gz", "robot_state_publisher"):
        (index / package).touch()
    for package in ("ur_description", "ur_simulation_gz"):
        (root / "share" / package).symlink_to(UR / package)
    record = root / "rsp_robot_description.urdf"
    executable = root / "lib" / "robot_state_publisher" / "robot_state_publisher"
    executable.parent.mkdir(parents=True)
    executable.write_text(f"""#!{sys.executable}
import pathlib, signal, sys, time, yaml
args = sys.argv[1:]
for path in [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--params-file"]:
    for section in (yaml.safe_load(pathlib.Path(path).read_text()) or {{}}).values():
        text = section.get("ros__parameters", {{}}).get("robot_description")
        if text:
            pathlib.Path({str(record)!r}).write_text(text)
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(1)
""")
    executable.chmod(0o755)
    return root, record


def wait_for(launch_log, pattern, proc, timeout=180):
    """The launch output once `pattern` is in it; fails if the launch ends or time runs out."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        launch_log.seek(0)
        output = launch_log.read()
        if re.search(pattern, output):
            return output
        assert proc.poll() is None, f"ros2 launch ended early:\n{output[-4000:]}"
        time.sleep(0.5)
    launch_log.seek(0)
    raise AssertionError(f"no {pattern!r} in the launch output:\n{launch_log.read()[-4000:]}")


def positions(states):
    """name -> position of a JointState as `ros2 topic echo` prints it."""
    names = re.findall(r"^- (\S+)$", states.split("name:", 1)[1].split("position:", 1)[0], re.M)
    values = re.findall(r"^- (\S+)$", states.split("position:", 1)[1].split("velocity:", 1)[0], re.M)
    return dict(zip(names, map(float, values)))


@needs_ros2_cli
def test_universal_robots_gz_bringup_runs_against_the_bridge(tmp_path):
    launch_file, removed, added, gz_lines = bridge_launch_file(tmp_path)
    # Only the lines that start gz sim differ from upstream's file.
    assert removed and set(removed) <= set(gz_lines), removed
    assert added and set(added) <= set((BRIDGE_NODE + BRIDGE_STARTS).splitlines()), added

    bridge_prefix = install_prefix(tmp_path / "install")
    ur, rsp_record = ur_prefix(tmp_path / "ur")
    prefixes = [bridge_prefix, ur]
    launch = Launch(prefixes, str(launch_file), "launch_rviz:=false", "gazebo_gui:=false")
    log, proc = launch.log, launch.proc
    try:
        output = wait_for(log, r"Configured and activated .*joint_trajectory_controller", proc)
        output = wait_for(log, r"Configured and activated .*joint_state_broadcaster", proc)
        # The bridge read their controllers file from the URDF's gz_ros2_control plugin.
        assert re.search(r"controllers from \S+ur_controllers\.yaml", output), output[-4000:]

        listed = ros2("control", "list_controllers", "--verbose", prefix=prefixes).stdout
        for name in ("joint_state_broadcaster", "joint_trajectory_controller"):
            assert re.search(rf"{name}\S*\s+\S+\s+\S*active", listed), listed
        for joint in JOINTS:
            assert f"{joint}/position" in listed, listed

        # Each UR-specific type is refused by name, with the supported types; the others run.
        for name, type_name in UR_SPECIFIC.items():
            refused = ros2("run", "controller_manager", "spawner", name, "-c", "/controller_manager",
                           prefix=prefixes, timeout=120, check=False)
            assert refused.returncode != 0, refused.stdout + refused.stderr
            launch_log = wait_for(log, re.escape(f"controller type '{type_name}' is not supported"), proc, timeout=30)
            assert "supported: joint_state_broadcaster/JointStateBroadcaster" in launch_log
        listed = ros2("control", "list_controllers", prefix=prefixes).stdout
        assert re.search(r"joint_trajectory_controller\S*\s+\S+\s+\S*active", listed), listed

        # The arm starts where their <ros2_control> initial values put it, as in Gazebo.
        start = positions(echo_once("/joint_states", "sensor_msgs/msg/JointState", prefix=prefixes))
        assert start["shoulder_lift_joint"] == pytest.approx(-1.57, abs=0.01), start
        assert start["wrist_1_joint"] == pytest.approx(-1.57, abs=0.01), start

        # A goal through their trajectory controller, with the ros2 CLI, as a user sends it.
        target = [0.5, -1.2, 0.8, -1.4, 0.3, 0.2]
        goal = ("{trajectory: {joint_names: [" + ", ".join(JOINTS) + "], points: [{positions: "
                + str(target) + ", time_from_start: {sec: 3}}]}}")
        sent = ros2("action", "send_goal", "/joint_trajectory_controller/follow_joint_trajectory",
                    "control_msgs/action/FollowJointTrajectory", goal, prefix=prefixes, timeout=120)
        assert "SUCCEEDED" in sent.stdout, sent.stdout
        reached = positions(echo_once("/joint_states", "sensor_msgs/msg/JointState", prefix=prefixes))
        for joint, want in zip(JOINTS, target):
            # ur_controllers.yaml: constraints.<joint>.goal 0.1 rad.
            assert abs(reached[joint] - want) < 0.1, (joint, reached)
        # A reset puts it back there.
        ros2("service", "call", "/mujoco_bridge/reset_simulation", "simulation_interfaces/srv/ResetSimulation",
             "{}", prefix=prefixes, timeout=60)
        again = positions(echo_once("/joint_states", "sensor_msgs/msg/JointState", prefix=prefixes))
        assert again["shoulder_lift_joint"] == pytest.approx(-1.57, abs=0.02), again
        assert again["shoulder_pan_joint"] == pytest.approx(0.0, abs=0.02), again

        # robot_state_publisher was handed the description the bridge runs (its name: ur).
        assert '<robot name="ur">' in rsp_record.read_text()
        assert re.search(r"robot ur \(prefix 'ur_'\)|robot 'ur'", output), output[-4000:]
    finally:
        code, output = launch.stop()
        ros2("daemon", "stop", prefix=prefixes, check=False)
    assert code == 0, output[-4000:]
    assert re.search(r"\[mujoco_bridge-\d+\]: process has finished cleanly", output), output[-4000:]
