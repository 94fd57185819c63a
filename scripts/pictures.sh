#!/usr/bin/env bash
# Draws the README's pictures (docs/pictures/*.svg) with `layoutcheck show`: one
# case per family, and the picture of a failure (the MegEngine mutant that swaps
# H and W, as `repro --picture` writes it).
#   scripts/pictures.sh [BUILD_DIR]   (default build, the dev preset's)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
lc="$build/bin/layoutcheck"
mutant="$build/lib/libmutant_mge_swapped_hw.so"
[ -x "$lc" ] && [ -f "$mutant" ] || { echo "pictures: build first (cmake --build --preset dev)" >&2; exit 2; }
out=docs/pictures
mkdir -p "$out"
show() {  # NAME LAYOUT DTYPE SHAPE [OPTIONS...]
  local name="$1" layout="$2" dtype="$3" shape="$4"
  shift 4
  "$lc" show "$layout" --dtype "$dtype" --shape "$shape" --format svg --out "$out/$name.svg" "$@"
}
show tpu 'tpu.aligned(npus=4,lmem=512)' fp32 2,6,2,3 --max-rows 6
show htp htp.depth32 int8 1,1,5,40 --max-rows 16
show tla tla.zN fp32 32,16 --max-rows 64
show nvdla nvdla.feature int8 40,2,2 --max-rows 16
show mge mge.nchw4 int8 1,6,2,3
# The failure: the plugin's name is the path it was loaded from; the picture
# names the file only, so it is the same on every machine.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$lc" repro mge.nchw4 --dtype int8 --shape 1,1,2,3 --impl "$mutant" --picture "$work/failure.svg" >/dev/null || true
[ -f "$work/failure.svg" ] || { echo "pictures: repro wrote no failure picture" >&2; exit 1; }
sed "s#$(cd "$(dirname "$mutant")" && pwd)/##g" "$work/failure.svg" >"$out/failure.svg"
ls -l "$out"
