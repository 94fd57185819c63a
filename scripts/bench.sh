#!/usr/bin/env bash
# Runs the benchmarks with repetitions and writes bench/results/<host>.md (the
# median ratio of every row to the memcpy of the same run, each row's goal and
# whether it is met, oneDNN's rows beside MegEngine's) and <host>.json.
#   scripts/bench.sh [HOST_NAME] [extra layoutcheck_bench flags]
# Environment: BENCH_REPETITIONS (default 3), BENCH_MIN_TIME (seconds per
# repetition, default 0.05), BENCH_FILTER (default: every row but the reference's),
# BUILD_DIR (default build, the dev preset's tree, which it builds), LAYOUTCHECK_ISA (a
# cap on the kernels' instruction set, e.g. avx2: what a host without AVX-512 runs;
# oneDNN is capped alike and the report says so); BENCH_REPORT_ONLY=1
# rewrites the Markdown from the JSON of an earlier run; BENCH_README=1 also copies the
# host and the summary by family into README.md (between the bench-summary markers);
# BENCH_INTERLEAVE=0 runs each row's repetitions back to back (see interleave below).
set -euo pipefail
cd "$(dirname "$0")/.."
host="${1:-$(hostname -s)}"
shift || true
build="${BUILD_DIR:-build}"
if [ "$build" = build ]; then
  cmake --preset dev >/dev/null
  cmake --build --preset dev --target layoutcheck_bench bench_report
fi
out=bench/results
mkdir -p "$out"
# A cap on layoutcheck's kernels caps oneDNN's too, so that both sides run what
# a host of that level has.
onednn_isa=
case "${LAYOUTCHECK_ISA:-}" in
  portable|ssse3) onednn_isa=SSE41 ;;
  avx2) onednn_isa=AVX2 ;;
  avx512) onednn_isa=AVX512_CORE ;;
esac
[ -z "$onednn_isa" ] || export ONEDNN_MAX_CPU_ISA="$onednn_isa"
# A row's repetitions in a random order among all rows', each on new buffers:
# its median is then over as many moments of the run (a shared host has slow
# minutes) and as many places of its buffers in memory, on which an in-cache
# row's speed can depend more than memcpy's (1 x 128 x 64 x 64 NCHW64 int8
# unpack on a Zen 5: 0.29 of memcpy in every repetition of one process, 0.35
# in another's).
interleave=true
[ "${BENCH_INTERLEAVE:-1}" = 0 ] && interleave=false
info=$(mktemp)
trap 'rm -f "$info"' EXIT
if [ -n "${BENCH_REPORT_ONLY:-}" ] && [ -f "$out/$host.md" ]; then
  # The host of the earlier run (the block under "## Host"), not this machine.
  awk '/^## Host$/ { host = 1; next } host && /^```$/ { if (block) exit; block = 1; next } block' \
    "$out/$host.md" > "$info"
