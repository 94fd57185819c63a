#!/usr/bin/env bash
# The README's other shown outputs, as written: the oracle file of "Adding an
# oracle" loads and passes, and the failure of "Reading a failure" is what
# `check` prints for the MegEngine mutant that swaps H and W (its path aside).
#   readme_examples_test.sh SOURCE_DIR LAYOUTCHECK SWAPPED_HW_MUTANT
set -uo pipefail
src="$1"; cli="$2"; mutant="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# The code block after the README heading $1.
block_after() {
  awk -v heading="$1" '$0 == heading { f = 1; next } f && /^```/ { if (inside) exit; inside = 1; next } f && inside' "$src/README.md"
}

mkdir -p "$tmp/oracles/tpu"
block_after "## Adding an oracle" >"$tmp/oracles/tpu/example.oracle"
grep -q '^error ~' "$tmp/oracles/tpu/example.oracle" || fail "the oracle example has no rejection case"
out="$("$cli" oracle --dir "$tmp/oracles" 2>&1)"; status=$?
if [ "$status" != 0 ] || ! grep -q "^2 passed, 0 failed, 0 skipped" <<<"$out"; then
  fail "the README's oracle example does not pass as written (exit $status):"; echo "$out"
fi

shown="$(block_after "## Reading a failure")"
[ -n "$shown" ] || fail "README.md shows no failure under Reading a failure"
out="$("$cli" check --impl "$mutant" --layout mge.nchw4 --cases 50 2>/dev/null)"
out="${out//$mutant//home/me/libmutant.so}"
while IFS= read -r line; do
  grep -qxF -- "$line" <<<"$out" || fail "Reading a failure shows a line check does not print: $line"
done <<<"$shown"

[ "$fails" = 0 ] && echo "readme examples: passed"
exit "$fails"
