#!/usr/bin/env bash
# The legacy ZMQ benchmark (benches/legacy_zmq.py) on the release binary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/fetch-models.sh
bash scripts/setup-python.sh
cargo build --profile release-no-ros --locked --no-default-features --bin mujoco_bridge
MUJOCO_BRIDGE_BIN="$PWD/target/release-no-ros/mujoco_bridge" exec .deps/venv/bin/python benches/legacy_zmq.py
