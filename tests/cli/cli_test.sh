#!/usr/bin/env bash
# The CLI as other tools drive it: outputs, round trips and exit statuses.
set -u
lc="$1"
no_offset_plugin="${2:-}"   # a plugin without offset_bits (tests/oracle/no_offset_plugin.c)
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
"$lc" describe "$L" --dtype fp32 --shape 2,3,4,5 --json | grep -q '"n_stride": 64' || fail "describe --json n_stride"

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

# Oracles: a changed expectation fails (1), a malformed file is bad input (2).
mkdir -p "$tmp/oracles"
oracle_case() {  # SOURCE ID FACT_LINE
  printf 'source: %s\ncase: %s\nlayout: tpu.aligned(npus=4,lmem=1024,addr=2048)\ndtype: fp32\nshape: 2,3,4,5\n' "$1" "$2"
  printf 'offset 1,2,0,0 = 384\n%s\n' "$3"
}
tpu_src='sophgo-tpu-okkernel-local-memory.txt § 128-Byte Aligned Layout'
oracle_case "$tpu_src" t/a 'fact n_stride = 64' > "$tmp/oracles/a.oracle"
"$lc" oracle --dir "$tmp/oracles" > "$tmp/out" || fail "oracle --dir: $(cat "$tmp/out")"
grep -q '^1 passed, 0 failed, 0 skipped$' "$tmp/out" || fail "oracle summary: $(tail -1 "$tmp/out")"
grep -q 'facts from reference' "$tmp/out" || fail "oracle names who answered the facts: $(cat "$tmp/out")"
oracle_case "$tpu_src" t/a 'fact n_stride = 999' > "$tmp/oracles/a.oracle"
"$lc" oracle --dir "$tmp/oracles" > "$tmp/out"
expect_eq "$?" "1" "oracle with a wrong fact"
grep -q 'a.oracle:7: t/a: n_stride: expected 999, got 64' "$tmp/out" || fail "wrong fact message: $(cat "$tmp/out")"
oracle_case "$tpu_src" t/a 'fact n_stride = 64' | sed 's/= 384/= 385/' > "$tmp/oracles/a.oracle"
"$lc" oracle --dir "$tmp/oracles" --impl reference > /dev/null
expect_eq "$?" "1" "oracle with a wrong offset"
oracle_case "$tpu_src" t/a 'fact n_strid = 64' > "$tmp/oracles/a.oracle"
"$lc" oracle --dir "$tmp/oracles" > /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "oracle with an unknown fact"
grep -q "a.oracle:7: case t/a: unknown fact 'n_strid'.*n_stride" "$tmp/err" || fail "unknown fact message: $(cat "$tmp/err")"
oracle_case "sophgo-tpu-okkernel-local-memory.txt § 64-Byte Aligned Layout" t/a 'fact n_stride = 64' > "$tmp/oracles/a.oracle"
"$lc" oracle --dir "$tmp/oracles" > /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "oracle citing a missing section"
grep -q "a.oracle:1: .*no section heading '64-Byte Aligned Layout'" "$tmp/err" || fail "missing section message: $(cat "$tmp/err")"
oracle_case "sophgo-tpu-manual.txt § 128-Byte Aligned Layout" t/a 'fact n_stride = 64' > "$tmp/oracles/a.oracle"
"$lc" oracle --dir "$tmp/oracles" > /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "oracle citing a missing document"
grep -q "no document 'sophgo-tpu-manual.txt'" "$tmp/err" || fail "missing document message: $(cat "$tmp/err")"
"$lc" oracle --dir "$tmp/oracles" --spec-dir "$tmp" > /dev/null 2>&1
expect_eq "$?" "2" "oracle with a --spec-dir lacking the document"
oracle_case "$tpu_src" t/a 'fact n_stride = 64' > "$tmp/oracles/a.oracle"
oracle_case "$tpu_src" t/a 'fact n_stride = 64' > "$tmp/oracles/b.oracle"
"$lc" oracle --dir "$tmp/oracles" > /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "oracle with a duplicate id"
grep -q "duplicate case id 't/a': .*a.oracle:2 and .*b.oracle:2" "$tmp/err" || fail "duplicate id message: $(cat "$tmp/err")"

# The precision oracles run too.
"$lc" oracle --id 'table/conv/1' | grep -q '^table/conv/1 .* ok ' || fail "oracle runs the precision oracles"
mkdir -p "$tmp/precision"
printf 'case: p\nsource: nvdla-in-memory-data-formats.txt § Precision Conversion\ntable conv image-uint8 int8 = int16\n' \
  > "$tmp/precision/p.precision"
