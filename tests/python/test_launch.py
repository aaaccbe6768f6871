"""The launch file run for real with `ros2 launch` (the vendored launch system of Jazzy) on
an install prefix as colcon lays the package out: every robot of config/ headless, with a
namespace, a params file, the user's own URDF, xacro and MJCF; each brings up /clock and the
robot's joint_states (read with `ros2 topic echo`) and stops cleanly on SIGINT. Then each
params file given to the real binary the way launch_ros gives it, and the RViz config."""
import os
import pathlib
import re
import signal
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import BINARY, REPO, Launch, install_prefix, needs_ros2_cli, ros2

ROBOTS = ["default", "panda", "go1", "spot", "barkour", "g1"]
URDF_ROBOTS = {"default", "barkour"}


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    return install_prefix(tmp_path_factory.mktemp("install"))


def sim_launch(prefix, *args):
    """`ros2 launch mujoco_bridge sim.launch.py ARGS...` running in the background."""
    return Launch(prefix, "mujoco_bridge", "sim.launch.py", *args)


def launched(prefix, *args, joint_states="/joint_states"):
    """Launches, reads /clock and joint_states with the ros2 CLI, stops with SIGINT and
    checks the stop was clean. Returns (joint_states as printed, launch output)."""
    launch = sim_launch(prefix, *args)
    try:
        clock = launch.echo("/clock", "rosgraph_msgs/msg/Clock")
        states = launch.echo(joint_states, "sensor_msgs/msg/JointState")
    finally:
        code, output = launch.stop()
    assert re.search(r"clock:\s+sec: \d+\s+nanosec: \d+", clock), clock
    assert "name:" in states and "position:" in states, states
    assert code == 0, output[-3000:]
    assert re.search(r"\[mujoco_bridge-1\]: process has finished cleanly", output), output[-3000:]
    return states, output


def joint_names(states):
    """The names of a JointState as `ros2 topic echo` prints it."""
    block = states.split("name:", 1)[1].split("position:", 1)[0]
    return re.findall(r"^- (\S+)$", block, re.M)


@needs_ros2_cli
@pytest.mark.parametrize("robot", ROBOTS)
def test_ros2_launch_brings_up_each_robot_headless(prefix, robot):
    states, output = launched(prefix, f"robot:={robot}", "headless:=true")
    assert joint_names(states), states
    if robot in URDF_ROBOTS:
        # No robot_state_publisher wheel: the launch says so instead of failing.
        assert "package 'robot_state_publisher' is not installed" in output, output[-3000:]
    assert "rviz2" not in output.replace("package 'rviz2'", ""), "headless starts no RViz"


@needs_ros2_cli
def test_ros2_launch_with_a_namespace_and_without_rviz_installed(prefix):
    states, output = launched(prefix, "robot:=panda", "namespace:=sim", joint_states="/sim/joint_states")
    assert "joint1" in joint_names(states)
    # rviz defaults to true; a machine without rviz2 hears why it did not open.
    assert "package 'rviz2' is not installed" in output and "RViz not started" in output, output[-3000:]


