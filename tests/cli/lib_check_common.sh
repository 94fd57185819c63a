# Sourced by the tests of the commands that check a user's function library
# (tuple_test.sh, okk_test.sh, precision_lib_test.sh, sparse_lib_test.sh): a
# scratch directory $tmp, a failure count, fail, expect and expect_unloadable.
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

# expect_unloadable COMMAND...: `layoutcheck COMMAND --lib X` with X not a
# library, or missing, and COMMAND without --lib are each a clear error (2).
expect_unloadable() {
  echo 'not a library' > "$tmp/fake.so"
  expect "not a library" 2 "bad library .*fake.so: cannot load" "$lc" "$@" --lib "$tmp/fake.so"
  expect "missing file" 2 "cannot read $tmp/none.so" "$lc" "$@" --lib "$tmp/none.so"
  expect "no --lib" 2 "$1 needs --lib" "$lc" "$@"
}
