#!/usr/bin/env bash
# The `ros2` command line and the launch system of ROS 2 Jazzy, which have no PyPI wheel:
# installed into the wheel environment (.deps/venv) from their unchanged Jazzy sources in
# ../shared/vendor/ros2-jazzy-python when that folder is there (MUJOCO_BRIDGE_ROS_TOOLS
# names another); then ros2_control's `spawner` and `ros2 control` verbs from
# ../shared/vendor/ros2-control-jazzy-python (MUJOCO_BRIDGE_ROS_CONTROL_TOOLS). Without
# them, one line says so and the tests that need the tools skip. Idempotent. A sourced ROS 2
# installation has these tools anyway.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.deps/venv"
vendor="${MUJOCO_BRIDGE_ROS_TOOLS:-$root/../shared/vendor/ros2-jazzy-python}"
control="${MUJOCO_BRIDGE_ROS_CONTROL_TOOLS:-$root/../shared/vendor/ros2-control-jazzy-python}"
stamp="$venv/.ros-tools-ready"
if [ ! -d "$vendor/ros2cli" ]; then
  echo "setup-ros-tools: no vendored ROS 2 tools at $vendor: ros2 CLI and ros2 launch not installed (their tests skip)" >&2
  exit 0
fi
sources() { [ -d "$1" ] && (cd "$1" && find . -type f \( -name '*.py' -o -name 'setup.*' \) | sort | xargs cat); true; }
want=$( { cat "$root/scripts/setup-ros-tools.sh"; sources "$vendor"; sources "$control"; } | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/ros2" ]; then
  exit 0
fi
echo "setup-ros-tools: installing the ros2 CLI and launch from $vendor" >&2
# What the tools import besides ROS; lark is the parser launch's substitutions use.
"$venv/bin/python" -m pip install --quiet osrf-pycommon==2.0.2 lark==1.3.1 \
  importlib-metadata==10.2.0 psutil==7.2.2 argcomplete==3.7.2 wheel==0.48.0
# pip writes build/ folders into a source tree: build from a copy.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$vendor"/. "$work"/
# Dependencies first: rosidl_runtime_py, launch, then what builds on them.
for package in rosidl_runtime_py launch launch_xml launch_yaml ros2cli launch_ros ros2pkg \
  ros2run ros2topic ros2node ros2service ros2param ros2interface ros2action ros2launch; do
  "$venv/bin/python" -m pip install --quiet --no-deps --no-build-isolation "$work/$package" \
    || { echo "setup-ros-tools: installing $package failed" >&2; exit 1; }
done
if [ -d "$control/controller_manager" ]; then
  # The spawner's lock file (3.13.1: Ubuntu 24.04's, which Jazzy runs on).
  "$venv/bin/python" -m pip install --quiet filelock==3.13.1
  cp -r "$control"/. "$work"/
  for package in controller_manager ros2controlcli; do
    "$venv/bin/python" -m pip install --quiet --no-deps --no-build-isolation "$work/$package" \
      || { echo "setup-ros-tools: installing $package failed" >&2; exit 1; }
  done
else
  echo "setup-ros-tools: no vendored ros2_control tools at $control: spawner and ros2 control not installed (their tests skip)" >&2
fi
echo "$want" > "$stamp"
echo "setup-ros-tools: ros2 CLI, ros2 launch and ros2_control's tools ready in $venv/bin" >&2