@needs_ros2_cli
def test_ros2_launch_with_the_viewer_on_a_machine_without_a_display(prefix, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    states, output = launched(prefix, "robot:=default", "viewer:=true", "rviz:=false")
    assert joint_names(states), "the node runs on"
    said = [line for line in output.splitlines() if "viewer:" in line]
    assert len(said) == 1 and "no display" in said[0], said


@needs_ros2_cli
def test_ros2_launch_with_a_params_file(prefix, tmp_path):
    params = tmp_path / "mine.params.yaml"
    params.write_text(f"mujoco_bridge:\n  ros__parameters:\n    config: {REPO / 'config' / 'panda.yaml'}\n"
                      "    ros:\n      rates:\n        joint_states: 50\n")
    states, output = launched(prefix, "robot:=default", f"params_file:={params}", "headless:=true")
    assert "joint1" in joint_names(states), "the params file's config, not robot:=default's"
    assert "panda.yaml" in output


@needs_ros2_cli
def test_ros2_launch_with_a_controllers_file_and_the_real_spawner(prefix, tmp_path):
    controllers = tmp_path / "controllers.yaml"
    controllers.write_text("controller_manager:\n  ros__parameters:\n    update_rate: 100\n"
                           "    arm_controller: {type: position_controllers/JointGroupPositionController}\n"
                           "arm_controller:\n  ros__parameters:\n    joints: [arm_elbow]\n")
    launch = sim_launch(prefix, "robot:=default", "headless:=true", f"controllers:={controllers}")
    try:
        launch.echo("/clock", "rosgraph_msgs/msg/Clock")
        spawned = ros2("run", "controller_manager", "spawner", "arm_controller", prefix=prefix, timeout=120)
        assert "Configured and activated" in spawned.stdout + spawned.stderr
        listed = ros2("control", "list_controllers", prefix=prefix).stdout
        assert re.search(r"arm_controller\S*\s+position_controllers/JointGroupPositionController\s+\S*active", listed), listed
    finally:
        code, output = launch.stop()
        # `ros2 control` starts the ros2 CLI's daemon (its verbs have no --no-daemon).
        ros2("daemon", "stop", prefix=prefix, check=False)
    assert code == 0, output[-3000:]


@needs_ros2_cli
def test_ros2_launch_with_the_users_own_urdf(prefix, tmp_path):
    urdf = tmp_path / "my_robot.urdf"
    urdf.write_text((REPO / "urdf" / "mobile_manipulator.urdf").read_text())
    states, output = launched(prefix, f"urdf:={urdf}", "floating_base:=true", "x:=1.0", "y:=-2", "z:=0.3",
                              "yaw:=1.57", "headless:=true")
    expected = {j.get("name") for j in ET.parse(urdf).getroot().iter("joint") if j.get("type") != "fixed"}
    assert set(joint_names(states)) <= expected and joint_names(states), states
    assert "floating (floating_base: true" in output and str(urdf) in output, output[-3000:]


@needs_ros2_cli
def test_ros2_launch_feeds_robot_state_publisher_the_robots_urdf(prefix, tmp_path):
    """robot_state_publisher has no wheel: a stand-in in the ament index records what
    launch_ros hands it (arguments and parameters) and waits for SIGINT like the real one."""
    import json
    import sys

    import yaml

    record = tmp_path / "rsp.json"
    stub = tmp_path / "stub"
    executable = stub / "lib" / "robot_state_publisher" / "robot_state_publisher"
    executable.parent.mkdir(parents=True)
    executable.write_text(f"""#!{sys.executable}
import json, pathlib, signal, sys, time
args = sys.argv[1:]
files = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--params-file"]
pathlib.Path({str(record)!r}).write_text(json.dumps({{"args": args, "params": [pathlib.Path(f).read_text() for f in files]}}))
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(1)
""")
    executable.chmod(0o755)
    index = stub / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "robot_state_publisher").touch()
    urdf = tmp_path / "commented.urdf"
    # A comment with ": " and " #": YAML would mangle this text if it were read as YAML.
    text = (REPO / "urdf" / "mobile_manipulator.urdf").read_text().replace(
        "<robot ", "<!-- note: kept as text # not a comment -->\n<robot ", 1)
    urdf.write_text(text)
    launch = sim_launch([stub, prefix], f"urdf:={urdf}", "namespace:=sim", "headless:=true")
    try:
        launch.echo("/sim/joint_states", "sensor_msgs/msg/JointState")
    finally:
        code, output = launch.stop()
    assert code == 0 and "package 'robot_state_publisher' is not installed" not in output, output[-3000:]
    handed = json.loads(record.read_text())
    parameters = {}
    for params in handed["params"]:
        for entry in yaml.safe_load(params).values():
            parameters.update(entry["ros__parameters"])
    assert parameters["robot_description"] == text
    assert parameters["frame_prefix"] == "" and parameters["use_sim_time"] is True, parameters
    assert "__ns:=/sim" in handed["args"], handed["args"]


