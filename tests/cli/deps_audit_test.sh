#!/usr/bin/env bash
# scripts/deps_audit.sh passes on this build and fails when a package the build
# used is left out of the list.
#   deps_audit_test.sh BUILD_DIR
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$1"
audit="$root/scripts/deps_audit.sh"
fails=0
expect() {  # expect STATUS WORD -- audit args...
  local want="$1" word="$2"; shift 3
  local out status
  out="$("$audit" "$@" 2>&1)"; status=$?
  if [ "$status" != "$want" ] || ! grep -q -- "$word" <<<"$out"; then
    echo "FAIL: deps_audit $* exited $status (want $want) without '$word':"; echo "$out" | head -20
    fails=$((fails + 1))
  fi
}
all="$("$root/scripts/deps.sh" --list | tr '\n' ' ')"
without() { local out=" $all "; for p in "$@"; do out="${out/ $p / }"; done; echo "$out"; }

expect 0 "all installed by scripts/deps.sh" -- "$build"
expect 1 "libgtest-dev" -- --packages "$(without libgtest-dev)" "$build"
if grep -q '^OpenCL_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt"; then
  expect 1 "ocl-icd-opencl-dev" -- --packages "$(without ocl-icd-opencl-dev)" "$build"
fi
expect 2 "not a configured Ninja build directory" -- /nonexistent
[ "$fails" = 0 ] && echo "deps_audit_test: passed"
exit "$fails"
