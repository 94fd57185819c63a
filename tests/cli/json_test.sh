#!/usr/bin/env bash
# Every --json report parses (tests/cli/json_check.cc holds it to docs/json.md),
# also with a plugin whose name and path are not UTF-8, and a failure carries
# its repro line.
#   json_test.sh LAYOUTCHECK JSON_CHECK BAD_NAME_PLUGIN MUTANT_PLUGIN SOURCE_DIR
set -u
lc="$1" check="$2" bad_name="$3" mutant="$4" src="$5"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_report NAME COMMAND EXIT_STATUS LAYOUTCHECK_ARGS...
expect_report() {
  local name="$1" command="$2" want="$3"
  shift 3
  "$lc" "$@" > "$tmp/out.json" 2> "$tmp/err"
  local status=$?
  [ "$status" = "$want" ] || fail "$name: exit status $status, expected $want: $(tail -3 "$tmp/err")"
  "$check" "$command" < "$tmp/out.json" || fail "$name: the report does not hold"
}
expect_report list list 0 list --json
grep -q '"npus": "64"' "$tmp/out.json" || fail "list --json: no default of tpu's npus"
expect_report coverage coverage 0 list --coverage --json
expect_report rules rules 0 rules 'tpu.*' --json
grep -q '"id": "tpu.' "$tmp/out.json" || fail "rules --json: no tpu rule"
expect_report describe describe 0 describe 'tpu.aligned(npus=4,lmem=1024,addr=2048)' --dtype fp32 --shape 2,3,4,5 --json
grep -q '"n_stride": 64,' "$tmp/out.json" || fail "describe: a number is not a JSON number"
expect_report check check 0 check --layout 'tpu.c*' --cases 3 --json
expect_report oracle oracle 0 oracle --id 'tpu/address/*' --json
expect_report replay replay 0 replay "$src/corpus/fuzz_differential" --json
[ -s "$tmp/err" ] && fail "replay --json wrote to standard error: $(cat "$tmp/err")"

# A failing plugin: the report names the failure and how to run it again.
expect_report "check with a mutant" check 1 check --impl "$mutant" --layout 'tpu*' --cases 40 --json
grep -q '"repro": "layoutcheck repro ' "$tmp/out.json" || fail "check: no repro line for the failure"
grep -q '"status": "failed"' "$tmp/out.json" || fail "check: the failed run is not marked failed"

# A plugin whose name has bytes that are not UTF-8, at a path that has them too.
odd="$tmp/lib$(printf '\xff\xfe')odd.so"
cp "$bad_name" "$odd"
expect_report "check, non-UTF-8 plugin" check 0 check --impl "$odd" --layout 'tpu.c*' --cases 3 --json
grep -q "$(printf '\xef\xbf\xbd')" "$tmp/out.json" || fail "check: the invalid bytes are not replaced by U+FFFD"
expect_report "oracle, non-UTF-8 plugin" oracle 0 oracle --impl "$odd" --id 'tpu/address/*' --json

# The checker itself fails on what it must refuse.
printf '{"schema": 1, "command": "list", "layoutcheck_version": "0", "abi_version": "1.0", "layouts": ["\xff"]}' |
  "$check" list 2> /dev/null && fail "json_check accepts invalid UTF-8"
"$lc" check --layout 'tpu.c*' --cases 3 --json 2> /dev/null | head -c 200 | "$check" check 2> /dev/null &&
  fail "json_check accepts a truncated report"
"$lc" check --layout 'tpu.c*' --cases 3 --json 2> /dev/null | sed 's/"cases": \([0-9]*\)/"cases": "\1"/' |
  "$check" check 2> /dev/null && fail "json_check accepts a count as a string"
"$lc" check --impl "$mutant" --layout 'tpu*' --cases 40 --json 2> /dev/null | sed 's/"repro": "layoutcheck/"repro": "/' |
  "$check" check 2> /dev/null && fail "json_check accepts a failure without a repro line"

echo "json: $failures failed"
exit $((failures > 0))
