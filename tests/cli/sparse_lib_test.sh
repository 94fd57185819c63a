#!/usr/bin/env bash
# layoutcheck sparse --lib: a library's own placement check of the NVDLA
# compressed-weight surfaces against the reference.
#   sparse_lib_test.sh LAYOUTCHECK JSON_CHECK LIB_DIR OTHER_LIB
# LIB_DIR holds libsparse_surfaces_example.so and its variants
# (examples/plugins/sparse_surfaces_example.c); OTHER_LIB exports no nvdla_sparse_surfaces_valid.
set -u
lc="$1"
json_check="$2"
libs="$3"
other="$4"
source "$(dirname "${BASH_SOURCE[0]}")/lib_check_common.sh"

expect "example" 0 "sparse: [0-9]+ placements, [0-9]+ agree, 0 differ" "$lc" sparse --lib "$libs/libsparse_surfaces_example.so"
grep -qE "[0-9]+ boundary placements, 2000 random ones \(--seed 1\)" "$tmp/out" || fail "example: counts not reported: $(cat "$tmp/out")"
expect "example, another seed" 0 ", 0 differ" "$lc" sparse --lib "$libs/libsparse_surfaces_example.so" --seed 7 --cases 5000

expect "128-byte start" 1 "expected invalid, nvdla.sparse/wgs-start-address-align-256" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_start_128.so"
grep -q "DIFFERS at wgs=128@0x10080 wmb=128@0x20000 data=256@0x30000" "$tmp/out" ||
  fail "128-byte start: the placement is not named: $(cat "$tmp/out")"
grep -q "actual   valid" "$tmp/out" || fail "128-byte start: the answer is not named: $(cat "$tmp/out")"
grep -q "repro    layoutcheck sparse --lib $libs/libsparse_surfaces_start_128.so --placement 'wgs=128@0x10080 " "$tmp/out" ||
  fail "128-byte start: no repro line: $(cat "$tmp/out")"
expect "128-byte start, repro" 1 "sparse: 1 placements, 0 agree, 1 differ" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_start_128.so" --placement 'wgs=128@0x10080 wmb=128@0x20000 data=256@0x30000'
expect "128-byte start, a placement it gets right" 0 "sparse: 1 placements, 1 agree, 0 differ" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_start_128.so" --placement 'wgs=128@0x10100,wmb=128@0x20000,data=256@0x30000'
expect "size rounded" 1 "expected invalid, nvdla.sparse/wgs-size-align-128" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_size_rounded.so"
expect "forgetting WMB" 1 "expected invalid, nvdla.sparse/wmb-start-address-align-256" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_forget_wmb.so"
grep -q "expected invalid, nvdla.sparse/wmb-size-align-128" "$tmp/out" || fail "forgetting WMB: the size rule is not named"
grep -q "expected invalid, nvdla.sparse/wgs" "$tmp/out" && fail "forgetting WMB: a WGS placement differs"
expect "wrapping end" 1 "expected invalid, nvdla.sparse/address-overflow" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_wrapping_end.so"
expect "empty surfaces overlap" 1 "actual +invalid, nvdla.sparse/surfaces-overlap" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_empty_overlaps.so"
tr -d '\n' < "$tmp/out" | grep -qE "expected valid +actual +invalid, nvdla.sparse/surfaces-overlap" ||
  fail "empty surfaces overlap: $(cat "$tmp/out")"

expect "read past the struct" 2 "bad library .*libsparse_surfaces_read_past.so: .*during nvdla_sparse_surfaces_valid" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_read_past.so"
expect "a rule pointer to nowhere" 2 "bad library .*libsparse_surfaces_bad_rule.so: .*SIGSEGV.*during nvdla_sparse_surfaces_valid" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_bad_rule.so"
LAYOUTCHECK_PLUGIN_TIMEOUT=1 expect "hang" 2 "did not finish within 1 s during nvdla_sparse_surfaces_valid" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_hang.so"
expect_unloadable sparse
expect "no such function" 2 "exports none of nvdla_sparse_surfaces_valid" "$lc" sparse --lib "$other"
expect "bad placement" 2 "placement names wgs, wmb and data once each" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_example.so" --placement 'wgs=128@0 wmb=128@0x100'
expect "bad number" 2 "a number of 64 bits expected" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_example.so" --placement 'wgs=128@0 wmb=128@0x100 data=1@0x1g'
expect "bad cases" 2 "--cases many is out of range: it takes a whole number from 0 to 1000000" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_example.so" --cases many
expect "too many cases" 2 "--cases 0xf4241 is out of range: it takes a whole number from 0 to 1000000" \
  "$lc" sparse --lib "$libs/libsparse_surfaces_example.so" --cases 0xf4241

"$lc" sparse --lib "$libs/libsparse_surfaces_forget_wmb.so" --json > "$tmp/json"
[ $? = 1 ] || fail "--json of a wrong library does not exit 1"
"$json_check" sparse < "$tmp/json" > "$tmp/check" 2>&1 || fail "json: $(cat "$tmp/check")"
grep -q '"command": "sparse"' "$tmp/json" || fail "the JSON report is not the sparse command's"
grep -q '"repro": "layoutcheck sparse --lib ' "$tmp/json" || fail "the JSON report has no repro: $(head -c 2000 "$tmp/json")"
"$lc" sparse --lib "$libs/libsparse_surfaces_example.so" --json > "$tmp/json" || fail "--json of the example exits $?"
"$json_check" sparse < "$tmp/json" > "$tmp/check" 2>&1 || fail "json example: $(cat "$tmp/check")"

[ "$failures" = 0 ] && echo "sparse_lib_test: all passed"
exit $((failures > 0))
