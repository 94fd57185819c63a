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
for n in 1 2 3 16; do
  "$lc" pack "${case[@]}" --threads "$n" --in "$tmp/logical" --out "$tmp/pn" || fail "pack --threads $n exits $?"
  cmp -s "$tmp/p1" "$tmp/pn" || fail "pack --threads $n differs from the default"
  "$lc" unpack "${case[@]}" --threads "$n" --in "$tmp/pn" --out "$tmp/back" || fail "unpack --threads $n exits $?"
  cmp -s "$tmp/logical" "$tmp/back" || fail "unpack --threads $n does not give the logical bytes back"
done
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
expect_usage "the reference" "--threads applies to the optimized implementation, not --impl reference" \
  "$lc" pack "${case[@]}" --threads 2 --impl reference
exit $((failures > 0))
