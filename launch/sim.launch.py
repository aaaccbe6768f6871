"""Starts mujoco_bridge with a robot from this package's config/ folder, or with the user's
own URDF, xacro or MJCF file; for each robot loaded from URDF a robot_state_publisher fed
from the same file (so RViz shows its links); and RViz unless headless.

    ros2 launch mujoco_bridge sim.launch.py robot:=panda
    ros2 launch mujoco_bridge sim.launch.py robot:=default namespace:=sim
    ros2 launch mujoco_bridge sim.launch.py robot:=go1 headless:=true
    ros2 launch mujoco_bridge sim.launch.py urdf:=/path/robot.urdf floating_base:=true z:=0.5
    ros2 launch mujoco_bridge sim.launch.py mjcf:=/path/scene.xml
    ros2 launch mujoco_bridge sim.launch.py robot:=go1 viewer:=true

Arguments:
    robot         config/<robot>.yaml with its parameters config/<robot>.params.yaml
    params_file   another params file (standard format; its `config` picks the robot config)
    urdf, mjcf    the user's own robot file instead of a config (.urdf, .urdf.xacro, .xml)
    floating_base with urdf: true gives the root link a free joint, false fixes it
    x, y, z, yaw  with urdf or mjcf: where the robot stands in the world
    controllers   a ros2_control controllers file for the (first) robot: its controller
                  manager's services then start them (`ros2 run controller_manager spawner`)
    bridge        a ros_gz_bridge config file for the (first) robot: each gz topic of its
                  <gazebo> sensors and drive that the file names goes out on its ROS name
    namespace     ROS namespace of the node and its topics
    rviz          start RViz (config/<robot>.rviz when there is one, else config/default.rviz)
    viewer        open the MuJoCo viewer window (without a display the node says so and runs on)
    headless      start nothing graphical, whatever rviz and viewer say

A package that is not installed (robot_state_publisher, rviz2) is reported and left out;
the simulation starts without it.
"""
import json
import math
import os

import yaml
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

ROBOTS = ["default", "panda", "go1", "spot", "barkour", "g1"]
PACKAGE = "mujoco_bridge"


