#!/usr/bin/env bash
# The main job: installs MuJoCo from the PyPI wheel (once), builds the node in release mode
# and runs it on the embedded default robot. Extra arguments go to the node, e.g.
#   bash scripts/run.sh --duration 10
#   bash scripts/run.sh --config config/panda.yaml      (after scripts/fetch-models.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
cargo build --release --locked --bin mujoco_bridge
exec target/release/mujoco_bridge "$@"
