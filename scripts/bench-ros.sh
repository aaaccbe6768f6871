#!/usr/bin/env bash
# The ROS 2 node benchmark (benches/ros.rs with its rclpy clients in benches/ros_clients.py)
# for both backends side by side: the r2r build runs each part, then the same part in the
# ros2-client (DDS) build. In a private network namespace that has only loopback, with
# LOCALHOST discovery.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/fetch-models.sh
bash scripts/setup-python.sh
bash scripts/setup-ros.sh
# The path of the bench executable cargo builds for the given features.
bench_binary() {
  cargo bench --locked --bench ros --no-run --message-format=json "$@" \
    | grep '"kind":\["bench"\]' | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1
}
dds=$(bench_binary --profile release-dds --no-default-features --features dds)
. scripts/ros-env.sh
r2r=$(bench_binary)
mkdir -p .deps/ros-log
exec unshare -n env ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOG_DIR="$PWD/.deps/ros-log" \
  BENCH_PEER="$dds" bash -c 'ip link set lo up && exec "$0" --bench' "$r2r"
