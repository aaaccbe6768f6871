#!/usr/bin/env bash
# The Node.js clients of the Foxglove end-to-end tests (tests/node/package.json): the
# official @foxglove/ws-protocol client and Foxglove's ROS 2 message libraries, into
# .deps/node. Idempotent: reinstalls only when the package list changes. Node.js itself is
# the machine's (Debian's nodejs and npm when it has none).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix="$root/.deps/node"
packages="$root/tests/node/package.json"
stamp="$prefix/.packages"
if [ -f "$stamp" ] && cmp -s "$stamp" "$packages"; then
  exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi
mkdir -p "$prefix"
cp "$packages" "$prefix/package.json"
(cd "$prefix" && npm install --no-audit --no-fund --silent)
cp "$packages" "$stamp"
echo "setup-node: Foxglove clients installed in $prefix" >&2