def installed(package):
    """Whether the ament index knows `package`."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        get_package_prefix(package)
        return True
    except PackageNotFoundError:
        return False


def missing(package, what):
    return LogInfo(msg=f"sim.launch.py: package '{package}' is not installed "
                       f"(apt install ros-$ROS_DISTRO-{package.replace('_', '-')}): {what} not started")


def number(context, name):
    """A numeric launch argument, refused with its name when it is not a finite number."""
    text = context.launch_configurations[name]
    try:
        value = float(text)
    except ValueError:
        raise RuntimeError(f"sim.launch.py: {name}:={text} is not a number") from None
    if not math.isfinite(value):
        raise RuntimeError(f"sim.launch.py: {name}:={text} is not a finite number")
    return value


def robot_description(path):
    """The URDF text of a .urdf or .xacro file, for robot_state_publisher."""
    if path.endswith(".xacro"):
        import xacro

        return xacro.process_file(path).toxml()
    with open(path) as f:
        return f.read()


def config_urdf_robots(share, robot):
    """(name, URDF path) of each URDF robot of config/<robot>.yaml, and how many robots."""
    config_path = os.path.join(share, "config", f"{robot}.yaml")
    with open(config_path) as f:
        robots = (yaml.safe_load(f) or {}).get("robots", [])
    found = []
    for entry in robots:
        if "urdf" in entry:
            path = os.path.expanduser(os.path.expandvars(entry["urdf"]))
            found.append((entry["name"], os.path.normpath(os.path.join(os.path.dirname(config_path), path))))
    return found, len(robots)


def setup(context):
    from ament_index_python.packages import get_package_share_directory

    share = get_package_share_directory(PACKAGE)
    arg = context.launch_configurations
    robot, namespace = arg["robot"], arg["namespace"]
    urdf, mjcf = arg["urdf"], arg["mjcf"]
    headless = arg["headless"].lower() == "true"
    graphical = arg["rviz"].lower() == "true" and not headless
    if urdf and mjcf:
        raise RuntimeError("sim.launch.py: give urdf:= or mjcf:=, not both")

    own_file = urdf or mjcf
    node_arguments, parameters = [], []
    if own_file:
        own_file = os.path.abspath(os.path.expanduser(own_file))
        if not os.path.isfile(own_file):
            raise RuntimeError(f"sim.launch.py: {'urdf' if urdf else 'mjcf'}:={own_file}: no such file")
        node_arguments = ["--urdf" if urdf else "--mjcf", own_file]
        if arg["floating_base"]:
            if arg["floating_base"].lower() not in ("true", "false"):
                raise RuntimeError(f"sim.launch.py: floating_base:={arg['floating_base']}: expected true or false")
            node_arguments += ["--set", f"robots.0.floating_base={arg['floating_base'].lower()}"]
        x, y, z, yaw = (number(context, name) for name in ("x", "y", "z", "yaw"))
        node_arguments += ["--set", f"robots.0.pose.xyz=[{x!r}, {y!r}, {z!r}]",
                           "--set", f"robots.0.pose.rpy=[0.0, 0.0, {yaw!r}]"]
        urdf_robots, several = ([("", own_file)] if urdf else []), False
    else:
        urdf_robots, count = config_urdf_robots(share, robot)
        several = count > 1
    if arg["controllers"]:
        controllers = os.path.abspath(os.path.expanduser(arg["controllers"]))
        if not os.path.isfile(controllers):
            raise RuntimeError(f"sim.launch.py: controllers:={controllers}: no such file")
        node_arguments += ["--set", f"robots.0.controllers={json.dumps(controllers)}"]
    if arg["bridge"]:
        bridge = os.path.abspath(os.path.expanduser(arg["bridge"]))
        if not os.path.isfile(bridge):
            raise RuntimeError(f"sim.launch.py: bridge:={bridge}: no such file")
        node_arguments += ["--set", f"robots.0.gazebo_bridge={json.dumps(bridge)}"]
    if arg["viewer"].lower() == "true" and not headless:
        node_arguments.append("--viewer")
    params_file = arg["params_file"]
    if not params_file and not own_file:
        params_file = os.path.join(share, "config", f"{robot}.params.yaml")
    if params_file:
        parameters.append(params_file)

    actions = [Node(
        package=PACKAGE,
        executable=PACKAGE,
        namespace=namespace,
        arguments=node_arguments,
        parameters=parameters,
        output="screen",
    )]

    if urdf_robots and not installed("robot_state_publisher"):
        actions.append(missing("robot_state_publisher", "the links' tf beyond the root link"))
    elif urdf_robots:
        for name, path in urdf_robots:
            if not os.path.exists(path):
                actions.append(LogInfo(msg=f"sim.launch.py: {path} not found; no robot_state_publisher for {name}"))
                continue
            actions.append(Node(
                package="robot_state_publisher",
                executable="robot_state_publisher",
                namespace=os.path.join(namespace, name) if several else namespace,
                parameters=[{
                    # A string as it is: launch_ros would read plain text as YAML.
                    "robot_description": ParameterValue(robot_description(path), value_type=str),
                    "use_sim_time": True,
                    "frame_prefix": f"{name}/" if several else "",
                }],
                output="screen",
            ))

    if graphical and not installed("rviz2"):
        actions.append(missing("rviz2", "RViz"))
    elif graphical:
        own_view = os.path.join(share, "config", f"{robot}.rviz")
        view = own_view if os.path.exists(own_view) and not own_file else os.path.join(share, "config", "default.rviz")
        actions.append(Node(
            package="rviz2",
            executable="rviz2",
            arguments=["-d", view],
            parameters=[{"use_sim_time": True}],
            output="screen",
        ))
    return actions


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="default", choices=ROBOTS,
                              description="robot config in config/"),
        DeclareLaunchArgument("params_file", default_value="",
                              description="node parameters (standard params-file format); "
                                          "default: config/<robot>.params.yaml"),
        DeclareLaunchArgument("urdf", default_value="", description="the user's own URDF or xacro file"),
        DeclareLaunchArgument("mjcf", default_value="", description="the user's own MJCF file"),
        DeclareLaunchArgument("floating_base", default_value="",
                              description="with urdf: true frees the root link, false fixes it"),
        DeclareLaunchArgument("x", default_value="0.0", description="with urdf or mjcf: x in the world (m)"),
        DeclareLaunchArgument("y", default_value="0.0", description="with urdf or mjcf: y in the world (m)"),
        DeclareLaunchArgument("z", default_value="0.0", description="with urdf or mjcf: z in the world (m)"),
        DeclareLaunchArgument("yaw", default_value="0.0", description="with urdf or mjcf: yaw in the world (rad)"),
        DeclareLaunchArgument("controllers", default_value="",
                              description="a ros2_control controllers file for the robot"),
        DeclareLaunchArgument("bridge", default_value="",
                              description="a ros_gz_bridge config file for the robot's <gazebo> topics"),
        DeclareLaunchArgument("namespace", default_value="", description="ROS namespace of the node"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("viewer", default_value="false", choices=["true", "false"],
                              description="open the MuJoCo viewer window"),
        DeclareLaunchArgument("headless", default_value="false", description="start nothing graphical"),
        OpaqueFunction(function=setup),
    ])