"$lc" oracle --dir "$tmp/precision" > "$tmp/out"
expect_eq "$?" "1" "oracle with a wrong precision table row"
grep -q 'p.precision:3: p: expected pipeline int16' "$tmp/out" || fail "precision failure message: $(cat "$tmp/out")"

# Oracles on plugins: unclaimed layouts are skipped, not failed.
libdir="$(dirname "$lc")/../lib"
"$lc" oracle --impl "$libdir/libtpu_plugin.so" > "$tmp/out" || fail "oracle on the tpu plugin: $(grep -A2 FAILED "$tmp/out")"
grep -q '^[1-9][0-9]* passed, 0 failed, [1-9][0-9]* skipped$' "$tmp/out" || fail "plugin oracle summary: $(tail -1 "$tmp/out")"
"$lc" oracle --impl "$libdir/libtpu_plugin.so" --id 'tpu/address/B' --json | grep -q '"status": "passed"' ||
  fail "oracle --json status"
"$lc" oracle --impl "$libdir/libtpu_plugin.so" --id 'htp/*' --json | grep -q '"status": "skipped"' ||
  fail "oracle --json skipped status"
"$lc" oracle --impl "$libdir/libmutant_tpu_ignore_start_npu.so" > "$tmp/out"
expect_eq "$?" "1" "oracle on a mutant plugin"
if [ -n "$no_offset_plugin" ]; then
  "$lc" oracle --impl "$no_offset_plugin" > "$tmp/out" || fail "oracle without offset_bits: $(grep -A2 FAILED "$tmp/out")"
  grep -q 'tpu/aligned/npu2 .*ok .*offsets through pack' "$tmp/out" || fail "offsets through pack: $(grep npu2 "$tmp/out")"
  grep -q '^tpu/matrix/.* skipped ' "$tmp/out" || fail "unclaimed tpu.matrix skipped"
fi

expect_eq "$("$lc" precision nvdla --layer conv --input int8 --output int8 | head -1)" "pipeline int8" "precision query"
"$lc" precision nvdla --layer lrn --input int8 --output fp16 > /dev/null
expect_eq "$?" "1" "invalid precision conversion exit status"
# 1.0 and +INF as fp32; nvdla saturates INF to the largest normal fp16 (0x7bff).
expect_eq "$(printf '\x00\x00\x80\x3f\x00\x00\x80\x7f' | "$lc" convert --rule nvdla --unit conv --from fp32 --to fp16 2>/dev/null | od -An -tx1 | tr -d ' \n')" \
  "003cff7b" "convert nvdla"
expect_eq "$(printf '\x00\x00\x80\x7f' | "$lc" convert --rule ieee --from fp32 --to fp16 2>/dev/null | od -An -tx1 | tr -d ' \n')" \
  "007c" "convert ieee"
# nvdla-float: 2.5 in the SDP's fp32 to int16 is the tie 2 (ties to even); INF is 32767.
expect_eq "$(printf '\x00\x41\x00\x7c' | "$lc" convert --rule nvdla-float --unit sdp --from fp16 --to int16 2>/dev/null | od -An -tx1 | tr -d ' \n')" \
  "0200ff7f" "convert nvdla-float"
"$lc" convert --rule nvdla-float --unit sdp --from fp16 --to int8 < /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "nvdla-float fp16 -> int8 is an invalid case"
grep -q 'row 7: fp16 feature data -> int8: Invalid case' "$tmp/err" || fail "nvdla-float names the SDP table row: $(cat "$tmp/err")"
# An SDP layer converting int16 -> int8 reads its BN data at processing precision int8.
expect_eq "$("$lc" precision nvdla --layer sdp --input int16 --output int8 --data 'nvdla.sdp.channel(use=bn,proc=int8)@int16@8,2' | head -1)" \
  "ok" "SDP layer with int8 BN data"
"$lc" precision nvdla --input int16 --output int8 --data 'nvdla.sdp.channel(use=bn,proc=int16)@int16@8,2' > "$tmp/out"
expect_eq "$?" "1" "SDP layer with int16 BN data"
grep -q '^rule: nvdla.precision/sdp-data-processing-precision' "$tmp/out" || fail "SDP layer rule: $(cat "$tmp/out")"
"$lc" precision nvdla --mode on-flying --conv dc/int8/int8 --input int8 --output int16 > "$tmp/out"
expect_eq "$?" "1" "on-flying int8 -> int16"
grep -q '^rule: nvdla.precision/on-flying-same-bit-depth' "$tmp/out" || fail "on-flying rule: $(cat "$tmp/out")"

