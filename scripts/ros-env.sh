# Environment for building and running the ROS 2 node against the PyPI-wheel ROS 2 prefix
# that scripts/setup-ros.sh makes. Source it:  . scripts/ros-env.sh
# With a sourced ROS 2 installation (Humble, Jazzy, Rolling) none of this is needed.
_mb_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ROS_DISTRO=jazzy
# The prefix is the PyPI-wheel one: build.rs links libpython for it.
export MUJOCO_BRIDGE_ROS_WHEELS=1
export AMENT_PREFIX_PATH="$_mb_root/.deps/venv:$_mb_root/.deps/ros-shims"
# r2r generates bindings only for the interface packages the node uses.
export IDL_PACKAGE_FILTER="builtin_interfaces;std_msgs;std_srvs;sensor_msgs;geometry_msgs;nav_msgs;trajectory_msgs;tf2_msgs;rosgraph_msgs;diagnostic_msgs;visualization_msgs;action_msgs;unique_identifier_msgs;control_msgs;simulation_interfaces;rcl_interfaces;service_msgs;lifecycle_msgs;controller_manager_msgs;ros_gz_interfaces;vision_msgs"
# Discovery stays on this machine.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export HOME="${HOME:-$_mb_root/.deps}"
unset _mb_root
# r2r's build script links the ROS 2 libraries dynamically and runs during the build; the
# wheels' libraries are found through these folders (the node itself has rpaths instead).
_mb_venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.deps/venv"
_mb_libs="$_mb_venv/lib"
for _mb_dir in "$_mb_venv"/lib/python3*/site-packages/*.libs; do
  [ -d "$_mb_dir" ] && _mb_libs="$_mb_libs:$_mb_dir"
done
export LD_LIBRARY_PATH="$_mb_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset _mb_venv _mb_libs _mb_dir
