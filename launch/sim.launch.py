"""Starts mujoco_bridge with a robot from this package's config/ folder; for each robot
loaded from URDF a robot_state_publisher fed from the same file (so RViz shows its links);
and RViz unless headless.

    ros2 launch mujoco_bridge sim.launch.py robot:=panda
    ros2 launch mujoco_bridge sim.launch.py robot:=default namespace:=sim
    ros2 launch mujoco_bridge sim.launch.py robot:=go1 headless:=true

Arguments:
    robot       config/<robot>.yaml with its parameters config/<robot>.params.yaml
    params_file another params file (standard format; its `config` picks the robot config)
    namespace   ROS namespace of the node and its topics
    rviz        start RViz (config/<robot>.rviz when there is one, else config/default.rviz)
    headless    start nothing graphical, whatever rviz says
"""
import os

import yaml
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

ROBOTS = ["default", "panda", "go1", "spot", "barkour", "g1"]


def robot_state_publishers(context):
    """One robot_state_publisher per URDF robot of the chosen config, with the frame prefix
    and namespace the bridge gives that robot when several share the world."""
    share = FindPackageShare("mujoco_bridge").perform(context)
    robot = LaunchConfiguration("robot").perform(context)
    namespace = LaunchConfiguration("namespace").perform(context)
    config_path = os.path.join(share, "config", f"{robot}.yaml")
    with open(config_path) as f:
        robots = yaml.safe_load(f).get("robots", [])
    nodes = []
    for entry in robots:
        if "urdf" not in entry:
            continue  # MJCF robots: the bridge publishes every body on /tf itself
        path = os.path.expandvars(entry["urdf"])
        path = os.path.normpath(os.path.join(os.path.dirname(config_path), path))
        if not os.path.exists(path):
            print(f"sim.launch.py: {path} not found; no robot_state_publisher for {entry['name']}")
            continue
        with open(path) as f:
            description = f.read()
        several = len(robots) > 1
        nodes.append(Node(
            package="robot_state_publisher",
            executable="robot_state_publisher",
            namespace=os.path.join(namespace, entry["name"]) if several else namespace,
            parameters=[{
                "robot_description": description,
                "use_sim_time": True,
                "frame_prefix": f"{entry['name']}/" if several else "",
            }],
            output="screen",
        ))
    return nodes


def generate_launch_description():
    share = FindPackageShare("mujoco_bridge")
    robot = LaunchConfiguration("robot")
    params = LaunchConfiguration("params_file")
    rviz_config = PythonExpression([
        "'", PathJoinSubstitution([share, "config", robot]), ".rviz' if __import__('os').path.exists('",
        PathJoinSubstitution([share, "config", robot]), ".rviz') else '",
        PathJoinSubstitution([share, "config", "default.rviz"]), "'",
    ])
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="default", choices=ROBOTS,
                              description="robot config in config/"),
        DeclareLaunchArgument("params_file",
                              default_value=PathJoinSubstitution([share, "config", [robot, ".params.yaml"]]),
                              description="node parameters (standard params-file format)"),
        DeclareLaunchArgument("namespace", default_value="", description="ROS namespace of the node"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("headless", default_value="false", description="start nothing graphical"),
        Node(
            package="mujoco_bridge",
            executable="mujoco_bridge",
            namespace=LaunchConfiguration("namespace"),
            parameters=[params],
            output="screen",
        ),
        OpaqueFunction(function=robot_state_publishers),
        Node(
            package="rviz2",
            executable="rviz2",
            arguments=["-d", rviz_config],
            parameters=[{"use_sim_time": True}],
            condition=IfCondition(PythonExpression([
                "'", LaunchConfiguration("rviz"), "' == 'true' and '", LaunchConfiguration("headless"), "' != 'true'",
            ])),
            output="screen",
        ),
    ])
