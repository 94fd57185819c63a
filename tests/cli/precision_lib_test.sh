#!/usr/bin/env bash
# layoutcheck precision nvdla --lib: a library's own precision tables against the reference.
#   precision_lib_test.sh LAYOUTCHECK JSON_CHECK LIB_DIR OTHER_LIB
# LIB_DIR holds libprecision_tables_example.so and its variants
# (examples/plugins/precision_tables_example.c); OTHER_LIB exports no nvdla_precision_supported.
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
expect "no such function" 2 "exports no nvdla_precision_supported" "$lc" precision nvdla --lib "$other"
expect "no such file" 2 "cannot read" "$lc" precision nvdla --lib "$tmp/none.so"
expect "with table options" 2 "does not go with --lib" \
  "$lc" precision nvdla --lib "$libs/libprecision_tables_example.so" --layer conv

"$lc" precision nvdla --lib "$libs/libprecision_tables_sdp_int8_fp16.so" --json > "$tmp/json"
[ $? = 1 ] || fail "--json of a wrong table does not exit 1"
"$json_check" precision < "$tmp/json" > "$tmp/check" 2>&1 || fail "json: $(cat "$tmp/check")"
grep -q '"command": "precision"' "$tmp/json" || fail "the JSON report is not the precision command's"
grep -q '"first_failure": "sdp int8 -> fp16' "$tmp/json" || fail "the JSON report does not name the row: $(cat "$tmp/json")"

[ "$failures" = 0 ] && echo "precision_lib_test: all passed"
exit $((failures > 0))
