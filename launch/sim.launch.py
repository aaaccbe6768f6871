"""Starts mujoco_bridge with a robot config from this package's config/ folder.

    ros2 launch mujoco_bridge sim.launch.py robot:=panda
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    robot = LaunchConfiguration("robot")
    config = PathJoinSubstitution([FindPackageShare("mujoco_bridge"), "config", [robot, ".yaml"]])
    return LaunchDescription([
        DeclareLaunchArgument(
            "robot",
            default_value="default",
            description="robot config in config/: default, panda, go1, spot, barkour, g1",
        ),
        Node(
            package="mujoco_bridge",
            executable="mujoco_bridge",
            arguments=["--config", config],
            output="screen",
        ),
    ])
