#!/usr/bin/env bash
# The progress line of check, oracle and replay: rewritten in place on a
# terminal, plain lines otherwise, nothing extra with --json.
#   progress_test.sh LAYOUTCHECK SOURCE_DIR
set -u
lc="$1" src="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# script(1) needs a pseudo-terminal (devpts); a container or chroot may have none.
have_tty=0
if command -v script > /dev/null && script -qec 'test -t 2' /dev/null > /dev/null 2>&1 < /dev/null; then
  have_tty=1
else
  echo "progress: no pseudo-terminal here (script(1) cannot open one): the terminal form is not checked"
fi
for cmd in "check --layout tpu.c* --cases 5" "oracle --id tpu/*" "replay $src/corpus/fuzz_differential"; do
  name=${cmd%% *}
  # Not a terminal: plain lines, no carriage return.
  $lc $cmd > /dev/null 2> "$tmp/err" || fail "$name exits $?"
  grep -q "^layoutcheck $name: .* cases, .*/s, elapsed .*, ETA .*, 0 failed" "$tmp/err" || fail "$name: no progress line: $(cat "$tmp/err")"
  grep -q $'\r' "$tmp/err" && fail "$name: a carriage return when standard error is no terminal"
  # --json: no progress line.
  $lc $cmd --json > /dev/null 2> "$tmp/err" || fail "$name --json exits $?"
  grep -q "cases, .*/s, elapsed" "$tmp/err" && fail "$name --json: a progress line: $(cat "$tmp/err")"
  # A terminal (script(1) gives one): the line is rewritten in place.
  if [ "$have_tty" = 1 ]; then
    script -qec "$lc $cmd > /dev/null" /dev/null > "$tmp/tty" 2>&1 < /dev/null
    grep -q $'\r\033\\[Klayoutcheck '"$name"': ' "$tmp/tty" || fail "$name: no in-place line on a terminal"
  fi
done

echo "progress: $failures failed"
exit $((failures > 0))
