#!/usr/bin/env bash
# layoutcheck tuple: a library's own IntTuple functions against the reference.
#   tuple_test.sh LAYOUTCHECK JSON_CHECK LIB_DIR NO_TUPLE_LIB
# LIB_DIR holds libtla_tuple_example.so and its variants (examples/plugins/tla_tuple_example.c).
set -u
lc="$1"
json_check="$2"
libs="$3"
no_tuple="$4"  # a library exporting none of the functions
source "$(dirname "${BASH_SOURCE[0]}")/lib_check_common.sh"

expect "example" 0 "tuple: 3 passed, 0 failed, 0 not provided" "$lc" tuple --lib "$libs/libtla_tuple_example.so"
grep -qE "tla_get +passed \([0-9]+ inputs\)" "$tmp/out" || fail "example: tla_get not passed: $(cat "$tmp/out")"

expect "depth of an integer 1" 1 "tla_depth +FAILED" "$lc" tuple --lib "$libs/libtla_tuple_depth_of_integer_1.so"
grep -q "first at 2: expected 0, actual 1" "$tmp/out" || fail "depth mutant: first difference not named: $(cat "$tmp/out")"
grep -qE "tla_rank +passed" "$tmp/out" || fail "depth mutant: tla_rank not passed"
expect "get skips one node" 1 "tla_get +FAILED" "$lc" tuple --lib "$libs/libtla_tuple_get_skips_one_node.so"
grep -q "first at ((16,2),(16,3)), I = 1: expected node 4 ((16,3)), actual node 2 (16)" "$tmp/out" ||
  fail "get mutant: first difference not named: $(cat "$tmp/out")"
expect "rank counts integers" 1 "tla_rank +FAILED" "$lc" tuple --lib "$libs/libtla_tuple_rank_counts_leaves.so"
grep -q "first at (2,_3)" "$tmp/out" && fail "rank mutant: (2,_3) has rank 2 and 2 integers"
grep -q "first at ((16,2),(16,3)): expected 2, actual 4" "$tmp/out" || fail "rank mutant: first difference not named: $(cat "$tmp/out")"

expect "get past the end" 1 "tla_get +FAILED" "$lc" tuple --lib "$libs/libtla_tuple_get_past_end.so"
grep -q "first at (2,_3), I = 2: expected NULL, actual a pointer outside the tuple's nodes" "$tmp/out" ||
  fail "get past the end: first difference not named: $(cat "$tmp/out")"

expect "partial library" 0 "tuple: 1 passed, 0 failed, 2 not provided" "$lc" tuple --lib "$libs/libtla_tuple_partial.so"
grep -qE "tla_get +not provided \(skipped\)" "$tmp/out" || fail "partial: tla_get not reported as not provided"
expect "read past the tuple" 2 "bad library .*libtla_tuple_read_past.so: .*during tla_depth" "$lc" tuple --lib "$libs/libtla_tuple_read_past.so"

LAYOUTCHECK_PLUGIN_TIMEOUT=1 expect "hang" 2 "did not finish within 1 s during tla_rank" \
  "$lc" tuple --lib "$libs/libtla_tuple_hang.so"
expect_unloadable tuple
expect "no tuple symbol" 2 "exports none of tla_rank, tla_depth, tla_get" "$lc" tuple --lib "$no_tuple"
expect "unknown option" 2 "" "$lc" tuple --lib "$libs/libtla_tuple_example.so" --chip bm1684

"$lc" tuple --lib "$libs/libtla_tuple_get_skips_one_node.so" --json > "$tmp/report.json"
[ $? = 1 ] || fail "json: exit status not 1"
"$json_check" tuple < "$tmp/report.json" > "$tmp/check" 2>&1 || fail "json: $(cat "$tmp/check")"
grep -q '"function": "tla_get",' "$tmp/report.json" || fail "json: no function entry"
grep -q '"status": "failed"' "$tmp/report.json" || fail "json: no failed status"
"$lc" tuple --lib "$libs/libtla_tuple_partial.so" --json > "$tmp/partial.json" || fail "json: partial library exits $?"
"$json_check" tuple < "$tmp/partial.json" > "$tmp/check" 2>&1 || fail "json partial: $(cat "$tmp/check")"
grep -q '"not_provided": 2' "$tmp/partial.json" || fail "json partial: not_provided is not 2"

echo "tuple: $failures failed"
[ "$failures" = 0 ]
