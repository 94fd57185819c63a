#!/usr/bin/env bash
# Writes docs/coverage.md, the coverage table of the documented items, with
# `layoutcheck list --coverage --markdown` (items: docs/coverage_items.txt,
# compiled into the CLI; rebuild after editing it).
#   scripts/coverage_doc.sh [BUILD_DIR]   (default build, the dev preset's)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
lc="$build/bin/layoutcheck"
[ -x "$lc" ] || { echo "coverage_doc: build first (cmake --build --preset dev --target layoutcheck_cli)" >&2; exit 2; }
tmp="$(mktemp docs/coverage.md.XXXXXX)"
trap 'rm -f "$tmp"' EXIT
"$lc" list --coverage --markdown --items docs/coverage_items.txt > "$tmp"
mv "$tmp" docs/coverage.md
trap - EXIT
echo "wrote docs/coverage.md: $(grep -m1 '^\*\*Totals' docs/coverage.md)"
