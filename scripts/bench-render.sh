#!/usr/bin/env bash
# The camera and lidar benchmark (benches/render.rs with its Python reference in
# benches/render_python.py): installs MuJoCo's Python bindings (the same 3.17.0) beside the
# test clients for the reference, then runs it. Needs no ROS and no network namespace.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/setup-render.sh
bash scripts/fetch-models.sh
bash scripts/setup-python.sh
.deps/venv/bin/python -c "import mujoco" 2>/dev/null \
  || .deps/venv/bin/python -m pip install --quiet "mujoco==3.17.0"
cargo bench --locked --profile release-no-ros --no-default-features --bench render -- --bench
