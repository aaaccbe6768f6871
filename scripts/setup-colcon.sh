#!/usr/bin/env bash
# colcon with the Rust build types (colcon-ros-cargo, colcon-cargo) in .deps/colcon and
# cargo-ament-build in .deps/cargo, for the test that builds this package the way a ROS 2
# workspace does. Idempotent: a stamp records what was installed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.deps/colcon"
wanted="colcon-core==0.21.3 colcon-ros==0.5.0 colcon-cargo==0.2.0 colcon-ros-cargo==0.2.0 cargo-ament-build==0.1.11"
stamp="$root/.deps/colcon.stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && [ -x "$root/.deps/cargo/bin/cargo-ament-build" ]; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet colcon-core==0.21.3 colcon-ros==0.5.0 \
  colcon-cargo==0.2.0 colcon-ros-cargo==0.2.0
cargo install --quiet --locked --root "$root/.deps/cargo" cargo-ament-build --version 0.1.11
echo "$wanted" > "$stamp"
echo "setup-colcon: colcon and cargo-ament-build installed in .deps" >&2
