#!/usr/bin/env bash
# The CLI as other tools drive it: outputs, round trips and exit statuses.
set -u
lc="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_eq() { [ "$1" == "$2" ] || fail "$3: expected '$2', got '$1'"; }

L='tpu.aligned(npus=4,lmem=1024,addr=2048)'
expect_eq "$("$lc" offset "$L" --dtype fp32 --shape 2,3,4,5 --at 0,2,0,0 --at 1,0,0,0 | tr '\n' ' ')" "128 2304 " "offset"
expect_eq "$("$lc" offset "$L" --impl reference --dtype fp32 --shape 2,3,4,5 --at 1,2,0,0)" "384" "offset --impl reference"

"$lc" list | grep -q '^tpu.aligned ' || fail "list lacks tpu.aligned"
"$lc" list --json | grep -q '"name": "tpu.matrix"' || fail "list --json lacks tpu.matrix"
"$lc" describe "$L" --dtype fp32 --shape 2,3,4,5 --json | grep -q '"n_stride": "64"' || fail "describe --json n_stride"

head -c 480 /dev/urandom > "$tmp/logical"
"$lc" pack "$L" --dtype fp32 --shape 2,3,4,5 --in "$tmp/logical" --out "$tmp/physical" || fail "pack"
expect_eq "$(wc -c < "$tmp/physical" | tr -d ' ')" "4096" "pack output size"
"$lc" pack "$L" --impl reference --dtype fp32 --shape 2,3,4,5 < "$tmp/logical" > "$tmp/physical.ref" || fail "pack stdin"
cmp -s "$tmp/physical" "$tmp/physical.ref" || fail "optimized and reference pack differ"
"$lc" unpack "$L" --dtype fp32 --shape 2,3,4,5 < "$tmp/physical" > "$tmp/back" || fail "unpack"
cmp -s "$tmp/logical" "$tmp/back" || fail "unpack(pack(x)) != x"

"$lc" offset 'tpu.nonesuch' --dtype fp32 --shape 1,1,1,1 --at 0,0,0,0 2> "$tmp/err"
expect_eq "$?" "2" "unknown layout exit status"
expect_eq "$(wc -l < "$tmp/err" | tr -d ' ')" "1" "one-line message"
grep -q "unknown layout 'tpu.nonesuch'" "$tmp/err" || fail "message names the layout: $(cat "$tmp/err")"
"$lc" pack "$L" --dtype fp32 --shape 2,3,4,5 < /dev/null > /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "short input exit status"
grep -q "input is 0 bytes" "$tmp/err" || fail "short input message: $(cat "$tmp/err")"
"$lc" offset "tpu.aligned(npus=4,lmem=1024,addr=100)" --dtype fp32 --shape 1,1,1,1 --at 0,0,0,0 2> "$tmp/err"
expect_eq "$?" "2" "invalid case exit status"
grep -q "not divisible by 128" "$tmp/err" || fail "invalid case message: $(cat "$tmp/err")"
"$lc" frobnicate > /dev/null 2>&1
expect_eq "$?" "2" "unknown command exit status"

"$lc" check --layout 'tpu.c*' --seconds 1 > "$tmp/check" 2> /dev/null || fail "check exit status"
grep -q 'tpu.compact .*PASSED' "$tmp/check" || fail "check table: $(cat "$tmp/check")"
grep -q '^check: [0-9]* passed, 0 failed' "$tmp/check" || fail "check summary line"
"$lc" check --layout 'nothing*' > /dev/null 2>&1
expect_eq "$?" "2" "check with an unmatched glob"
"$lc" repro "$L" --dtype fp16 --shape 3,5,2,2 | grep -q '^pass ' || fail "repro"
"$lc" oracle --id 'tpu/address/*' > /dev/null || fail "oracle subset"
"$lc" repro nvdla.feature --dtype fp16 --shape 20,2,2 --strict-padding | grep -q '^pass ' || fail "repro --strict-padding"
"$lc" describe nvdla.feature --dtype fp16 --shape 20,1,1 | grep -q '^free.nvdla.feature.channel-padding 24 bytes in 1 regions (40+24)' \
  || fail "describe lists free bytes"
"$lc" describe nvdla.feature --dtype fp16 --shape 20,1,1 --json | grep -q '"byte_rules": "element 40, fixed 0, free 24"' \
  || fail "describe --json byte rules"

expect_eq "$("$lc" precision nvdla --layer conv --input int8 --output int8 | head -1)" "pipeline int8" "precision query"
"$lc" precision nvdla --layer lrn --input int8 --output fp16 > /dev/null
expect_eq "$?" "1" "invalid precision conversion exit status"
# 1.0 and +INF as fp32; nvdla saturates INF to the largest normal fp16 (0x7bff).
expect_eq "$(printf '\x00\x00\x80\x3f\x00\x00\x80\x7f' | "$lc" convert --rule nvdla --unit conv --from fp32 --to fp16 2>/dev/null | od -An -tx1 | tr -d ' \n')" \
  "003cff7b" "convert nvdla"
expect_eq "$(printf '\x00\x00\x80\x7f' | "$lc" convert --rule ieee --from fp32 --to fp16 2>/dev/null | od -An -tx1 | tr -d ' \n')" \
  "007c" "convert ieee"

echo "cli: $failures failed"
exit $((failures > 0))
