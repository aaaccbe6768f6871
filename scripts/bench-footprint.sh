#!/usr/bin/env bash
# The footprint benchmark (benches/footprint.rs): the release bridge with its ROS 2 node
# (r2r) beside a plain mujoco-rs process on the same model, for the default robot, Go1 and G1,
# idle and while a camera streams. In a private network namespace that has only loopback.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/setup-render.sh
bash scripts/fetch-models.sh
bash scripts/setup-ros.sh
(. scripts/ros-env.sh && cargo build --release --locked --bin mujoco_bridge)
bench=$(cargo bench --locked --profile release-no-ros --no-default-features --bench footprint --no-run --message-format=json \
  | grep '"kind":\["bench"\]' | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
mkdir -p .deps/ros-log
exec unshare -n env ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOG_DIR="$PWD/.deps/ros-log" \
  BENCH_BRIDGE="$PWD/target/release/mujoco_bridge" \
  bash -c 'ip link set lo up && exec "$0" --bench' "$bench"
