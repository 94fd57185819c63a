#!/usr/bin/env bash
# One hostile plugin through one command: the exit status and the message
# must say what the plugin did, and no process may be left behind.
#   hostile_test.sh LAYOUTCHECK PLUGIN.so KIND COMMAND
# KIND is the plugin's HOSTILE_* behaviour in lower case (tests/hostile/hostile.c).
set -u
lc="$1"; so="$2"; kind="$3"; cmd="$4"
fail() { echo "FAIL [$kind/$cmd]: $*"; echo "--- output"; head -c 4000 "$work/out"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/lc_hostile_${kind}_${cmd}_XXXXXX")
trap 'pkill -KILL -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
# The copy's path is the marker: a process the plugin starts carries it in its command line.
cp "$so" "$work/plugin.so"
plugin="$work/plugin.so"
# Plugins that hang are stopped after 1 s (every call of theirs costs the
# whole timeout), the others get 3 s.
plugin_timeout=3
case "$kind" in endless_loop|entry_loop) plugin_timeout=1 ;; esac
export LAYOUTCHECK_PLUGIN_TIMEOUT=$plugin_timeout
case_args=(tpu.continuous --dtype int8 --shape 1,2,3,4)
head -c 24 /dev/urandom > "$work/in24"

# Expected exit status and message, by kind and command.
load_failure=""
case "$kind" in
  constructor_crash) load_failure="bad plugin .*crashed with signal 11 \(SIGSEGV.*during loading" ;;
  entry_loop)        load_failure="bad plugin .*did not finish within $plugin_timeout s during loading" ;;
  lying_count)       load_failure="capability_count is 1000000, more than the 4096" ;;
  null_glob)         load_failure="capabilities\[0\] has a NULL layout_glob" ;;
esac
if [ -n "$load_failure" ]; then
  status=2; message="$load_failure"
else
  # What the misbehaviour looks like, and which commands reach it.
  case "$kind" in
    segfault)         message="crashed with signal 11 \(SIGSEGV"; reached="pack unpack offset describe oracle check repro" ;;
    abort)            message="crashed with signal 6 \(SIGABRT"; reached="pack unpack offset describe oracle check repro" ;;
    endless_loop)     message="did not finish within [0-9]+ s"; reached="pack unpack offset describe oracle check repro" ;;
    leak)             message="ran out of memory"; reached="pack unpack offset describe oracle check repro" ;;
    fork)             message="started a process"; reached="pack unpack offset describe oracle check repro" ;;
    write_before)     message="out-of-bounds access: wrote [0-9]+ bytes before the (physical|logical) buffer"
                      reached="pack unpack check repro" ;;
    nondeterministic) message="is not deterministic: two runs on the same input differ at byte"
                      reached="pack unpack check repro" ;;
    flood)            message=""; reached="" ;;
    *) echo "unknown kind $kind"; exit 2 ;;
  esac
  if [[ " $reached " == *" $cmd "* ]]; then
    case "$cmd" in oracle|check|repro) status=1 ;; *) status=2 ;; esac
  else
    status=0; message=""
  fi
fi

cd "$work"
case "$cmd" in
  pack)     timeout 120 "$lc" pack "${case_args[@]}" --impl "$plugin" --in in24 --out phys > out 2>&1 ;;
  unpack)   timeout 120 "$lc" unpack "${case_args[@]}" --impl "$plugin" --in in24 --out logical > out 2>&1 ;;
  offset)   timeout 120 "$lc" offset "${case_args[@]}" --impl "$plugin" --at 0,1,2,3 --at 0,0,0,1 > out 2>&1 ;;
  describe) timeout 120 "$lc" describe "${case_args[@]}" --impl "$plugin" > out 2>&1 ;;
  oracle)   timeout 120 "$lc" oracle --id 'tpu/address/*' --impl "$plugin" > out 2>&1 ;;
  check)    timeout 120 "$lc" check --impl "$plugin" --layout tpu.continuous --fail-fast --min-cases 1 --max-cases 2 \
                --seconds 60 --timeout $plugin_timeout --save "$work/regressions" > out 2>&1 ;;
  repro)    timeout 120 "$lc" repro "${case_args[@]}" --impl "$plugin" > out 2>&1 ;;
  *) echo "unknown command $cmd"; exit 2 ;;
esac
got=$?
[ "$got" -eq 124 ] && fail "layoutcheck hung (killed by timeout)"
[ "$got" -eq "$status" ] || fail "exit status $got, expected $status"
if [ -n "$message" ]; then
  grep -Eq -- "$message" out || fail "the output does not match /$message/"
fi
# The output stays bounded whatever the plugin prints.
[ "$(stat -c %s out)" -lt 1000000 ] || fail "$(stat -c %s out) bytes of output"
if [ "$status" -eq 0 ]; then
  case "$cmd" in
    pack)   cmp -s in24 phys || fail "pack did not produce the physical bytes" ;;
    unpack) cmp -s in24 logical || fail "unpack did not produce the logical bytes" ;;
    offset) [ "$(tr '\n' ' ' < out)" = "23 1 " ] || fail "offsets are not 23, 1" ;;
    describe) grep -q "size_bytes *24" out || fail "describe does not say size_bytes 24" ;;
  esac
fi
# check saves the case it printed.
if [ "$cmd" = check ] && [ "$status" -eq 1 ]; then
  printed=$(grep -m1 '^FAIL ' out | sed -E 's/.*--dtype ([^ ]+) --shape ([^:]+):.*/\1 | \2/')
  saved=$(cat "$work"/regressions/*.txt 2>/dev/null | sed -nE 's/^case: [^|]+\| (.*)$/\1/p')
  [ -n "$printed" ] && [ "$printed" = "$saved" ] || fail "printed case '$printed', saved '$saved'"
fi
# No process may outlive the command (the plugin's stray processes carry $work).
for _ in $(seq 100); do
  pgrep -f "$work" > /dev/null || break
  sleep 0.1
done
if pgrep -f "$work" > /dev/null; then
  ps -o pid,ppid,pgid,args -p "$(pgrep -d, -f "$work")"
  fail "processes left behind"
fi
echo "ok [$kind/$cmd]: exit $got$( [ -n "$message" ] && echo ", $(grep -Eo -m1 -- "$message" out)")"
