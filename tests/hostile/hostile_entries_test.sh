#!/usr/bin/env bash
# One hostile plugin of the ABI 1.1 members (hostile_entries.c) through the
# command that reaches it: the exit status and the message must say what the
# plugin did.
#   hostile_entries_test.sh LAYOUTCHECK PLUGIN.so KIND
set -u
lc="$1"; so="$2"; kind="$3"
work=$(mktemp -d "${TMPDIR:-/tmp}/lc_hostile_entries_${kind}_XXXXXX")
trap 'rm -rf "$work"' EXIT
export LAYOUTCHECK_PLUGIN_TIMEOUT=3
fail() { echo "FAIL [$kind]: $*"; echo "--- output"; head -c 4000 "$work/out"; exit 1; }
expect() {  # STATUS REGEX COMMAND...
  local want="$1" regex="$2"; shift 2
  timeout 120 "$@" > "$work/out" 2>&1
  local got=$?
  [ "$got" -eq "$want" ] || fail "exit status $got, expected $want: $*"
  grep -Eq -- "$regex" "$work/out" || fail "no line matches '$regex': $*"
}
check() { echo "$lc" check --impl "$so" --layout "$1" --cases 2 --fail-fast; }
case "$kind" in
  convert_segfault)
    expect 1 "crashed with signal 11 \(SIGSEGV.*during convert" $(check convert.ieee)
    printf '\x00\x3c' > "$work/in"
    expect 2 "crashed with signal 11 \(SIGSEGV.*during convert" "$lc" convert --impl "$so" --rule ieee --from fp16 --to fp32 --in "$work/in" ;;
  convert_loop)             expect 1 "did not finish within 3 s during convert" $(check convert.ieee) ;;
  convert_write_past_end)   expect 1 "out-of-bounds access: wrote past the end of the destination buffer" $(check convert.ieee) ;;
  convert_bad_status)       expect 1 "returned 7, which is not an lc_status" $(check convert.ieee) ;;
  sparse_write_before)      expect 1 "out-of-bounds access: wrote 1 bytes before the WGS surface" $(check nvdla.sparse) ;;
  sparse_lying_size)        expect 1 "reports a data surface of [0-9]+ bytes, more than the" $(check nvdla.sparse) ;;
  winograd_nondeterministic) expect 1 "is not deterministic" $(check nvdla.winograd.phase1) ;;
  abi_1_0)
    # Loads and runs; the members past its struct_size do not exist.
    expect 0 "convert.ieee .*SKIPPED \(not claimed\)" $(check 'convert.*')
    expect 0 "nvdla.sparse .*SKIPPED \(not claimed\)" $(check nvdla.sparse)
    printf '\x00\x3c' > "$work/in"
    expect 2 "has no convert \(ABI 1.1 member\)" "$lc" convert --impl "$so" --rule ieee --from fp16 --to fp32 --in "$work/in"
    expect 0 "skipped" "$lc" oracle --id 'inf/*' --impl "$so" ;;
  *) echo "unknown kind $kind"; exit 2 ;;
esac
echo "ok [$kind]"
