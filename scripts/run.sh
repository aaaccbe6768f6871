#!/usr/bin/env bash
# The main job: installs MuJoCo and the ROS 2 Jazzy wheel environment (once), builds the
# node with its ROS 2 side in release mode and runs it on the embedded default robot.
# Extra arguments go to the node, e.g.
#   bash scripts/run.sh --duration 10
#   bash scripts/run.sh --config config/panda.yaml      (after scripts/fetch-models.sh)
# DDS discovery stays on this machine unless ROS_AUTOMATIC_DISCOVERY_RANGE says otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/setup-render.sh
bash scripts/setup-ros.sh
(. scripts/ros-env.sh && cargo build --release --locked --bin mujoco_bridge)
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
exec target/release/mujoco_bridge "$@"
