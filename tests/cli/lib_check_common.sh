# Sourced by the tests of the commands that check a user's function library
# (tuple_test.sh, okk_test.sh, precision_lib_test.sh): a scratch directory
# $tmp, a failure count, fail and expect.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect NAME STATUS TEXT COMMAND...: exit status STATUS and TEXT in stdout+stderr.
expect() {
  local name="$1" want="$2" text="$3"
  shift 3
  "$@" > "$tmp/out" 2>&1
  local status=$?
  [ "$status" = "$want" ] || fail "$name: exit status $status, expected $want: $(head -c 2000 "$tmp/out")"
  grep -qE -- "$text" "$tmp/out" || fail "$name: no '$text' in: $(head -c 2000 "$tmp/out")"
}
