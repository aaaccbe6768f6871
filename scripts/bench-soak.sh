#!/usr/bin/env bash
# The soak benchmark (benches/soak.py): the release bridge with its ROS 2 node under the churn
# of ordinary use for BENCH_SOAK_MINUTES (30 by default) a case on BENCH_SOAK_CONFIG
# (config/default.yaml by default), with users' processes keeping every core busy; the cases
# (BENCH_SOAK_CASES, normal,niced by default) run the clients at normal priority, then niced.
# It prints memory every minute, then per case the memory growth, the /clock gaps, the
# requests sent and answered and the real-time factor, then the cases side by side.
# Extra arguments go to soak.py (e.g. --camera-on 0, --json FILE, -- --set KEY=VALUE for the
# bridge). In a private network namespace that has only loopback.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/setup-render.sh
bash scripts/fetch-models.sh
bash scripts/setup-python.sh
bash scripts/setup-ros.sh
(. scripts/ros-env.sh && cargo build --release --locked --bin mujoco_bridge)
mkdir -p target/bench-soak .deps/ros-log
cp target/release/mujoco_bridge target/bench-soak/mujoco_bridge
exec unshare -n env ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOG_DIR="$PWD/.deps/ros-log" \
  HOME="${HOME:-$PWD/.deps}" \
  bash -c 'ip link set lo up && exec .deps/venv/bin/python benches/soak.py "$@"' soak \
  --binary "$PWD/target/bench-soak/mujoco_bridge" --minutes "${BENCH_SOAK_MINUTES:-30}" \
  --config "${BENCH_SOAK_CONFIG:-config/default.yaml}" --cases "${BENCH_SOAK_CASES:-normal,niced}" "$@"
