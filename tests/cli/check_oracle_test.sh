#!/usr/bin/env bash
# `check --impl PLUGIN` replays the documents' examples of the claimed layouts
# before its generated cases: a mutant the examples catch fails there, a
# correct plugin passes them.
#   check_oracle_test.sh LAYOUTCHECK CORRECT_TPU_PLUGIN MUTANT_TPU_PLUGIN
set -uo pipefail
cli="$1"; good="$2"; bad="$3"
fails=0
out="$("$cli" check --impl "$good" --layout 'tpu*' --cases 5 2>&1)"; status=$?
if [ "$status" != 0 ] || ! grep -Eq "^oracle \(the documents' examples of the claimed layouts\): [1-9][0-9]* passed, 0 failed" <<<"$out"; then
  echo "FAIL: the correct plugin (exit $status):"; echo "$out" | tail -20; fails=$((fails + 1))
fi
out="$("$cli" check --impl "$bad" --layout 'tpu*' --cases 40 2>&1)"; status=$?
if [ "$status" != 1 ] || ! grep -Eq "^oracle \(the documents' examples of the claimed layouts\): [0-9]+ passed, [1-9][0-9]* failed" <<<"$out" ||
   ! grep -q "tpu/address/B: offset of (0,0,0,0): expected byte 1472" <<<"$out"; then
  echo "FAIL: the mutant (exit $status):"; echo "$out" | tail -20; fails=$((fails + 1))
fi
# The generated cases still run and print the smallest failing case.
if ! grep -q "^FAIL 'tpu" <<<"$out" || ! grep -q "repro: layoutcheck repro" <<<"$out"; then
  echo "FAIL: no generated failing case after the failed examples:"; echo "$out" | tail -20; fails=$((fails + 1))
fi
[ "$fails" = 0 ] && echo "check_oracle: passed"
exit "$fails"
