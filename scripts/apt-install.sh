#!/usr/bin/env bash
# bash scripts/apt-install.sh WHO PACKAGE...: installs the Debian packages that are missing
# (apt-get, as root or through sudo); says who asked. Does nothing when all are there.
set -euo pipefail
who=$1
shift
if dpkg -s "$@" >/dev/null 2>&1; then
  exit 0
fi
echo "$who: installing $* (Debian)" >&2
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
