#!/usr/bin/env bash
# --junit FILE of check, oracle and replay: valid against the JUnit structure
# (tests/cli/junit.xsd, checked with xmllint), one testcase per layout or case,
# failures with their message and repro line, skipped cases marked.
#   junit_test.sh LAYOUTCHECK XSD TPU_PLUGIN MUTANT_PLUGIN SOURCE_DIR
set -u
lc="$1" xsd="$2" plugin="$3" mutant="$4" src="$5"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
valid() { xmllint --noout --schema "$xsd" "$1" 2> "$tmp/xmllint.err"; }
testcases() { grep -c '<testcase ' "$1"; }

"$lc" check --layout 'tpu.c*' --cases 3 --junit "$tmp/check.xml" > /dev/null 2>&1 || fail "check --junit exits $?"
valid "$tmp/check.xml" || fail "check: $(cat "$tmp/xmllint.err")"
[ "$(testcases "$tmp/check.xml")" = 2 ] || fail "check: $(testcases "$tmp/check.xml") testcases for 2 layouts"
grep -q '<testcase classname="check.tpu" name="tpu.compact"' "$tmp/check.xml" || fail "check: no testcase for tpu.compact"

"$lc" check --impl "$mutant" --layout 'tpu*' --cases 40 --junit "$tmp/mutant.xml" > /dev/null 2>&1
[ $? = 1 ] || fail "check of a mutant with --junit does not exit 1"
valid "$tmp/mutant.xml" || fail "check of a mutant: $(cat "$tmp/xmllint.err")"
grep -q '<failure message="FAIL ' "$tmp/mutant.xml" || fail "check of a mutant: no failure with its message"
grep -q '^repro: layoutcheck repro ' "$tmp/mutant.xml" || fail "check of a mutant: no repro line in the failure"

"$lc" oracle --impl "$plugin" --junit "$tmp/oracle.xml" --json > "$tmp/oracle.json" 2> /dev/null || fail "oracle --junit exits $?"
valid "$tmp/oracle.xml" || fail "oracle: $(cat "$tmp/xmllint.err")"
cases=$(grep -m1 -A1 '"totals"' "$tmp/oracle.json" | sed -n 's/.*"cases": \([0-9]*\).*/\1/p')
[ "$(testcases "$tmp/oracle.xml")" = "$cases" ] || fail "oracle: $(testcases "$tmp/oracle.xml") testcases for $cases cases"
grep -q '<skipped message=' "$tmp/oracle.xml" || fail "oracle: the cases outside the plugin's layouts are not marked skipped"

"$lc" replay "$src/corpus/fuzz_differential" --junit "$tmp/replay.xml" > /dev/null 2>&1 || fail "replay --junit exits $?"
valid "$tmp/replay.xml" || fail "replay: $(cat "$tmp/xmllint.err")"
[ "$(testcases "$tmp/replay.xml")" -gt 0 ] || fail "replay: no testcases"

# A plugin at a path that is not UTF-8: still well-formed XML.
odd="$tmp/lib$(printf '\xff')odd.so"
cp "$plugin" "$odd"
"$lc" check --impl "$odd" --layout 'tpu.c*' --cases 3 --junit "$tmp/odd.xml" > /dev/null 2>&1 || fail "check of $odd exits $?"
valid "$tmp/odd.xml" || fail "non-UTF-8 path: $(cat "$tmp/xmllint.err")"

# Written like --out: a failed write is exit status 2 and replaces nothing.
echo keep > "$tmp/kept.xml"
chmod a-w "$tmp"
if [ ! -w "$tmp" ]; then
  "$lc" check --layout 'tpu.c*' --cases 3 --junit "$tmp/kept.xml" > /dev/null 2> "$tmp/err.txt"
  status=$?
  [ "$status" = 2 ] || fail "an unwritable --junit exits $status"
  [ "$(cat "$tmp/kept.xml")" = keep ] || fail "a failed --junit write changed the file"
fi
chmod u+w "$tmp"
if [ -c /dev/full ]; then
  "$lc" check --layout 'tpu.c*' --cases 3 --junit /dev/full > /dev/null 2>&1
  [ $? = 2 ] || fail "--junit /dev/full does not exit 2"
fi

# The schema check fails on broken reports.
sed 's/<testcase classname="check.tpu" name="tpu.compact"/<testcase classname="check.tpu"/' "$tmp/check.xml" > "$tmp/broken1.xml"
valid "$tmp/broken1.xml" && fail "xmllint accepts a testcase without a name"
head -c 300 "$tmp/check.xml" > "$tmp/broken2.xml"
valid "$tmp/broken2.xml" && fail "xmllint accepts a truncated report"
sed 's/tests="2"/tests="two"/' "$tmp/check.xml" > "$tmp/broken3.xml"
valid "$tmp/broken3.xml" && fail "xmllint accepts a count that is no number"
sed 's/<failure message="[^"]*"/<failure/' "$tmp/mutant.xml" > "$tmp/broken4.xml"
valid "$tmp/broken4.xml" && fail "xmllint accepts a failure without a message"

echo "junit: $failures failed"
exit $((failures > 0))
