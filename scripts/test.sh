#!/usr/bin/env bash
# Builds with gcc and runs every test but the slow ones; then builds with clang
# under AddressSanitizer + UndefinedBehaviorSanitizer, the fuzzers with
# libFuzzer, and runs the tests again there (but the plugin label's, whose
# example plugins measure the checker from child processes), the corpora
# replayed and each harness fuzzed briefly. One sanitizer build serves both:
# the gcc `asan` build and a clang build of the fuzzers alone took 15 minutes
# on a 2-vCPU EPYC, this one 7.
#   LAYOUTCHECK_FUZZ_SECONDS=20 scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev
ctest --preset dev
cmake --preset fuzz -DLAYOUTCHECK_FUZZ_SECONDS="${LAYOUTCHECK_FUZZ_SECONDS:-20}" >/dev/null
cmake --build --preset fuzz
ctest --preset fuzz
# Each fuzz-smoke test logs its fuzzer's rate; show them together.
grep -ho '^[a-z_0-9]*: [0-9]* exec/s.*' build-fuzz/Testing/Temporary/LastTest.log || true
