#!/usr/bin/env bash
# The README's pictures, drawn headless with --screenshot (no display needed): the default
# robot, the Panda and the Go1 standing, and four moments of the Panda playing its wave
# preset. Writes docs/images/*.png; run it again after a change that shows.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-mujoco.sh
bash scripts/setup-render.sh
bash scripts/fetch-models.sh
cargo build --profile release-no-ros --no-default-features --bin mujoco_bridge
bridge=target/release-no-ros/mujoco_bridge
out=docs/images
mkdir -p "$out"
picture() {  # FILE SIZE VIEW ARGS...
  local file=$1 size=$2 view=$3
  shift 3
  rm -f "$out/$file"
  "$bridge" "$@" --mode fast --screenshot "$out/$file" --screenshot-size "$size" --screenshot-view "$view" \
    2>&1 | grep -E "^error|picture written" || true
  test -s "$out/$file"
}
picture default.png 960x540 135,-25,2.6 --steps 200
picture panda.png 960x540 150,-25,2.0 --config config/panda.yaml --steps 200
picture go1.png 960x540 135,-20,1.6 --config config/go1.yaml --keyframe stand \
  --set robots.0.control.source=ros --steps 300
for second in 1 2 3 4; do
  picture "panda-wave-$second.png" 320x240 150,-25,2.0 --config config/panda.yaml \
    --set 'robots.0.control.preset="Franka: Wave"' --set robots.0.control.autoplay=true \
    --set robots.0.control.source=player --duration "$second"
done
