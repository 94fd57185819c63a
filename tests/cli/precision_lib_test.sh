#!/usr/bin/env bash
# layoutcheck precision nvdla --lib: a library's own precision tables and SDP layer
# rules against the reference.
#   precision_lib_test.sh LAYOUTCHECK JSON_CHECK LIB_DIR OTHER_LIB
# LIB_DIR holds libprecision_tables_example.so and its variants
# (examples/plugins/precision_tables_example.c); OTHER_LIB exports neither function.
set -u
lc="$1"
json_check="$2"
libs="$3"
other="$4"
source "$(dirname "${BASH_SOURCE[0]}")/lib_check_common.sh"

expect "example" 0 "precision tables: 4 passed, 0 failed" "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so"
expect "example asks every row" 0 "Precision conversion for SDP layer \(offline mode\) +passed \(21 questions\)" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so"
expect "SDP int8 -> fp16" 1 "sdp int8 -> fp16: expected Invalid case, got valid" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_sdp_int8_fp16.so"
expect "SDP pipeline" 1 "sdp fp16 -> int16: expected valid, real precision in pipeline fp32, got valid, real precision in pipeline fp16" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_sdp_pipeline.so"
expect "fp16 images" 1 "Precision conversion for convolutional layer +FAILED on 2 of 21" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_image_fp16.so"
expect "fp16 images, one failed table" 1 "precision tables: 3 passed, 1 failed" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_image_fp16.so"
expect "no such function" 2 "exports neither nvdla_precision_supported nor nvdla_layer_supported" \
  "$lc" precision nvdla --lib "$other"
expect "no such file" 2 "cannot read" "$lc" precision nvdla --lib "$tmp/none.so"
expect "with table options" 2 "does not go with --lib" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so" --layer conv

"$lc" precision nvdla --lib "$libs/libprecision_tables_sdp_int8_fp16.so" --json > "$tmp/json"
[ $? = 1 ] || fail "--json of a wrong table does not exit 1"
"$json_check" precision < "$tmp/json" > "$tmp/check" 2>&1 || fail "json: $(cat "$tmp/check")"
grep -q '"command": "precision"' "$tmp/json" || fail "the JSON report is not the precision command's"
grep -q '"first_failure": "sdp int8 -> fp16' "$tmp/json" || fail "the JSON report does not name the row: $(cat "$tmp/json")"

# The SDP layer rules (nvdla_layer_supported).
expect "example layers" 0 "layer rules: passed" "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so"
expect "example asks every layer" 0 "^  passed \(68565 layers\)$" "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so"
# The example's layer check reads its own SDP table, so its table mistake shows there too.
expect "a table mistake in the layers" 1 "layer offline int8 fp16: expected invalid by nvdla.precision/sdp-offline-table, got valid" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_sdp_int8_fp16.so"
expect "tables only" 0 "^  not exported \(skipped\): the layer rules are not checked$" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_tables_only.so"
grep -q "layer rules: not provided" "$tmp/out" || fail "tables only: no 'layer rules: not provided' in $(cat "$tmp/out")"
grep -q "precision tables: 4 passed, 0 failed" "$tmp/out" || fail "tables only: the tables are not checked"

expect "on-flying, any bit depth" 1 \
  "layer on-flying int8 int16 conv=dc/int8/int8: expected invalid by nvdla.precision/on-flying-same-bit-depth, got valid" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_on_flying_any_depth.so"
grep -q "expected invalid by nvdla.precision/on-flying-same-bit-depth: 714" "$tmp/out" || \
  fail "on-flying, any bit depth: the disagreements are not all on-flying-same-bit-depth: $(tail -5 "$tmp/out")"
grep -q "expected invalid by nvdla.precision/sdp-data-processing-precision:" "$tmp/out" && \
  fail "on-flying, any bit depth: disagreements on another rule: $(tail -5 "$tmp/out")"