@needs_ros2_cli
def test_ros2_launch_with_a_users_xacro(prefix, tmp_path):
    xacro = tmp_path / "pendulum.urdf.xacro"
    xacro.write_text("""<?xml version="1.0"?>
<robot name="pendulum" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="length" value="0.5"/>
  <xacro:macro name="arm" params="name parent">
    <link name="${name}_link">
      <inertial><mass value="1"/><origin xyz="0 0 -${length/2}"/>
        <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
      <visual><geometry><cylinder radius="0.02" length="${length}"/></geometry></visual>
    </link>
    <joint name="${name}_joint" type="revolute">
      <parent link="${parent}"/><child link="${name}_link"/><axis xyz="0 1 0"/>
      <limit lower="-3" upper="3" effort="10" velocity="5"/>
    </joint>
  </xacro:macro>
  <link name="base_link"/>
  <xacro:arm name="upper" parent="base_link"/>
</robot>
""")
    states, _ = launched(prefix, f"urdf:={xacro}", "z:=1.0", "headless:=true")
    assert joint_names(states) == ["upper_joint"], states


@needs_ros2_cli
def test_ros2_launch_with_a_users_mjcf(prefix):
    import yaml

    config = yaml.safe_load((REPO / "config" / "go1.yaml").read_text())
    models = os.environ.get("MUJOCO_BRIDGE_MODELS", str(REPO / ".deps" / "models"))
    mjcf = (REPO / "config" / config["robots"][0]["mjcf"].replace("${MUJOCO_BRIDGE_MODELS}", models)).resolve()
    states, _ = launched(prefix, f"mjcf:={mjcf}", "z:=0.4", "headless:=true")
    legs = [f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL") for part in ("hip", "thigh", "calf")]
    assert joint_names(states) == legs, states


@needs_ros2_cli
def test_ros2_launch_names_a_bad_argument(prefix, tmp_path):
    for args, named in ((["urdf:=/nonexistent/robot.urdf"], "urdf:=/nonexistent/robot.urdf: no such file"),
                        ([f"urdf:={REPO / 'urdf' / 'mobile_manipulator.urdf'}", "z:=high"], "z:=high is not a number")):
        launch = sim_launch(prefix, *args, "headless:=true")
        code = launch.proc.wait(timeout=60)
        assert code != 0 and named in launch.output(), launch.output()[-2000:]


@pytest.mark.parametrize("robot", ["default", "panda", "go1", "spot", "barkour", "g1"])
def test_each_robot_has_a_config_and_a_params_file_the_node_accepts(robot):
    params = REPO / "config" / f"{robot}.params.yaml"
    assert (REPO / "config" / f"{robot}.yaml").exists() and params.exists()
    # As launch_ros passes a params file: the node loads the robot it names.
    run = subprocess.run([BINARY, "--summary", "--ros-args", "--params-file", str(params)],
                         capture_output=True, text=True, timeout=120, cwd="/")
    assert run.returncode == 0, run.stderr
    name = "mobile" if robot == "default" else robot
    assert re.search(rf"\b{name}\b", run.stdout), run.stdout[:500]


def test_a_params_file_overrides_config_fields_and_bad_ones_are_named(tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text(f"mujoco_bridge:\n  ros__parameters:\n    config: {REPO / 'config' / 'panda.yaml'}\n    world:\n      timestep: 0.001\n")
    run = subprocess.run([BINARY, "--steps", "10", "--ros-args", "--params-file", str(params)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "sim time 0.010000 s" in run.stdout + run.stderr, "10 steps of the timestep the params file set"
    params.write_text("mujoco_bridge:\n  ros__parameters:\n    sim:\n      mood: happy\n")
    run = subprocess.run([BINARY, "--steps", "1", "--ros-args", "--params-file", str(params)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "mood" in run.stderr, run.stderr


def test_the_rviz_config_parses_and_shows_what_the_node_publishes():
    import yaml  # the ROS wheels bring PyYAML

    rviz = yaml.safe_load((REPO / "config" / "default.rviz").read_text())
    manager = rviz["Visualization Manager"]
    assert manager["Global Options"]["Fixed Frame"] == "odom"
    topics = {d["Class"]: d.get("Topic", d.get("Description Topic", {})).get("Value") for d in manager["Displays"]}
    assert topics["rviz_default_plugins/RobotModel"] == "/robot_description"
    assert topics["rviz_default_plugins/LaserScan"] == "/scan"
    assert topics["rviz_default_plugins/Odometry"] == "/odom"
    assert topics["rviz_default_plugins/MarkerArray"] == "/mujoco_bridge/markers"
