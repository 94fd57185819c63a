#!/usr/bin/env bash
# bench_report: each row's ratio uses the memcpy paired with the row when the
# row has one (the group's memcpy row otherwise), a row below its goal is
# marked MISS, a speed-up over oneDNN is the quotient of the two rows' ratios
# to memcpy, a missed row is listed with its reason, and a file that is not
# JSON is an error naming it. With SOURCE_DIR, bench/below_goal.txt reads and
# names only rows of the committed results.
#   bench_report_test.sh BENCH_REPORT [SOURCE_DIR]
set -u
report="$1"
src="${2:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# One iteration run per repetition (times in ms; memcpy_* counters in seconds).
row() {  # NAME REP REAL_MS [PAIRED_MEMCPY_MS]
  local paired=""
  [ -n "${4:-}" ] && paired=", \"memcpy_real\": $(awk "BEGIN{print $4/1000}"), \"memcpy_cpu\": $(awk "BEGIN{print $4/1000}")"
  printf '{"name": "%s/real_time", "run_name": "%s/real_time", "run_type": "iteration", "repetition_index": %d, "time_unit": "ms", "real_time": %s, "cpu_time": %s, "bytes_per_second": 1e9%s},\n' \
    "$1" "$1" "$2" "$3" "$3" "$paired"
}
{
  echo '{"context": {"date": "today", "num_cpus": 2, "load_avg": [0.1, 0.1, 0.1]}, "benchmarks": ['
  for rep in 0 1 2; do
    # The group's memcpy ran slow; the memcpy paired with the pack says the pack is below 0.9.
    row tpu.aligned/fp32/16MiB/memcpy $rep 2.0
    row tpu.aligned/fp32/16MiB/pack/optimized $rep 1.0 0.8
    # No paired memcpy: the group's is used.
    row tpu.aligned/fp32/16MiB/unpack/optimized $rep 1.0
    # Same time as oneDNN, but oneDNN ran while memcpy was twice as fast: 2x.
    row mge.nchw4/fp32/64MiB/memcpy $rep 1.0
    row mge.nchw4/fp32/64MiB/pack/optimized $rep 2.0 2.0
    row mge.nchw4/fp32/64MiB/pack/onednn $rep 2.0 1.0
    # 1.1x oneDNN: below the 1.2x goal.
    row mge.nchw4/fp32/64MiB/unpack/optimized $rep 1.0 1.0
    row mge.nchw4/fp32/64MiB/unpack/onednn $rep 1.1 1.0
  done
  echo '{"name": "end", "run_type": "aggregate"}]}'
} > "$tmp/run.json"
echo "Model name: test CPU" > "$tmp/info"
"$report" "$tmp/run.json" "$tmp/info" testhost > "$tmp/out.md" || fail "bench_report exits $?"
expect_row() {  # PATTERN WHAT
  grep -qE "$1" "$tmp/out.md" || fail "$2: no row matching '$1' in: $(grep -F '| ' "$tmp/out.md")"
}
expect_row '^\| tpu.aligned/fp32/16MiB/pack/optimized \| 0\.800 \| 0\.800 \| 0\.9 \| \*\*MISS\*\* \|' \
  "the paired memcpy decides, and 0.8 is below the 0.9 goal"
expect_row '^\| tpu.aligned/fp32/16MiB/unpack/optimized \| 2\.000 \| 2\.000 \| 0\.9 \| yes \|' \
  "without a paired memcpy the group's is used"
expect_row '^\| mge.nchw4/fp32/64MiB/pack/optimized \| 1\.000 \| 1\.000 \| 0\.6 \| yes \| 0\.500 \| 2\.00x \|$' \
  "the speed-up over oneDNN is the quotient of the ratios to memcpy"
expect_row '^\| mge.nchw4/fp32/64MiB/unpack/optimized \| 1\.000 \| 1\.000 \| 0\.6 \| yes \| 0\.909 \| 1\.10x \*\*MISS\*\* \|$' \
  "1.1x oneDNN is marked as below 1.2x"
expect_row '^2 goal\(s\) missed: 1 of 4 rows below their memcpy goal, 1 of 2 rows below 1\.2x oneDNN' \
  "the count of missed goals"

# A missed goal is listed with its reason from BELOW_GOAL.txt, or none recorded.
expect_row '^- `tpu.aligned/fp32/16MiB/pack/optimized` \(0\.800, goal 0\.9\): no reason recorded' \
  "without notes a missed row is listed with no reason"
