#!/usr/bin/env bash
# tests/gtest_suites.cmake, which turns each test program's suites into ctest
# tests: a listing's suites (parameterized and typed too) become KIND.SUITE
# running SUITE.*, LONG suites get their COST; a line it cannot read, a LONG
# suite the program lacks, a program that fails or lists nothing stop the build.
#   gtest_suites_test.sh tests/gtest_suites.cmake
set -euo pipefail
script="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
program() {  # program NAME EXIT_CODE LISTING
  printf '%s' "$3" >"$tmp/$1.listing"
  printf '#!/bin/sh\ncat "%s"\nexit %s\n' "$tmp/$1.listing" "$2" >"$tmp/$1"
  chmod +x "$tmp/$1"
}
run() {  # run PROGRAM [LONG]
  cmake -DEXE="$tmp/$1" -DKIND=unit -DOUT="$tmp/$1.cmake" -DWORKDIR="$tmp" -DLONG="${2:-}" -P "$script" >"$tmp/log" 2>&1
}

program good 0 'Running main() from /x/gtest_main.cc
MgeLarge.
  streamed_pack
Oracles/OracleTest.
  reference/a  # GetParam() = <1 2>
Typed/0.  # TypeParam = int
  t
'
run good MgeLarge,Typed/0 || { cat "$tmp/log"; fail "a good listing was refused"; }
for suite in MgeLarge Oracles/OracleTest Typed/0; do
  grep -qF "add_test([==[unit.$suite]==] \"$tmp/good\" \"--gtest_filter=$suite.*\")" "$tmp/good.cmake" ||
    fail "no ctest test unit.$suite running $suite.*"
done
[ "$(grep -c '^add_test' "$tmp/good.cmake")" = 3 ] || fail "not one test per suite: $(cat "$tmp/good.cmake")"
[ "$(grep -c 'COST 100' "$tmp/good.cmake")" = 2 ] || fail "the LONG suites have no COST"
grep 'unit.Oracles/OracleTest' "$tmp/good.cmake" | grep -q COST && fail "a suite not LONG has a COST"
grep -q 'ENVIRONMENT "RC_PARAMS=seed=1 max_success=200"' "$tmp/good.cmake" || fail "no fixed RapidCheck seed"

expect_refused() {  # expect_refused WHAT MESSAGE PROGRAM [LONG]
  if run "$3" "${4:-}"; then
    fail "$1 was accepted"
  elif ! tr -s ' \n' ' ' <"$tmp/log" | grep -qF -- "$2"; then  # cmake wraps its messages
    cat "$tmp/log"
    fail "$1: the message does not say '$2'"
  fi
}
program odd 0 'MgeLarge.
  streamed_pack
9Odd.
  x
'
expect_refused "a line that is not a suite" "printed '9Odd.', not a suite" odd
expect_refused "a LONG suite the program lacks" "LONG names Renamed" good Renamed
program empty 0 ''
expect_refused "a listing of no suite" "names no suite" empty
program crashes 3 'MgeLarge.
'
expect_refused "a program that fails" "--gtest_list_tests failed (3)" crashes

[ "$fails" = 0 ] && echo "gtest_suites.cmake: one test per suite, COST for LONG ones, 4 bad listings refused"
exit "$fails"
