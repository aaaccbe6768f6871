#!/usr/bin/env bash
# What the viewer and its tests need (Debian): the X11 client libraries winit opens at run
# time, and for the tests a virtual X server (Xvfb), xwd for screenshots of the real window
# and xdotool to press keys and drag the mouse. Idempotent: does nothing when they are
# there. Without them the bridge still runs; --viewer says there is no display.
set -euo pipefail
packages=(libx11-6 libx11-xcb1 libxcursor1 libxrandr2 libxi6 libxkbcommon-x11-0 xvfb x11-apps xdotool)
if dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  exit 0
fi
echo "setup-viewer: installing ${packages[*]} (Debian)" >&2
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
