"""The launch file, its parameters files and the RViz config, checked as far as a machine
without the launch system allows: the launch file is read as Python source (its arguments,
the executables it starts and the files it names), each params file is given to the real
binary the way launch_ros gives it (`--ros-args --params-file`), and the RViz config parses
and shows topics the node publishes."""
import ast
import pathlib
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import BINARY, REPO

LAUNCH = REPO / "launch" / "sim.launch.py"


def launch_tree():
    return ast.parse(LAUNCH.read_text(), filename=str(LAUNCH))


def calls(tree, name):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == name]


def keyword(call, name):
    return next((k.value for k in call.keywords if k.arg == name), None)


def robots():
    tree = launch_tree()
    listed = next(n.value for n in ast.walk(tree) if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "ROBOTS")
    return ast.literal_eval(listed)


def test_the_launch_file_declares_its_arguments_and_starts_what_the_package_depends_on():
    tree = launch_tree()
    declared = {ast.literal_eval(c.args[0]) for c in calls(tree, "DeclareLaunchArgument")}
    assert declared == {"robot", "params_file", "namespace", "rviz", "headless"}
    used = {ast.literal_eval(c.args[0]) for c in calls(tree, "LaunchConfiguration")}
    assert used <= declared, f"used but not declared: {used - declared}"
    robot_arg = next(c for c in calls(tree, "DeclareLaunchArgument") if ast.literal_eval(c.args[0]) == "robot")
    assert keyword(robot_arg, "choices").id == "ROBOTS"

    started = {(ast.literal_eval(keyword(c, "package")), ast.literal_eval(keyword(c, "executable"))) for c in calls(tree, "Node")}
    assert started == {("mujoco_bridge", "mujoco_bridge"), ("robot_state_publisher", "robot_state_publisher"), ("rviz2", "rviz2")}
    package = ET.parse(REPO / "package.xml").getroot()
    assert package.findtext("name") == "mujoco_bridge" and package.find("export/build_type").text == "ament_cargo"
    depends = {e.text for e in package if e.tag in ("exec_depend", "depend")}
    assert {"robot_state_publisher", "rviz2", "launch", "launch_ros"} <= depends
    # The node's executable is this package's binary, and launch/config/urdf are installed.
    cargo = (REPO / "Cargo.toml").read_text()
    assert 'name = "mujoco_bridge"' in cargo and 'install_to_share = ["launch", "config", "urdf"]' in cargo
    compile(LAUNCH.read_text(), str(LAUNCH), "exec")


@pytest.mark.parametrize("robot", ["default", "panda", "go1", "spot", "barkour", "g1"])
def test_each_robot_has_a_config_and_a_params_file_the_node_accepts(robot):
    assert robot in robots()
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
