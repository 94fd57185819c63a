#!/usr/bin/env bash
# layoutcheck okk: a library's own okk_* functions against the reference.
#   okk_test.sh LAYOUTCHECK JSON_CHECK LIB_DIR NO_OKK_LIB
# LIB_DIR holds libokk_example.so and its variants (examples/plugins/okk_example.c).
set -u
lc="$1"
json_check="$2"
libs="$3"
no_okk="$4"  # a library exporting no okk_* function
source "$(dirname "${BASH_SOURCE[0]}")/lib_check_common.sh"

for chip in bm1684 bm1684x; do
  expect "example on $chip" 0 "okk: 6 passed, 0 failed, 0 not provided" "$lc" okk --lib "$libs/libokk_example.so" --chip "$chip"
done
expect "example, 4 NPUs" 0 "okk: 6 passed, 0 failed" "$lc" okk --lib "$libs/libokk_example.so" --npus 4 --eu-bytes 128
expect "example, 1 NPU" 0 "okk: 6 passed, 0 failed" "$lc" okk --lib "$libs/libokk_example.so" --npus 1 --eu-bytes 4
expect "example, the largest NPU count and EU" 0 "okk: 6 passed, 0 failed" "$lc" okk --lib "$libs/libokk_example.so" --npus 65536 --eu-bytes 65536
expect "example, 7 NPUs, 32-byte EU" 0 "okk: 6 passed, 0 failed" "$lc" okk --lib "$libs/libokk_example.so" --npus 7 --eu-bytes 32

expect "compact without the ceil" 1 "okk_compact_stride +FAILED" "$lc" okk --lib "$libs/libokk_compact_floor.so"
# A name without a slash is the file of the working directory, not a library
# of the same name on the library path: here the mutant under the example's name.
mkdir "$tmp/cwd"
cp "$libs/libokk_compact_floor.so" "$tmp/cwd/libokk_example.so"
(cd "$tmp/cwd" && LD_LIBRARY_PATH="$libs" "$lc" okk --lib libokk_example.so > "$tmp/out" 2>&1)
[ "$?" = 1 ] && grep -qE "okk_compact_stride +FAILED" "$tmp/out" ||
  fail "--lib NAME.so checked another file than ./NAME.so: $(tail -3 "$tmp/out")"
grep -qE "okk_128_byte_aligned_stride_for_32bit +passed" "$tmp/out" || fail "compact mutant: the aligned functions do not pass"
expect "aligned in bytes" 1 "okk_128_byte_aligned_stride_for_32bit +FAILED" "$lc" okk --lib "$libs/libokk_aligned_bytes.so"
grep -qE "okk_128_byte_aligned_stride_for_16bit +FAILED" "$tmp/out" || fail "aligned mutant: 16bit not failed"
grep -qE "okk_128_byte_aligned_stride_for_8bit +passed" "$tmp/out" || fail "aligned mutant: 8bit (bytes are elements) not passed"
grep -q "first at start_idx 0, shape (1,1,1,1), npu_num 64, eu_bytes 128: expected {n 32, c 32, h 1, w 1}, actual {n 128, c 128, h 1, w 1}" "$tmp/out" ||
  fail "aligned mutant: first difference not named: $(cat "$tmp/out")"
expect "start ignored" 1 "okk_channle_num_per_npu +FAILED" "$lc" okk --lib "$libs/libokk_ignore_start.so" --npus 4 --eu-bytes 128
grep -q "first at start_idx 1, num_channels 4, npu_num 4, eu_bytes 128: expected 2, actual 1" "$tmp/out" ||
  fail "start mutant: first difference not named: $(cat "$tmp/out")"

expect "partial library" 0 "okk: 2 passed, 0 failed, 4 not provided" "$lc" okk --lib "$libs/libokk_partial.so"
grep -qE "okk_compact_stride +not provided \(skipped\)" "$tmp/out" || fail "partial: okk_compact_stride not reported as not provided"

expect "crash" 2 "bad library .*libokk_crash.so: out-of-bounds access: wrote past the end of the stride output.*during okk_compact_stride" \
  "$lc" okk --lib "$libs/libokk_crash.so"
LAYOUTCHECK_PLUGIN_TIMEOUT=1 expect "hang" 2 "did not finish within 1 s during okk_continuous_stride" \
  "$lc" okk --lib "$libs/libokk_hang.so"
expect_unloadable okk
expect "no okk symbol" 2 "exports none of okk_channle_num_per_npu" "$lc" okk --lib "$no_okk"
expect "bad chip" 2 "--chip 'bm9' is not bm1684 or bm1684x" "$lc" okk --lib "$libs/libokk_example.so" --chip bm9
expect "bad npus" 2 "--npus 0 is out of range: it takes a whole number from 1 to 65536" "$lc" okk --lib "$libs/libokk_example.so" --npus 0
expect "signed npus" 2 "--npus [+]4 is out of range: it takes a whole number from 1 to 65536" "$lc" okk --lib "$libs/libokk_example.so" --npus +4
expect "npus past 65536 in hexadecimal" 2 "--npus 0x10001 is out of range: it takes a whole number from 1 to 65536" "$lc" okk --lib "$libs/libokk_example.so" --npus 0x10001
expect "eu past 65536" 2 "--eu-bytes 65537 is out of range: it takes a whole number from 4 to 65536" \
  "$lc" okk --lib "$libs/libokk_example.so" --eu-bytes 65537
expect "odd eu" 2 "--eu-bytes 6 does not hold a whole number of 32-bit elements" "$lc" okk --lib "$libs/libokk_example.so" --eu-bytes 6

"$lc" okk --lib "$libs/libokk_aligned_bytes.so" --json > "$tmp/report.json"
[ $? = 1 ] || fail "json: exit status not 1"
"$json_check" okk < "$tmp/report.json" > "$tmp/check" 2>&1 || fail "json: $(cat "$tmp/check")"
grep -q '"function": "okk_128_byte_aligned_stride_for_32bit",' "$tmp/report.json" || fail "json: no function entry"
"$lc" okk --lib "$libs/libokk_partial.so" --json > "$tmp/partial.json" || fail "json: partial library exits $?"
"$json_check" okk < "$tmp/partial.json" > "$tmp/check" 2>&1 || fail "json partial: $(cat "$tmp/check")"
grep -q '"not_provided": 4' "$tmp/partial.json" || fail "json partial: not_provided is not 4"
grep -q '"status": "failed"' "$tmp/report.json" || fail "json: no failed status"

echo "okk: $failures failed"
[ "$failures" = 0 ]
