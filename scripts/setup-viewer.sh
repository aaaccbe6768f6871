#!/usr/bin/env bash
# What the viewer and its tests need (Debian): the X11 client libraries winit opens at run
# time, and for the tests a virtual X server (Xvfb), xwd for screenshots of the real window
# and xdotool to press keys and drag the mouse. Idempotent: does nothing when they are
# there. Without them the bridge still runs; --viewer says there is no display.
set -euo pipefail
packages=(libx11-6 libx11-xcb1 libxcursor1 libxrandr2 libxi6 libxkbcommon-x11-0 xvfb x11-apps xdotool)
bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" setup-viewer "${packages[@]}"
