#!/usr/bin/env bash
# find -> save -> replay from outside the repository: check a mutant plugin from
# a scratch directory, run its repro line elsewhere, replay what it saved, and
# refuse bad options and malformed regression files.
#   replay_test.sh LAYOUTCHECK MUTANT.so CORRECT.so SOURCE_DIR   (MUTANT and CORRECT: MegEngine plugins)
set -u
lc="$1"; mutant="$2"; correct="$3"; src="$4"
tmp=$(realpath "$(mktemp -d)")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_eq() { [ "$1" == "$2" ] || fail "$3: expected '$2', got '$1'"; }
# expect_usage_error NAME TEXT COMMAND...: exit status 2 and TEXT in the message.
expect_usage_error() {
  local name="$1" text="$2"; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"
  local status=$?
  expect_eq "$status" "2" "$name: exit status"
  grep -qF -- "$text" "$tmp/err" || fail "$name: message lacks '$text': $(cat "$tmp/err")"
}

# ---- option validation ----------------------------------------------------
L='tpu.aligned(npus=4,lmem=1024)'
expect_usage_error "check --timeout 0" "--timeout 0 is out of range: it takes a whole number from 1 to 2147483 seconds" \
  "$lc" check --layout 'tpu.c*' --timeout 0
expect_usage_error "check --timeout past int32 milliseconds" "--timeout 2147484 is out of range" \
  "$lc" check --layout 'tpu.c*' --timeout 2147484
expect_usage_error "check --timeout past uint64" "--timeout 99999999999999999999 is out of range" \
  "$lc" check --layout 'tpu.c*' --timeout 99999999999999999999
expect_usage_error "check --jobs 0" "--jobs 0 is out of range: it takes a whole number from 1 to 1024" \
  "$lc" check --layout 'tpu.c*' --jobs 0
expect_usage_error "check --jobs 2^32+1" "--jobs 4294967297 is out of range: it takes a whole number from 1 to 1024" \
  "$lc" check --layout 'tpu.c*' --jobs 4294967297
expect_usage_error "check --jobs -1" "--jobs -1 is out of range" "$lc" check --layout 'tpu.c*' --jobs -1
expect_usage_error "check --cases 0" "--cases 0 is out of range" "$lc" check --layout 'tpu.c*' --cases 0
expect_usage_error "check --cases with --seconds" "--cases fixes the number of cases per layout" \
  "$lc" check --layout 'tpu.c*' --cases 5 --seconds 3
expect_usage_error "repro --timeout 0" "--timeout 0 is out of range" \
  "$lc" repro "$L" --dtype fp32 --shape 1,1,1,1 --impl "$mutant" --timeout 0
expect_usage_error "repro --seed text" "--seed x1 is out of range" "$lc" repro "$L" --dtype fp32 --shape 1,1,1,1 --seed x1
expect_usage_error "check --jobs past 1024 in hexadecimal" "--jobs 0x401 is out of range" \
  "$lc" check --layout 'tpu.c*' --jobs 0x401
expect_usage_error "check --seed past uint64 in hexadecimal" "--seed 0x10000000000000000 is out of range" \
  "$lc" check --layout 'tpu.c*' --seed 0x10000000000000000
expect_usage_error "check --shard in hexadecimal past n" "--shard '0x3/2' is not i/n" \
  "$lc" check --layout 'tpu.c*' --shard 0x3/2
# Numbers in hexadecimal (0x) are the numbers they write: the same run, the same seed.
"$lc" check --layout 'tpu.c*' --cases 0x10 --seed 0x1f --jobs 0x2 --json > "$tmp/hex.json" 2> /dev/null ||
  fail "check with hexadecimal numbers exits $?"
"$lc" check --layout 'tpu.c*' --cases 16 --seed 31 --jobs 2 --json > "$tmp/dec.json" 2> /dev/null ||
  fail "check with decimal numbers exits $?"