printf '# comment\n\ntpu.aligned/fp32/16MiB/pack/optimized | the reads wait on memory\n' > "$tmp/notes.txt"
"$report" "$tmp/run.json" "$tmp/info" testhost "$tmp/notes.txt" > "$tmp/out.md" || fail "bench_report with notes exits $?"
expect_row '^- `tpu.aligned/fp32/16MiB/pack/optimized` \(0\.800, goal 0\.9\): the reads wait on memory$' \
  "a missed row is listed with its reason"
grep -qF 'tpu.aligned/fp32/16MiB/unpack/optimized` (' "$tmp/out.md" && fail "a row that met its goal is listed as below it"
# A row below 1.2x oneDNN is listed under its own heading, with the reason of
# its "ROW vs oneDNN" line: a row's memcpy reason is not its oneDNN reason.
expect_row '^## Rows below 1\.2x oneDNN$' "the heading of the rows below 1.2x oneDNN"
expect_row '^- `mge.nchw4/fp32/64MiB/unpack/optimized` \(1\.10x, oneDNN at 0\.909 of memcpy\): no reason recorded' \
  "without its 'vs oneDNN' line a row below 1.2x oneDNN is listed with no reason"
printf 'mge.nchw4/fp32/64MiB/unpack/optimized | not this one\nmge.nchw4/fp32/64MiB/unpack/optimized vs oneDNN | both copy\n' \
  > "$tmp/notes.txt"
"$report" "$tmp/run.json" "$tmp/info" testhost "$tmp/notes.txt" > "$tmp/out.md" || fail "bench_report with oneDNN notes exits $?"
expect_row '^- `mge.nchw4/fp32/64MiB/unpack/optimized` \(1\.10x, oneDNN at 0\.909 of memcpy\): both copy$' \
  "a row below 1.2x oneDNN is listed with the reason of its 'vs oneDNN' line"
grep -qF 'pack/optimized` (2.00x' "$tmp/out.md" && fail "a row at 2x oneDNN is listed as below 1.2x"
expect_notes_error() {  # WHAT TEXT MESSAGE
  printf '%s\n' "$2" > "$tmp/notes.txt"
  if "$report" "$tmp/run.json" "$tmp/info" testhost "$tmp/notes.txt" > /dev/null 2> "$tmp/err"; then
    fail "$1: accepted"
  fi
  grep -qF "$3" "$tmp/err" || fail "$1: no '$3' in: $(cat "$tmp/err")"
}
expect_notes_error "a line without a reason" "tpu.aligned/fp32/16MiB/pack/optimized" "notes.txt:1: not 'ROW | reason'"
expect_notes_error "a row named twice" "$(printf 'a/b | one\na/b | two')" "notes.txt:2: row a/b is named twice"
expect_notes_error "a oneDNN reason named twice" "$(printf 'a/b vs oneDNN | one\na/b | two\na/b vs oneDNN | three')" \
  "notes.txt:3: row a/b vs oneDNN is named twice"
expect_notes_error "'vs oneDNN' without a row" "vs oneDNN | why" "notes.txt:1: not 'ROW | reason'"
expect_notes_error "words after 'vs oneDNN'" "a/b vs oneDNN too | why" "notes.txt:1: not 'ROW | reason'"
if "$report" "$tmp/run.json" "$tmp/info" testhost "$tmp/missing.txt" > /dev/null 2> "$tmp/err"; then
  fail "a missing notes file is accepted"
fi
grep -qF "cannot read $tmp/missing.txt" "$tmp/err" || fail "no error naming the missing notes file: $(cat "$tmp/err")"