expect "BN data stays int16" 1 \
  "layer offline int16 int8 data=nvdla.sdp.channel\(use=bn,proc=int16\)@int(8|16)@8,2: expected invalid by nvdla.precision/sdp-data-processing-precision, got valid" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_bn_keeps_int16.so"
grep "got valid" "$tmp/out" | grep -v "use=bn,proc=int16" && fail "BN data stays int16: a disagreement without BN data at int16"
expect "element-wise data stays int16" 1 \
  "layer offline int16 int8 .*data=nvdla.sdp.element\(use=ew2?,proc=int16\)@int(8|16)@4,2,3,[12]: expected invalid by nvdla.precision/sdp-data-processing-precision, got valid" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_ew_keeps_int16.so"
grep "got valid" "$tmp/out" | grep -v "use=ew2\?,proc=int16" && fail "element-wise data stays int16: a disagreement without EW data at int16"

# The repro line of a disagreement asks that layer alone, and fails the same way.
"$lc" precision nvdla --lib "$libs/libprecision_tables_bn_keeps_int16.so" > "$tmp/bn" 2>&1
repro=$(grep -m1 "repro: layoutcheck " "$tmp/bn" | sed 's/^ *repro: layoutcheck //')
[ -n "$repro" ] || fail "no repro line in $(head -c 2000 "$tmp/bn")"
eval "expect 'repro' 1 'FAILED on 1 of 1 layers' \"\$lc\" $repro"
grep -q "expected invalid by nvdla.precision/sdp-data-processing-precision, got valid" "$tmp/out" || \
  fail "the repro does not give the disagreement: $(cat "$tmp/out")"
expect "one layer, the example" 0 "passed \(1 layer\)" "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so" \
  --mode on-flying --input int8 --output int16 --conv dc/int8/int8
expect "one layer needs the function" 2 "exports no nvdla_layer_supported" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_tables_only.so" --input int16 --output int8
expect "one layer, bad input" 2 "unknown input format 'bogus'" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so" --input bogus --output int8
expect "one layer on-flying without conv" 2 "needs --conv" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so" --mode on-flying --input int8 --output int8

# A library that breaks the function's contract gets a clear verdict, never a crash of layoutcheck.
expect "crash" 2 "bad library .*crashed with signal 11 \(SIGSEGV.*during nvdla_layer_supported" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_layer_crash.so"
grep -q "it was asking layer on-flying int8 int8 conv=winograd/image-uint8/int8$" "$tmp/out" ||
  fail "crash: the layer it crashed on is not named: $(cat "$tmp/out")"
repro=$(grep -m1 "repro: layoutcheck " "$tmp/out" | sed 's/^ *repro: layoutcheck //')
eval "expect 'crash, repro' 2 'crashed with signal 11 .*over 1 layer\\)' \"\$lc\" $repro"
LAYOUTCHECK_PLUGIN_TIMEOUT=1 expect "hang" 2 "did not finish within 1 s during nvdla_layer_supported" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_layer_hang.so"
grep -q "it was asking layer on-flying " "$tmp/out" || fail "hang: the layer it hung on is not named: $(cat "$tmp/out")"
expect "unreadable rule" 1 "got invalid, \*rule set to 0x10, which cannot be read" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_layer_bad_rule.so"
expect "seven" 1 "got an answer of 7 \(1 valid or 0 invalid expected\)" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_layer_seven.so"

"$lc" precision nvdla --lib "$libs/libprecision_tables_on_flying_any_depth.so" --json > "$tmp/json"
[ $? = 1 ] || fail "--json of a wrong layer function does not exit 1"
"$json_check" precision < "$tmp/json" > "$tmp/check" 2>&1 || fail "layer json: $(cat "$tmp/check")"
grep -q '"invalid by nvdla.precision/on-flying-same-bit-depth": 714' "$tmp/json" || fail "the JSON report does not count the rule"
grep -q '"repro": "layoutcheck precision nvdla --lib ' "$tmp/json" || fail "the JSON report has no repro line"

[ "$failures" = 0 ] && echo "precision_lib_test: all passed"
exit $((failures > 0))
