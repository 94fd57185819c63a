#!/usr/bin/env bash
# HTP ChunkedMemoryLayout cases through a plugin: a ScaleOffsetInterface case
# keeps its interface and offset in the case text a plugin, a repro line and a
# regression file see; the example plugin passes every parameter's range, and a
# plugin padding with 0 instead of the quantized 0 fails naming the case.
#   htp_chunked_plugin_test.sh LAYOUTCHECK CHUNKED_PLUGIN.so PAD_ZERO_MUTANT.so
set -u
lc="$1"
good="$2"
pad_zero="$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

quantized='ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>(interface=scale_offset,offset=58)'
"$lc" repro "$quantized" --dtype uint8 --shape 2,6 --impl "$good" > "$tmp/good" 2>&1 ||
  fail "the example plugin fails the quantized case: $(cat "$tmp/good")"
grep -qF "pass '$quantized' --dtype uint8" "$tmp/good" || fail "the pass line does not name the case: $(cat "$tmp/good")"
typed='ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>(interface=scale_offset,offset=-3,pad=7)'
"$lc" repro "$typed" --dtype int16 --shape 3,5 --impl "$good" > "$tmp/typed" 2>&1 ||
  fail "the example plugin fails a signed quantized case with its own pad: $(cat "$tmp/typed")"

"$lc" repro "$quantized" --dtype uint8 --shape 2,6 --impl "$pad_zero" > "$tmp/bad" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "a plugin padding with 0 exits $rc, not 1: $(cat "$tmp/bad")"
grep -qF "expected 0x3a, actual 0x00" "$tmp/bad" || fail "the failure does not name the quantized 0: $(cat "$tmp/bad")"
grep -qF "repro: layoutcheck repro '$quantized'" "$tmp/bad" || fail "the repro line loses the interface: $(cat "$tmp/bad")"

# A saved failure of a quantized case replays as that case.
"$lc" check --impl "$pad_zero" --layout htp.chunked --cases 200 --save "$tmp/saved" > "$tmp/check" 2>&1
[ "$?" = 1 ] || fail "check of a plugin padding with 0 does not fail: $(tail -3 "$tmp/check")"
saved=$(grep -l 'interface=scale_offset' "$tmp"/saved/* 2>/dev/null | grep -v '\.\(svg\|html\)$' | head -1)
if [ -z "$saved" ]; then
  fail "no saved failure of a ScaleOffsetInterface case: $(ls "$tmp/saved" 2>&1)"
else
  "$lc" replay "$saved" --impl "$pad_zero" > "$tmp/replay" 2>&1
  [ "$?" = 1 ] || fail "the saved case does not fail again: $(cat "$tmp/replay")"
  grep -qF "interface=scale_offset" "$tmp/replay" || fail "the replay loses the interface: $(cat "$tmp/replay")"
fi

# The example plugin drives every parameter of htp.chunked to its minimum and maximum.
"$lc" check --impl "$good" --layout htp.chunked --cases 200 > "$tmp/all" 2>&1 ||
  fail "check of the example plugin fails: $(tail -5 "$tmp/all")"
grep -q "every parameter took a non-default value, its minimum and its maximum" "$tmp/all" ||
  fail "the check leaves a parameter of htp.chunked undrawn: $(grep -A3 'parameter coverage' "$tmp/all")"
grep -qE "^check: [1-9][0-9]* passed, 0 failed" "$tmp/all" || fail "no passed cases: $(tail -1 "$tmp/all")"

[ "$failures" = 0 ] && echo "htp chunked plugin: ok"
exit $((failures > 0))
