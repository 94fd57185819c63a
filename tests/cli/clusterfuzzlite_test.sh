#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh with the environment ClusterFuzzLite gives it
# and checks what it leaves in $OUT: every fuzzer as NAME_fuzzer, runnable, with
# its seed corpus archive, options and dictionary.
#   clusterfuzzlite_test.sh CC CXX
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export CC="$1" CXX="$2" OUT="$tmp/out" WORK="$tmp/work" SRC="$tmp/src"
# -O0: the engine's flags must reach every compile (checked below), and it is
# the quickest level to build.
export CFLAGS="-O0 -fsanitize=fuzzer-no-link" CXXFLAGS="-O0 -fsanitize=fuzzer-no-link"
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
mkdir -p "$WORK" "$SRC"
bash "$root/.clusterfuzzlite/build.sh" >"$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log"; exit 1; }

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# No compile of the build adds an optimization level of its own to the engine's.
ninja_file="$WORK/layoutcheck-build/build.ninja"
[ -f "$ninja_file" ] || fail "$ninja_file is missing"
overridden=$(grep -E '^ *FLAGS = ' "$ninja_file" | grep -E ' -O([1-3sz]|fast)( |$)' | head -n 1 || true)
[ -z "$overridden" ] || fail "a compile overrides the engine's -O0: $overridden"
count=0
for src in "$root"/fuzz/fuzz_*.cc; do
  name="$(basename "$src" .cc)"
  out="$OUT/${name#fuzz_}_fuzzer"
  count=$((count + 1))
  [ -x "$out" ] || { fail "$out is missing or not executable"; continue; }
  [ -f "$out.options" ] && grep -q '^\[libfuzzer\]' "$out.options" || fail "$out.options is missing or has no [libfuzzer] section"
  if [ -f "$root/corpus/$name.dict" ]; then
    cmp -s "$root/corpus/$name.dict" "$out.dict" || fail "$out.dict differs from corpus/$name.dict"
    grep -q "^dict = $(basename "$out").dict$" "$out.options" || fail "$out.options does not name its dictionary"
  fi
  if [ -f "$root/corpus/$name.options" ]; then
    while read -r flag; do
      grep -qxF "$flag" "$out.options" || fail "$out.options lacks '$flag' of corpus/$name.options"
    done < <(grep -E '^[a-z_]+ *= *[^ ]+ *$' "$root/corpus/$name.options")
  fi
  seeds=$(find "$root/corpus/$name" "$root/corpus/regressions/$name" -type f 2>/dev/null | wc -l)
  if [ "$seeds" -gt 0 ]; then
    [ -f "${out}_seed_corpus.zip" ] || { fail "${out}_seed_corpus.zip is missing"; continue; }
    zipped=$(unzip -Z1 "${out}_seed_corpus.zip" | wc -l)
    [ "$zipped" = "$seeds" ] || fail "${out}_seed_corpus.zip holds $zipped files, the corpus $seeds"
    # The fuzzer replays its own seed corpus.
    mkdir -p "$tmp/seeds/$name"
    unzip -q "${out}_seed_corpus.zip" -d "$tmp/seeds/$name"
    "$out" -runs=0 "$tmp/seeds/$name" >"$tmp/run.log" 2>&1 || { tail -n 20 "$tmp/run.log"; fail "$out does not replay its seed corpus"; }
  fi
done
found=$(find "$OUT" -maxdepth 1 -name '*_fuzzer' -type f | wc -l)
[ "$found" = "$count" ] || fail "$OUT holds $found fuzzers, fuzz/ has $count"
[ "$count" -gt 0 ] || fail "no fuzzers in fuzz/"
[ "$fails" = 0 ] && echo "clusterfuzzlite build: $count fuzzers in \$OUT, each with its options, seed corpus and (where corpus/ has one) dictionary"
exit "$fails"
