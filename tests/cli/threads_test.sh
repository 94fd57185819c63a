#!/usr/bin/env bash
# pack/unpack --threads N: the same bytes for every count; bad counts and
# implementations that take none are usage errors (exit 2) naming the value.
#   threads_test.sh LAYOUTCHECK
set -u
lc="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

case=(nvdla.feature --dtype int8 --shape 64,5,300)
head -c $((64 * 5 * 300)) /dev/urandom > "$tmp/logical"
"$lc" pack "${case[@]}" --in "$tmp/logical" --out "$tmp/p1" || fail "pack exits $?"
for n in 1 2 3 16 0x10; do
  "$lc" pack "${case[@]}" --threads "$n" --in "$tmp/logical" --out "$tmp/pn" || fail "pack --threads $n exits $?"
  cmp -s "$tmp/p1" "$tmp/pn" || fail "pack --threads $n differs from the default"
  "$lc" unpack "${case[@]}" --threads "$n" --in "$tmp/pn" --out "$tmp/back" || fail "unpack --threads $n exits $?"
  cmp -s "$tmp/logical" "$tmp/back" || fail "unpack --threads $n does not give the logical bytes back"
done
# LAYOUTCHECK_ISA picks narrower kernels, never other bytes; a bad value is named and ignored.
for isa in portable ssse3 avx2 avx512; do
  LAYOUTCHECK_ISA=$isa "$lc" pack "${case[@]}" --threads 2 --in "$tmp/logical" --out "$tmp/pi" ||
    fail "LAYOUTCHECK_ISA=$isa pack exits $?"
  cmp -s "$tmp/p1" "$tmp/pi" || fail "LAYOUTCHECK_ISA=$isa pack differs from the default"
done
LAYOUTCHECK_ISA=avx9 "$lc" pack "${case[@]}" --in "$tmp/logical" --out "$tmp/pi" 2> "$tmp/err" ||
  fail "LAYOUTCHECK_ISA=avx9 pack exits $?"
grep -qF "LAYOUTCHECK_ISA=avx9 is not one of portable, ssse3, avx2, avx512, avx512vbmi" "$tmp/err" ||
  fail "LAYOUTCHECK_ISA=avx9: no warning naming the value in: $(cat "$tmp/err")"
cmp -s "$tmp/p1" "$tmp/pi" || fail "LAYOUTCHECK_ISA=avx9 pack differs from the default"
expect_usage() {
  local name="$1" text="$2"
  shift 2
  "$@" < "$tmp/logical" > /dev/null 2> "$tmp/err"
  local status=$?
  [ "$status" = 2 ] || fail "$name: exit status $status, expected 2"
  grep -qF -- "$text" "$tmp/err" || fail "$name: no '$text' in: $(cat "$tmp/err")"
}
expect_usage "zero threads" "--threads 0 is out of range" "$lc" pack "${case[@]}" --threads 0
expect_usage "too many threads" "--threads 1025 is out of range" "$lc" pack "${case[@]}" --threads 1025
expect_usage "not a number" "--threads x2 is out of range" "$lc" unpack "${case[@]}" --threads x2
expect_usage "too many threads in hexadecimal" "--threads 0x401 is out of range" "$lc" pack "${case[@]}" --threads 0x401
expect_usage "a bare 0x" "--threads 0x is out of range" "$lc" pack "${case[@]}" --threads 0x
expect_usage "a sign" "--threads +2 is out of range" "$lc" pack "${case[@]}" --threads +2
expect_usage "the reference" "--threads applies to the optimized implementation, not --impl reference" \
  "$lc" pack "${case[@]}" --threads 2 --impl reference
exit $((failures > 0))
