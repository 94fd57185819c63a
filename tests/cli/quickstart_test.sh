#!/usr/bin/env bash
# The README's quick start, as written: the one-line build of
# examples/plugins/quickstart.c passes `check`, and the same plugin with H and
# W exchanged fails it; each line of the two outputs the README shows (its
# code blocks that start with the table's header) is a line of the real one,
# so the README cannot go stale.
#   quickstart_test.sh SOURCE_DIR LAYOUTCHECK
set -uo pipefail
src="$1"; cli="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
# The README's code block number $1 (1 or 2) that starts with the table header.
readme_block() {
  awk -v want="$1" '/^```/ { if (inside) { inside = 0; if (keep) exit; next } inside = 1; first = 1; next }
    inside && first { first = 0; if ($0 ~ /^layout  *cases  *passed/ && ++n == want) keep = 1 }
    inside && keep' "$src/README.md"
}
# Every non-empty line of README block $1 must be a line of $2 (the README's
# /tmp/qs is this test's directory, its ".../oracles" the installed oracles).
same_as_readme() {
  local shown line found=0
  shown="$(readme_block "$1")"
  [ -n "$shown" ] || { echo "FAIL: README.md has no quick-start output block $1"; return 1; }
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    line="${line//\/tmp\/qs/$tmp}"
    found=0
    while IFS= read -r got; do
      got="${got/#  *\/oracles\//  ...\/oracles\/}"
      [ "$got" = "$line" ] && { found=1; break; }
    done <<<"$2"
    [ "$found" = 1 ] || { echo "FAIL: README.md quick-start block $1 shows a line the run does not print: $line"; return 1; }
  done <<<"$shown"
}
cc -shared -fPIC -I "$src/include" -o libnhwc.so "$src/examples/plugins/quickstart.c" || exit 1
out="$("$cli" check --impl ./libnhwc.so --layout mge.nhwc --cases 100 2>"$tmp/err")"; status=$?  # the report; progress on stderr
if [ "$status" != 0 ] || ! grep -q "mge.nhwc .* PASSED" <<<"$out"; then
  echo "FAIL: the quick-start plugin does not pass (exit $status):"; echo "$out"; cat "$tmp/err"; fails=$((fails + 1))
fi
same_as_readme 1 "$out" || fails=$((fails + 1))
sed 's/(((n \* H + h) \* W + w) \* C + ch)/(((n * W + w) * H + h) * C + ch)/' "$src/examples/plugins/quickstart.c" >bug.c
grep -q 'n \* W + w' bug.c || { echo "FAIL: the H/W exchange no longer applies to quickstart.c"; exit 1; }
cc -shared -fPIC -I "$src/include" -o libbug.so bug.c || exit 1
out="$("$cli" check --impl ./libbug.so --layout mge.nhwc --cases 100 2>"$tmp/err")"; status=$?
if [ "$status" != 1 ] || ! grep -q "FAIL 'mge.nhwc'" <<<"$out" || ! grep -q "repro: layoutcheck repro" <<<"$out"; then
  echo "FAIL: the quick-start plugin with H and W exchanged is not failed (exit $status):"; echo "$out"; cat "$tmp/err"; fails=$((fails + 1))
fi
same_as_readme 2 "$out" || fails=$((fails + 1))
[ "$fails" = 0 ] && echo "quickstart: passed"
exit "$fails"
