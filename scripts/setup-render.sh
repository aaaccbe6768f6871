#!/usr/bin/env bash
# Headless OpenGL for the cameras: libEGL with Mesa's drivers (llvmpipe renders on the CPU
# when the machine has no GPU; a GPU's vendor driver is used when installed). Idempotent:
# does nothing when the Debian packages are there. Without them the node still runs and
# says that cameras are off.
set -euo pipefail
packages=(libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1)
bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" setup-render "${packages[@]}"
