#!/usr/bin/env bash
# The streams benchmark (benches/streams.py): the no-ROS release build for the recorder and
# the stalled client, the r2r release build beside it for the ROS 2 comparison. In a private
# network namespace that has only loopback, with LOCALHOST discovery.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/setup-render.sh
bash scripts/fetch-models.sh
bash scripts/setup-python.sh
bash scripts/setup-node.sh
bash scripts/setup-ros.sh
cargo build --profile release-no-ros --locked --no-default-features --bin mujoco_bridge
(. scripts/ros-env.sh && cargo build --release --locked --bin mujoco_bridge)
mkdir -p .deps/ros-log
exec unshare -n env ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOG_DIR="$PWD/.deps/ros-log" \
  BENCH_PLAIN_BIN="$PWD/target/release-no-ros/mujoco_bridge" \
  BENCH_ROS_BIN="$PWD/target/release/mujoco_bridge" \
  bash -c 'ip link set lo up && . scripts/ros-env.sh && exec .deps/venv/bin/python benches/streams.py "$@"' \
  bench "$@"
