#!/usr/bin/env bash
# Builds with gcc and runs every test but the slow ones; runs them again under
# AddressSanitizer + UndefinedBehaviorSanitizer; then builds the fuzzers with
# clang + ASan + UBSan, replays the corpora and fuzzes each harness briefly.
#   LAYOUTCHECK_FUZZ_SECONDS=20 scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev
ctest --preset dev
cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan
cmake --preset fuzz -DLAYOUTCHECK_FUZZ_SECONDS="${LAYOUTCHECK_FUZZ_SECONDS:-20}" >/dev/null
cmake --build --preset fuzz
ctest --preset fuzz
# Each fuzz-smoke test logs its fuzzer's rate; show them together.
grep -ho '^[a-z_0-9]*: [0-9]* exec/s.*' build-fuzz/Testing/Temporary/LastTest.log || true
