#!/usr/bin/env bash
# The HTML page of `layoutcheck show`, one case per family, loaded in headless
# Chromium: the screenshot is not blank and the DOM after the page's script ran
# holds every physical cell the page declares (data-cells). A blank page and a
# page with a cell missing are shown to fail the checks.
#   browser_test.sh LAYOUTCHECK PNG_CHECK
# Exit 77 (skipped) when Chromium is not installed (scripts/deps.sh --browser).
set -euo pipefail
lc="$1"; png_check="$2"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (scripts/deps.sh --browser installs it)"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
flags=(--headless --disable-gpu --no-first-run --hide-scrollbars --user-data-dir="$work/profile"
       --window-size=1200,900 --virtual-time-budget=2000)
[ "$(id -u)" = 0 ] && flags+=(--no-sandbox)

render() {  # HTML NAME: screenshot and DOM dump, in one run of the browser
  (cd "$work" && timeout 120 "$browser" "${flags[@]}" --screenshot="$work/$2.png" --dump-dom "file://$1" \
     2>/dev/null >"$work/$2.dom") || fail "chromium could not load $1"
  [ -s "$work/$2.png" ] || fail "chromium took no screenshot of $1"
}
cells_of() { grep -o 'class="cell[" ]' "$1" | wc -l; }
declared() { grep -o 'data-cells="[0-9]*"' "$1" | head -1 | tr -dc 0-9; }

while IFS='|' read -r family layout dtype shape; do
  "$lc" show "$layout" --dtype "$dtype" --shape "$shape" --format html --out "$work/$family.html"
  render "$work/$family.html" "$family"
  "$png_check" "$work/$family.png" 8 || fail "$family: the screenshot is blank"
  want="$(declared "$work/$family.html")"
  got="$(cells_of "$work/$family.dom")"
  [ -n "$want" ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ] || fail "$family: $got cells in the DOM, the page declares $want"
  grep -q 'id="info"' "$work/$family.dom" || fail "$family: no info box in the DOM"
  echo "browser: $family: $got cells, screenshot rendered"
done <<'CASES'
tpu|tpu.aligned(npus=4,lmem=1024)|fp32|2,3,4,5
htp|htp.depth32|int8|1,2,5,40
tla|tla.zN|fp16|20,20
nvdla|nvdla.feature|int8|40,2,3
mge|mge.nchw4|int8|1,6,2,3
CASES

# The checks fail on a blank page and on a page that lost a cell.
printf '<!DOCTYPE html>\n<html><body style="background:#fff"></body></html>\n' >"$work/blank.html"
render "$work/blank.html" blank
if "$png_check" "$work/blank.png" 8 >/dev/null; then fail "png_check accepts a blank screenshot"; fi
sed '0,/<rect class="cell"/s//<rect class="gone"/' "$work/mge.html" >"$work/lost.html"
render "$work/lost.html" lost
[ "$(cells_of "$work/lost.dom")" != "$(declared "$work/lost.html")" ] || fail "the cell count does not notice a lost cell"
echo "browser: all checks passed"
