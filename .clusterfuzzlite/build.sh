#!/bin/bash -eu
# Builds every layoutcheck fuzzer the way ClusterFuzzLite and OSS-Fuzz expect:
# with the engine's compilers and flags ($CC, $CXX, $CFLAGS, $CXXFLAGS), linked
# with $LIB_FUZZING_ENGINE, and put into $OUT as NAME_fuzzer with
# NAME_fuzzer_seed_corpus.zip, NAME_fuzzer.dict and NAME_fuzzer.options beside it
# (the options add the flags of corpus/NAME.options where there is one).
# fuzz/fuzz_differential.cc becomes $OUT/differential_fuzzer, and so on.
#
# Run locally (the fuzz-smoke test `clusterfuzzlite.build` does this):
#   SRC=/path/to/parent OUT=/tmp/out WORK=/tmp/work CC=clang CXX=clang++ \
#   CFLAGS="-fsanitize=address,fuzzer-no-link" CXXFLAGS="$CFLAGS" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer .clusterfuzzlite/build.sh
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$src/CMakeLists.txt" ]; then src="$SRC/layoutcheck"; fi
work="${WORK:-$(mktemp -d)}/layoutcheck-build"
: "${OUT:?OUT must name the output directory}"
: "${LIB_FUZZING_ENGINE:?LIB_FUZZING_ENGINE must name the fuzzing engine (e.g. -fsanitize=fuzzer)}"

# The engine's flags choose the optimization: Release adds only -DNDEBUG to
# them, where its own -O3 would come after theirs and win.
cmake -S "$src" -B "$work" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-DNDEBUG -DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG \
  -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
  -DCMAKE_C_FLAGS="${CFLAGS:-}" -DCMAKE_CXX_FLAGS="${CXXFLAGS:-}" \
  -DLAYOUTCHECK_BUILD_FUZZERS=ON -DLAYOUTCHECK_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DLAYOUTCHECK_BUILD_TESTS=OFF -DLAYOUTCHECK_BUILD_BENCH=OFF
fuzzers=()
for f in "$src"/fuzz/fuzz_*.cc; do fuzzers+=("$(basename "$f" .cc)"); done
cmake --build "$work" --target "${fuzzers[@]}"

mkdir -p "$OUT"
for name in "${fuzzers[@]}"; do
  out="$OUT/${name#fuzz_}_fuzzer"
  cp "$work/bin/$name" "$out"
  corpus=("$src/corpus/$name" "$src/corpus/regressions/$name")
  rm -f "${out}_seed_corpus.zip"
  # One flat archive of the seeds and every kept finding (names made unique).
  stage="$(mktemp -d)"
  for dir in "${corpus[@]}"; do
    [ -d "$dir" ] || continue
    find "$dir" -type f | while read -r file; do
      cp "$file" "$stage/$(basename "$dir")_$(basename "$file")"
    done
  done
  if [ -n "$(ls -A "$stage")" ]; then (cd "$stage" && zip -q -r "${out}_seed_corpus.zip" .); fi
  rm -rf "$stage"
  if [ -f "$src/corpus/$name.dict" ]; then cp "$src/corpus/$name.dict" "$out.dict"; fi
  {
    echo "[libfuzzer]"
    echo "timeout = 10"
    echo "rss_limit_mb = 4096"
    if [ -f "$src/corpus/$name.dict" ]; then echo "dict = $(basename "$out").dict"; fi
    # The fuzzer's own flags (corpus/NAME.options, the same format).
    if [ -f "$src/corpus/$name.options" ]; then grep -E '^[a-z_]+ *= *[^ ]+ *$' "$src/corpus/$name.options"; fi
  } >"$out.options"
done
echo "layoutcheck: ${#fuzzers[@]} fuzzers in $OUT"
