#!/usr/bin/env bash
# The README's quick start, as written: the one-line build of
# examples/plugins/quickstart.c passes `check`, and the same plugin with H and
# W exchanged fails it.
#   quickstart_test.sh SOURCE_DIR LAYOUTCHECK
set -uo pipefail
src="$1"; cli="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
cc -shared -fPIC -I "$src/include" -o libnhwc.so "$src/examples/plugins/quickstart.c" || exit 1
out="$("$cli" check --impl ./libnhwc.so --layout mge.nhwc --cases 100 2>&1)"; status=$?
if [ "$status" != 0 ] || ! grep -q "mge.nhwc .* PASSED" <<<"$out"; then
  echo "FAIL: the quick-start plugin does not pass (exit $status):"; echo "$out"; fails=$((fails + 1))
fi
sed 's/(((n \* H + h) \* W + w) \* C + ch)/(((n * W + w) * H + h) * C + ch)/' "$src/examples/plugins/quickstart.c" >bug.c
grep -q 'n \* W + w' bug.c || { echo "FAIL: the H/W exchange no longer applies to quickstart.c"; exit 1; }
cc -shared -fPIC -I "$src/include" -o libbug.so bug.c || exit 1
out="$("$cli" check --impl ./libbug.so --layout mge.nhwc --cases 100 2>&1)"; status=$?
if [ "$status" != 1 ] || ! grep -q "FAIL 'mge.nhwc'" <<<"$out" || ! grep -q "repro: layoutcheck repro" <<<"$out"; then
  echo "FAIL: the quick-start plugin with H and W exchanged is not failed (exit $status):"; echo "$out"; fails=$((fails + 1))
fi
[ "$fails" = 0 ] && echo "quickstart: passed"
exit "$fails"