if [ -n "$src" ] && [ -f "$src/bench/below_goal.txt" ]; then
  notes="$src/bench/below_goal.txt"
  "$report" "$tmp/run.json" "$tmp/info" testhost "$notes" > /dev/null 2> "$tmp/err" ||
    fail "bench/below_goal.txt does not read: $(cat "$tmp/err")"
  grep -v '^#' "$notes" | grep -F ' | ' | sed 's/ | .*//; s/ vs oneDNN$//' | while read -r name; do
    cat "$src"/bench/results/*.json | grep -qF "\"run_name\": \"$name/real_time\"" ||
      echo "FAIL: bench/below_goal.txt names $name, a row of no file in bench/results"
  done > "$tmp/unknown"
  [ -s "$tmp/unknown" ] && { cat "$tmp/unknown"; failures=$((failures + 1)); }
fi

# A figure just below its goal is not rounded up to it: more decimals.
{
  echo '{"context": {"date": "today", "num_cpus": 2, "load_avg": [0.1, 0.1, 0.1]}, "benchmarks": ['
  row tpu.aligned/fp32/16MiB/memcpy 0 1.0
  row tpu.aligned/fp32/16MiB/pack/optimized 0 1.0 0.8996
  row mge.nchw4/fp32/64MiB/memcpy 0 1.0
  row mge.nchw4/fp32/64MiB/pack/optimized 0 1.0 1.0
  row mge.nchw4/fp32/64MiB/pack/onednn 0 1.197 1.0
  echo '{"name": "end", "run_type": "aggregate"}]}'
} > "$tmp/near.json"
"$report" "$tmp/near.json" "$tmp/info" testhost > "$tmp/out.md" || fail "bench_report on near.json exits $?"
expect_row '^\| tpu.aligned/fp32/16MiB/pack/optimized \| 0\.8996 \| 0\.900 \| 0\.9 \| \*\*MISS\*\* \|' \
  "0.8996 against a goal of 0.9 reads 0.8996"
expect_row '^\| mge.nchw4/fp32/64MiB/pack/optimized \| 1\.000 \| .* \| 1\.197x \*\*MISS\*\* \|$' \
  "1.197x against 1.2x reads 1.197x"
expect_row '^- `mge.nchw4/fp32/64MiB/pack/optimized` \(1\.197x,' "the list of rows below 1.2x oneDNN reads 1.197x"

# Repetitions interleaved at random (--benchmark_enable_random_interleaving):
# the table keeps the rows' registration order (family_index), and each row's
# ratio still pairs its own repetitions.
fam() {  # FAMILY NAME REP REAL_MS [PAIRED_MEMCPY_MS]
  row "$2" "$3" "$4" "${5:-}" | sed "s/^{/{\"family_index\": $1, \"per_family_instance_index\": 0, /"
}
{
  echo '{"context": {"date": "today", "num_cpus": 2, "load_avg": [0.1, 0.1, 0.1]}, "benchmarks": ['
  fam 2 tpu.aligned/fp32/16MiB/unpack/optimized 1 1.0 0.5
  fam 0 tpu.aligned/fp32/16MiB/memcpy 0 1.0
  fam 1 tpu.aligned/fp32/16MiB/pack/optimized 1 1.0 0.7
  fam 2 tpu.aligned/fp32/16MiB/unpack/optimized 0 1.0 0.3
  fam 1 tpu.aligned/fp32/16MiB/pack/optimized 0 1.0 0.9
  fam 0 tpu.aligned/fp32/16MiB/memcpy 1 1.0
  fam 1 tpu.aligned/fp32/16MiB/pack/optimized 2 1.0 0.8
  fam 2 tpu.aligned/fp32/16MiB/unpack/optimized 2 1.0 0.4
  echo '{"name": "end", "run_type": "aggregate"}]}'
} > "$tmp/shuffled.json"
"$report" "$tmp/shuffled.json" "$tmp/info" testhost > "$tmp/out.md" || fail "bench_report on shuffled.json exits $?"
listed=$(grep -oE '^\| tpu[^ ]+/optimized' "$tmp/out.md" | tr '\n' ' ')
[ "$listed" = "| tpu.aligned/fp32/16MiB/pack/optimized | tpu.aligned/fp32/16MiB/unpack/optimized " ] ||
  fail "interleaved repetitions: rows not in registration order: $listed"
expect_row '^\| tpu.aligned/fp32/16MiB/pack/optimized \| 0\.800 \|' "interleaved: the pack's median of 0.7, 0.8, 0.9"
expect_row '^\| tpu.aligned/fp32/16MiB/unpack/optimized \| 0\.400 \|' \
  "interleaved: the unpack's median of 0.3, 0.4, 0.5"

echo 'not json' > "$tmp/bad.json"
if "$report" "$tmp/bad.json" "$tmp/info" testhost > /dev/null 2> "$tmp/err"; then
  fail "bench_report accepts a file that is not JSON"
fi
grep -qF "bad.json is not JSON" "$tmp/err" || fail "no error naming the file in: $(cat "$tmp/err")"

[ "$failures" -eq 0 ] && echo "bench_report test: all passed"
exit $((failures > 0))