# CATLASS TLA: nested coordinates, layouts of any rank, get<I...>, tiles by their origin shape.
Z='((4,2),(4,3)):((4,16),(1,32))'
for impl in reference optimized; do
  expect_eq "$("$lc" offset "$Z" --impl $impl --dtype int8 --shape 8,12 --at '((1,0),(1,1))' --at '(1,(1,1))' --at 1,5 | tr '\n' ' ')" \
    "37 37 37 " "offset --at nested ($impl)"
  expect_eq "$("$lc" offset '(2,(2,2),3):(1,(2,12),4)' --impl $impl --dtype int8 --shape 2,4,3 --at '(1,(1,1),2)' --at 1,3,2 | tr '\n' ' ')" \
    "23 23 " "offset of a 3-mode layout ($impl)"
  expect_eq "$("$lc" offset '(8):(1)' --impl $impl --dtype fp16 --shape 8 --at 5)" "10" "offset of (8):(1) ($impl)"
done
"$lc" offset "$Z" --dtype int8 --shape 8,12 --at '((4,0),(1,1))' > /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "a nested coordinate outside its mode"
"$lc" offset "$Z" --dtype int8 --shape 8,12 --at '((1,0),(1,1),(0,0))' > /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "a nested coordinate of three parts for two modes"
"$lc" describe "$Z" --dtype int8 --shape 8,12 --get 1,0 --get 1 > "$tmp/get" || fail "describe --get"
grep -q '^get<1,0> *4:1$' "$tmp/get" || fail "get<1,0>: $(cat "$tmp/get")"
grep -q '^get<1> *(4,3):(1,32)$' "$tmp/get" || fail "get<1>: $(cat "$tmp/get")"
grep -q '^rank<1> *2$' "$tmp/get" || fail "rank<1>"
grep -q '^depth<1,0> *0$' "$tmp/get" || fail "depth<1,0>"
grep -q '^shape<1> *(4,3)$' "$tmp/get" || fail "shape<1>"
grep -q '^stride<1> *(1,32)$' "$tmp/get" || fail "stride<1>"
"$lc" describe "$Z" --dtype int8 --shape 8,12 --get 0,1 --json | grep -q '"stride<0,1>": 16' || fail "describe --get --json"
"$lc" describe "$Z" --dtype int8 --shape 8,12 --get 2 > /dev/null 2> "$tmp/err"
expect_eq "$?" "2" "get<2> of a rank-2 layout"
grep -q 'I < rank' "$tmp/err" || fail "get<2> message: $(cat "$tmp/err")"
"$lc" describe tla.zN --dtype fp16 --shape 30,43 --get 0 | grep -q '^shape<0> *(_16,2)$' || fail "get<0> of tla.zN"
"$lc" describe "$L" --dtype fp32 --shape 2,3,4,5 --get 0 > /dev/null 2>&1
expect_eq "$?" "2" "--get of a layout without modes"
T='MakeLayoutTile(((16,2),(16,3)):((16,256),(1,512)),(30,43))'
"$lc" describe "$T" --dtype fp16 --shape 30,43 | grep -q '^padded_shape *32,48$' || fail "tile by its origin shape"
head -c 2580 /dev/urandom > "$tmp/tile"
"$lc" pack "$T" --dtype fp16 --shape 30,43 --in "$tmp/tile" --out "$tmp/tile.phys" || fail "pack of a tile by its origin shape"
expect_eq "$(wc -c < "$tmp/tile.phys" | tr -d ' ')" "3072" "tile physical size"
expect_eq "$(od -An -tx1 -j 960 -N 2 "$tmp/tile.phys" | tr -d ' \n')" "0000" "tile padding (row 30) is 0"

# The check table's columns stay aligned when a layout name is longer than the default column.
"$lc" check --cases 2 --layout 'htp.channel_major_crouton' > "$tmp/table" 2> /dev/null
header=$(grep -m1 '^layout ' "$tmp/table")
row=$(grep -m1 '^htp.channel_major_crouton ' "$tmp/table")
hs=$(awk '{ print index($0, "status") }' <<< "$header")
rs=$(awk '{ print match($0, / (PASSED|SKIPPED|FAILED)$/) + 1 }' <<< "$row")
expect_eq "$rs" "$hs" "check table: the status column of a long layout name"

echo "cli: $failures failed"
exit $((failures > 0))
