#!/usr/bin/env bash
# The ROS 2 node benchmark (benches/ros.rs with its rclpy clients in benches/ros_clients.py),
# in a private network namespace that has only loopback, with LOCALHOST discovery.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/fetch-models.sh
bash scripts/setup-python.sh
bash scripts/setup-ros.sh
. scripts/ros-env.sh
cargo bench --locked --bench ros --no-run
mkdir -p .deps/ros-log
exec unshare -n env ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOG_DIR="$PWD/.deps/ros-log" \
  bash -c 'ip link set lo up && exec cargo bench --locked --offline --bench ros'
