#!/usr/bin/env bash
# layoutcheck show and the pictures of a failure.
#   show_test.sh LAYOUTCHECK NO_OFFSET_PLUGIN MUTANT_PLUGIN
# - every registered layout (tests/show/cases.txt) is drawn as a page, well-formed XML (xmllint)
#   and the same bytes on a second run; one case per family also as SVG;
# - the text form of one case per family equals its golden file (UPDATE_GOLDEN=1 rewrites them);
# - a plugin without offset_bits (located through pack) gives the reference's picture;
# - a 64 MiB case answers with a capped picture that states what it leaves out;
# - check --save, replay --picture and repro --picture write a failure picture.
# Each kind of check is also shown to fail: a broken SVG, a changed golden text.
set -euo pipefail
lc="$1"; no_offset="$2"; mutant="$3"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xmllint >/dev/null || fail "xmllint is missing (scripts/deps.sh installs libxml2-utils)"

# Every registered layout has a case.
"$lc" list | awk '/^[a-z]/ {print $1}' | sort >"$work/registered"
grep -v '^#' "$here/cases.txt" | cut -d'|' -f1 | sort >"$work/listed"
diff "$work/registered" "$work/listed" >/dev/null || fail "tests/show/cases.txt does not list every registered layout: $(diff "$work/registered" "$work/listed" | tr '\n' ' ')"

