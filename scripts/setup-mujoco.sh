#!/usr/bin/env bash
# Installs MuJoCo 3.17.0 (the version mujoco-rs 7.0.0 requires) from the PyPI wheel
# into .deps/mujoco: lib/ (with the libmujoco.so link mujoco-rs wants), include/, plugin/.
# Idempotent: does nothing when the library is already in place.
set -euo pipefail
MUJOCO_VERSION=3.17.0
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$root/.deps/mujoco"
lib="$dest/lib/libmujoco.so.$MUJOCO_VERSION"
if [ -f "$lib" ] && [ -L "$dest/lib/libmujoco.so" ] && [ -d "$dest/plugin" ]; then
  exit 0
fi
wheels="$root/.deps/wheels"
mkdir -p "$wheels"
if ! ls "$wheels"/mujoco-$MUJOCO_VERSION-*.whl >/dev/null 2>&1; then
  echo "setup-mujoco: fetching the mujoco==$MUJOCO_VERSION wheel from PyPI" >&2
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 "mujoco==$MUJOCO_VERSION" -d "$wheels"
fi
wheel=$(ls "$wheels"/mujoco-$MUJOCO_VERSION-*.whl | head -n 1)
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
python3 - "$wheel" "$dest.tmp" "$MUJOCO_VERSION" <<'PY'
import os, sys, zipfile
wheel, out, version = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name == f"mujoco/libmujoco.so.{version}":
            target = os.path.join(out, "lib", os.path.basename(name))
        elif name.startswith("mujoco/include/mujoco/") and not name.endswith("/"):
            target = os.path.join(out, "include", name[len("mujoco/include/"):])
        elif name.startswith("mujoco/plugin/") and name.endswith(".so"):
            target = os.path.join(out, "plugin", os.path.basename(name))
        else:
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(name) as src, open(target, "wb") as dst:
            dst.write(src.read())
PY
ln -s "libmujoco.so.$MUJOCO_VERSION" "$dest.tmp/lib/libmujoco.so"
rm -rf "$dest" && mv "$dest.tmp" "$dest"
echo "setup-mujoco: MuJoCo $MUJOCO_VERSION installed in $dest" >&2