grep -q '"seed": 31' "$tmp/hex.json" || fail "--seed 0x1f is not seed 31: $(head -c 400 "$tmp/hex.json")"
expect_eq "$(grep -v '"seconds"\|"elapsed' "$tmp/hex.json" | md5sum)" "$(grep -v '"seconds"\|"elapsed' "$tmp/dec.json" | md5sum)" \
  "check --cases 0x10 --seed 0x1f against --cases 16 --seed 31"
expect_usage_error "replay --timeout overflow" "--timeout 18446744073709551617 is out of range" \
  "$lc" replay "$src/corpus/fuzz_differential" --timeout 18446744073709551617
expect_usage_error "replay --jobs" "unknown option --jobs for 'replay'" "$lc" replay "$src/corpus/fuzz_differential" --jobs 0
expect_usage_error "replay without a path" "'replay' takes one or more" "$lc" replay
expect_usage_error "replay of a missing path" "$tmp/nothing: no such file or directory" "$lc" replay "$tmp/nothing"

# ---- check writes regression files only where --save says ------------------
mkdir -p "$tmp/bare"
(cd "$tmp/bare" && "$lc" check --impl "$mutant" --layout 'mge*' --cases 40 --fail-fast > out 2> err)
expect_eq "$?" "1" "check of the mutant without --save"
expect_eq "$(cd "$tmp/bare" && find . -mindepth 1 | sort | tr '\n' ' ')" "./err ./out " "files written without --save"
grep -q '^regressions: not saved (--save DIR' "$tmp/bare/out" || fail "unsaved failures are reported: $(cat "$tmp/bare/out")"
grep -q 'saved:' "$tmp/bare/out" && fail "a file is claimed saved without --save"

# ---- find: a relative plugin path from a scratch directory -----------------
mkdir -p "$tmp/a/plugins" "$tmp/a/saved" "$tmp/b"
cp "$mutant" "$tmp/a/plugins/libmine.so"
touch "$tmp/a/saved/.0123456789abcdef.txt.tmp"
(cd "$tmp/a" && "$lc" check --impl plugins/libmine.so --layout 'mge*' --cases 40 --fail-fast --save saved > out 2> err)
expect_eq "$?" "1" "check of the mutant"
[ -e "$tmp/a/saved/.0123456789abcdef.txt.tmp" ] && fail "a stale temporary file survives the next run"
grep -q "removed 1 unfinished file" "$tmp/a/err" || fail "the removal is reported: $(cat "$tmp/a/err")"
saved=$(sed -n 's/^  saved: //p' "$tmp/a/out")
expect_eq "$(dirname "$saved")" "$tmp/a/saved" "the saved path is absolute, in --save"
[ -f "$saved" ] || fail "saved file $saved missing"
expect_eq "$(head -1 "$saved" | cut -c1-6)" "case: " "the saved file starts with its case line"
grep -q "^regressions: 1 file(s) saved in $tmp/a/saved" "$tmp/a/out" || fail "check says where it saved: $(cat "$tmp/a/out")"
grep -q "replay: layoutcheck replay $tmp/a/saved --impl $tmp/a/plugins/libmine.so" "$tmp/a/out" || fail "replay hint"

repro=$(sed -n 's/^  repro: //p' "$tmp/a/out" | head -1)
case "$repro" in
  "layoutcheck repro "*" --impl $tmp/a/plugins/libmine.so --seed "[0-9]*) ;;
  *) fail "repro line lacks the absolute plugin path or the seed: $repro" ;;
esac
# The failure as check printed it: from its FAIL line to its repro line.
awk '/^FAIL /{on=1} on{print} on && /^  repro: /{exit}' "$tmp/a/out" > "$tmp/found"
[ -s "$tmp/found" ] || fail "no FAIL block in the check output"
(cd "$tmp/b" && eval "\"$lc\" ${repro#layoutcheck }" > "$tmp/repro.out" 2> "$tmp/repro.err")
expect_eq "$?" "1" "the repro line from another directory"
cmp -s "$tmp/found" "$tmp/repro.out" || fail "repro fails differently: $(diff "$tmp/found" "$tmp/repro.out")"