else {
  # CPU family and model tell the core generation apart where the model name
  # does not (a virtual machine's "AMD EPYC": family 25 is Zen 3/4, 26 Zen 5).
  lscpu | grep -E '^(Model name|Vendor ID|CPU family|Model|CPU\(s\)|Thread\(s\) per core|L1d|L1i|L2|L3)' || true
  # Cache sizes in bytes (lscpu omits them on some virtual machines).
  getconf -a | grep -E '^LEVEL[1-3]_(I|D)?CACHE_SIZE' | tr -s ' ' || true
  # The ISA extensions the kernels choose between at run time.
  echo "ISA: $(grep -m1 -o -w -E 'sse4_2|avx|avx2|fma|f16c|bmi2|avx512f|avx512bw|avx512vl|avx512dq|avx512vbmi|avx512_vbmi2|avx512_bf16|avx512_fp16|gfni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "Kernel: $(uname -sr)"
  # The bench's buffers are not advised: under [madvise] or [never] they lie on 4 KiB pages.
  echo "Transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
  if [ -n "${LAYOUTCHECK_ISA:-}" ]; then
    echo "Kernels capped: LAYOUTCHECK_ISA=$LAYOUTCHECK_ISA${onednn_isa:+, oneDNN ONEDNN_MAX_CPU_ISA=$onednn_isa} (the ISA line is the CPU's)"
  fi
  # The code measured: a result read later is about this commit's kernels.
  if commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
    git diff --quiet HEAD -- . ':!bench/results' ':!bench/below_goal.txt' ':!README.md' 2>/dev/null || commit="$commit with uncommitted changes"
    echo "Commit: $commit"
  fi
  if [ "$interleave" = true ]; then
    echo "Repetitions: of all rows in a random order, each on new buffers (not so with BENCH_INTERLEAVE=0)"
  fi
  echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$info"
fi
[ -n "${BENCH_REPORT_ONLY:-}" ] || OMP_NUM_THREADS=1 "$build/bin/layoutcheck_bench" \
  --benchmark_filter="${BENCH_FILTER:--/reference}" \
  --benchmark_repetitions="${BENCH_REPETITIONS:-3}" --benchmark_enable_random_interleaving="$interleave" \
  --benchmark_min_time="${BENCH_MIN_TIME:-0.05}" \
  --benchmark_out="$out/$host.json" --benchmark_out_format=json "$@" >/dev/null
# bench/below_goal.txt: why a row falls short of its goal where it does.
notes=()
[ -f bench/below_goal.txt ] && notes=(bench/below_goal.txt)
"$build/bin/bench_report" "$out/$host.json" "$info" "$host" "${notes[@]}" > "$out/$host.md"
echo "wrote $out/$host.md and $out/$host.json"
if [ -n "${BENCH_README:-}" ]; then
  # Every host measured so far (bench/results/*.md), this one first: goals
  # must hold on each.
  summary=$(mktemp)
  {
    echo "<!-- bench-summary:begin (scripts/bench.sh with BENCH_README=1 writes this block) -->"
    echo "Ratios to the memcpy of the same run, single thread, on each host measured; every row in its"
    echo "\`bench/results/HOST.md\`."
    for md in "$out/$host.md" $(ls "$out"/*.md | grep -v -x -F "$out/$host.md"); do
      name=$(basename "$md" .md)
      model=$(sed -n 's/^Model name: *//p' "$md" | head -1)
      family=$(sed -n 's/^CPU family: *//p' "$md" | head -1)
      cpus=$(sed -n 's/^CPU(s): *//p' "$md" | head -1)
      when=$(sed -n 's/^Written by `scripts\/bench.sh` (\([0-9-]*\)T.*/\1/p' "$md" | head -1)
      commit=$(sed -n 's/^Commit: //p' "$md" | head -1)
      echo
      capped=$(sed -n 's/^Kernels capped: LAYOUTCHECK_ISA=\([a-z0-9]*\).*/\1/p' "$md" | head -1)
      echo "Host [\`$name\`]($md) ($when${commit:+, commit $commit}): $model${family:+, CPU family $family}, $cpus CPUs," \
        "$(sed -n 's/^ISA: //p' "$md" | tr ' ' '\n' | grep -E '^avx' | tr '\n' ' ' | sed 's/ $//')${capped:+; kernels and oneDNN capped at $capped, as on a host without AVX-512}."
      echo
      sed -n '/^## Summary by family/,$p' "$md" | tail -n +3
    done
    echo "<!-- bench-summary:end -->"
  } > "$summary"
  awk -v file="$summary" '
    /^<!-- bench-summary:begin/ { while ((getline line < file) > 0) print line; skip = 1; next }
    /^<!-- bench-summary:end/ { skip = 0; next }
    !skip' README.md > README.md.new && mv README.md.new README.md
  rm -f "$summary"
  echo "updated the benchmark summary in README.md"
fi
grep -E 'goal\(s\) missed' "$out/$host.md" || true