n=0
while IFS='|' read -r name layout dtype shape; do
  [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
  # The page holds the SVG (the text and SVG renderers of every layout are also run by
  # the unit test Picture.PackLocatesWhatOffsetBitsSaysOnEveryLayout).
  "$lc" show "$layout" --dtype "$dtype" --shape "$shape" --format html --out "$work/a.html" ||
    fail "show $name --format html"
  "$lc" show "$layout" --dtype "$dtype" --shape "$shape" --format html --out "$work/b.html"
  cmp -s "$work/a.html" "$work/b.html" || fail "show $name --format html is not deterministic"
  xmllint --noout "$work/a.html" || fail "show $name: the page is not well-formed"
  grep -q 'class="cell' "$work/a.html" || fail "show $name: no physical cells in the page"
  n=$((n + 1))
done <"$here/cases.txt"
echo "show: $n layouts drawn"

# The well-formedness check fails on broken output.
"$lc" show nvdla.feature --dtype int8 --shape 40,2,3 --format svg --out "$work/good.svg"
sed '$d' "$work/good.svg" >"$work/broken.svg"
if xmllint --noout "$work/broken.svg" 2>/dev/null; then fail "xmllint accepts an SVG without its closing tag"; fi
sed 's/<\/text>/<\/txet>/' "$work/good.svg" >"$work/broken.svg"
if xmllint --noout "$work/broken.svg" 2>/dev/null; then fail "xmllint accepts mismatched tags"; fi

# Golden text, one case per family; SVG well-formed and deterministic, one case per family.
golden() {  # FAMILY LAYOUT DTYPE SHAPE
  local file="$here/golden/$1.txt"
  "$lc" show "$2" --dtype "$3" --shape "$4" >"$work/$1.txt"
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$work/$1.txt" "$file"; fi
  diff -u "$file" "$work/$1.txt" || fail "show $2 --dtype $3 --shape $4 differs from $file"
  "$lc" show "$2" --dtype "$3" --shape "$4" --format svg --out "$work/$1.svg"
  "$lc" show "$2" --dtype "$3" --shape "$4" --format svg --out "$work/$1.again.svg"
  cmp -s "$work/$1.svg" "$work/$1.again.svg" || fail "show $2 --format svg is not deterministic"
  xmllint --noout "$work/$1.svg" || fail "show $2: the SVG is not well-formed"
}
golden tpu 'tpu.aligned(npus=4,lmem=1024)' fp32 2,3,4,5
golden htp htp.depth32 int8 1,2,5,40
golden tla tla.zN fp16 20,20
golden nvdla nvdla.feature int8 40,2,3
golden mge mge.nchw4 int8 1,6,2,3
# A broadcast view: the elements sharing a cell are one cell, * in the broadcast dimension.
golden mge-broadcast 'mge.strided(strides=0:1)' fp32 2,3
grep -qF '  +0    *,0 *,1 *,2' "$here/golden/mge-broadcast.txt" || fail "the broadcast golden does not group the shared cells"
# The golden comparison fails on a changed text.
"$lc" show mge.nchw4 --dtype int8 --shape 1,7,2,3 >"$work/other.txt"
if cmp -s "$here/golden/mge.txt" "$work/other.txt"; then fail "a different case matches the mge golden text"; fi

# Offsets through pack (no offset_bits) draw the same picture.
for f in text svg; do
  "$lc" show 'tpu.aligned(npus=4,lmem=1024)' --dtype fp32 --shape 2,3,4,5 --format $f | grep -v 'located by' >"$work/ref.$f"
  "$lc" show 'tpu.aligned(npus=4,lmem=1024)' --dtype fp32 --shape 2,3,4,5 --format $f --impl "$no_offset" >"$work/plugin.$f"
  grep -q 'located by pack' "$work/plugin.$f" || fail "the plugin without offset_bits was not located through pack"
  grep -v 'located by' "$work/plugin.$f" | sed "s#$no_offset#reference#g" >"$work/plugin2.$f"
  cmp -s "$work/ref.$f" "$work/plugin2.$f" || fail "located through pack, the $f picture differs from the reference's"
done

# A 64 MiB case: a capped picture that states the elided range.
"$lc" show mge.nchw4 --dtype int8 --shape 1,64,1024,1024 --impl optimized >"$work/big.txt"
grep -q '^capped: bytes 4096..67108863 of 67108864 not drawn' "$work/big.txt" || fail "the 64 MiB picture does not state its elision: $(head -3 "$work/big.txt")"

# Bad input: a clear error, exit 2.
set +e
"$lc" show mge.nchw4 --dtype int8 --shape 1,6,2,3 --format png >/dev/null 2>"$work/err"; rc=$?
set -e
[ $rc = 2 ] && grep -q 'text, svg or html' "$work/err" || fail "--format png: exit $rc, $(cat "$work/err")"

# Pictures of a failure.
set +e
"$lc" check --impl "$mutant" --layout mge.nchw4 --cases 20 --save "$work/save" >"$work/check.out" 2>/dev/null; rc=$?
set -e
[ $rc = 1 ] || fail "check of the mutant exits $rc"
svg=$(ls "$work"/save/*.svg | head -1)
[ -f "${svg%.svg}.html" ] && [ -f "${svg%.svg}.txt" ] || fail "check --save wrote no SVG and HTML beside the regression file"
xmllint --noout "$svg" "${svg%.svg}.html"
grep -q 'class="cell differs"' "$svg" || fail "the failure picture outlines no cell"
grep -q 'look swapped' "$svg" || fail "the failure picture has no diagnosis caption"
grep -q "picture: $svg" "$work/check.out" || fail "check does not print the picture's path"
set +e
"$lc" replay "$work/save" --impl "$mutant" --picture "$work/replayed/" >"$work/replay.out"; rc=$?
"$lc" repro mge.nchw4 --dtype int8 --shape 1,1,2,3 --impl "$mutant" --picture "$work/repro.svg" >"$work/repro.out"; rc2=$?
set -e
[ $rc = 1 ] && [ $rc2 = 1 ] || fail "replay exits $rc, repro $rc2"
[ -f "$work/replayed/$(basename "$svg")" ] || fail "replay --picture DIR wrote no $(basename "$svg")"
grep -q "picture: $work/repro.svg" "$work/repro.out" && [ -f "$work/repro.html" ] || fail "repro --picture: $(tail -2 "$work/repro.out")"
xmllint --noout "$work/repro.svg"
echo "show: all checks passed"