# ---- replay ------------------------------------------------------------------
(cd "$tmp/b" && "$lc" replay "$tmp/a/saved" --impl "$tmp/a/plugins/libmine.so" > replay.out 2>&1)
expect_eq "$?" "1" "replay of the saved directory against the mutant"
grep -q "^FAIL     $saved" "$tmp/b/replay.out" || fail "replay names the failing file: $(cat "$tmp/b/replay.out")"
grep -q "^replay: 0 passed, 1 failed" "$tmp/b/replay.out" || fail "replay summary: $(cat "$tmp/b/replay.out")"
"$lc" replay "$saved" --impl "$mutant" > /dev/null 2>&1
expect_eq "$?" "1" "replay of the saved file against the mutant"
for impl in reference optimized "$correct"; do
  "$lc" replay "$tmp/a/saved" --impl "$impl" > "$tmp/replay.ok" 2>&1
  expect_eq "$?" "0" "replay against $impl: $(cat "$tmp/replay.ok")"
done
# Files in the first format (a case line, comments) and fuzzer byte inputs side by side.
"$lc" replay "$src/corpus/fuzz_differential" > "$tmp/corpus.out" 2>&1
expect_eq "$?" "0" "replay of corpus/fuzz_differential: $(tail -3 "$tmp/corpus.out")"
grep -q '^replay: [1-9][0-9]* passed, 0 failed.*other files ignored' "$tmp/corpus.out" || fail "corpus summary: $(tail -1 "$tmp/corpus.out")"

# ---- malformed files stop the replay before any case runs ----------------------
mkdir -p "$tmp/bad/deeper"
cp "$saved" "$tmp/bad/good.txt"
printf 'case: %s | fp32 | 1,1,1,1\n# ok so far\nbogus\n' "$L" > "$tmp/bad/deeper/broken.txt"
expect_usage_error "malformed file in a tree" "$tmp/bad/deeper/broken.txt:3: expected 'key: value'" \
  "$lc" replay "$tmp/bad" --impl "$mutant"
[ -s "$tmp/out" ] && fail "cases ran despite a malformed file: $(cat "$tmp/out")"
printf 'case: tpu.nonesuch | fp32 | 1,1,1,1\n' > "$tmp/unknown.txt"
expect_usage_error "unknown layout" "$tmp/unknown.txt:1: unknown layout 'tpu.nonesuch'" "$lc" replay "$tmp/unknown.txt"
head -c 64 /dev/urandom > "$tmp/bytes"
expect_usage_error "a named byte file" "$tmp/bytes:" "$lc" replay "$tmp/bytes"
mkdir -p "$tmp/empty"
expect_usage_error "nothing to replay" "no regression files" "$lc" replay "$tmp/empty"

# ---- --cases: the same cases and verdicts on every run, any --jobs ------------------
"$lc" check --layout 'tpu.c*' --cases 30 --seed 5 > "$tmp/c1" 2> /dev/null || fail "check --cases exit status"
"$lc" check --layout 'tpu.c*' --cases 30 --seed 5 --jobs 2 > "$tmp/c2" 2> /dev/null || fail "check --cases --jobs 2"
cmp -s "$tmp/c1" "$tmp/c2" || fail "--cases differs between runs: $(diff "$tmp/c1" "$tmp/c2")"
grep -q '^tpu.compact  *30 ' "$tmp/c1" || fail "--cases 30 runs 30 cases: $(cat "$tmp/c1")"
"$lc" check --impl "$correct" --layout 'mge.n*' --cases 10 > "$tmp/c3" 2> "$tmp/c3.err" || fail "correct plugin, --cases: $(cat "$tmp/c3")"
grep -q '^mge.nchw  *10 ' "$tmp/c3" || fail "plugin --cases 10: $(cat "$tmp/c3")"
# The budget options keep working (boundary cases come first, then random ones up to --max-cases).
"$lc" check --layout 'tpu.compact' --min-cases 3 --max-cases 100 --seconds 600 > "$tmp/c4" 2> /dev/null || fail "--max-cases"
grep -q '^tpu.compact  *100 ' "$tmp/c4" || fail "--max-cases 100: $(cat "$tmp/c4")"

echo "replay: $failures failed"
exit $((failures > 0))
