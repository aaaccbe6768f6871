#!/usr/bin/env bash
# Headless OpenGL for the cameras: libEGL with Mesa's drivers (llvmpipe renders on the CPU
# when the machine has no GPU; a GPU's vendor driver is used when installed). Idempotent:
# does nothing when the Debian packages are there. Without them the node still runs and
# says that cameras are off.
set -euo pipefail
packages=(libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1)
if dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  exit 0
fi
echo "setup-render: installing ${packages[*]} (Debian)" >&2
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
