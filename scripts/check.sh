#!/usr/bin/env bash
# The main job: the conformance check of the bundled optimized implementation
# against the reference over every registered layout.
#   scripts/check.sh [layoutcheck check options, e.g. --seconds 120 --layout 'tpu*']
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset dev >/dev/null
cmake --build --preset dev --target layoutcheck_cli
build/bin/layoutcheck oracle
exec build/bin/layoutcheck check --seconds 60 "$@"
