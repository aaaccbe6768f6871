#!/usr/bin/env bash
# The Python environment of the end-to-end tests: a venv in .deps/venv with the pinned
# clients of tests/python/requirements.txt. Idempotent: reinstalls only when the
# requirements change.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.deps/venv"
requirements="$root/tests/python/requirements.txt"
stamp="$venv/.requirements"
if [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -r "$requirements"
cp "$requirements" "$stamp"
echo "setup-python: test clients installed in $venv" >&2
