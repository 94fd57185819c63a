#!/usr/bin/env bash
# The coverage table (layoutcheck list --coverage, tools/coverage_cmd.cc):
# docs/coverage.md is what the registry produces, the item list names only
# what exists and everything registered, and its properties and fuzzers exist.
#   coverage_test.sh LAYOUTCHECK SOURCE_DIR
set -u
lc="$1"
src="$2"
items="$src/docs/coverage_items.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# docs/coverage.md is the table of the built-in list, and that list is the file.
"$lc" list --coverage --markdown > "$tmp/coverage.md" 2> "$tmp/err" || fail "list --coverage --markdown exits $?: $(cat "$tmp/err")"
if ! cmp -s "$tmp/coverage.md" "$src/docs/coverage.md"; then
  fail "docs/coverage.md differs from the registry's table (run scripts/coverage_doc.sh):"
  diff "$src/docs/coverage.md" "$tmp/coverage.md" | head -20
fi
"$lc" list --coverage --markdown --items "$items" | cmp -s - "$tmp/coverage.md" ||
  fail "the built-in item list differs from docs/coverage_items.txt (rebuild)"

# expect_row NAME SED_SCRIPT ID ROW_REGEX: the item list edited by SED_SCRIPT
# gives item ID a row matching ROW_REGEX (after the id).
expect_row() {
  sed "$2" "$items" > "$tmp/edited.txt"
  cmp -s "$tmp/edited.txt" "$items" && { fail "$1: the edit changed nothing"; return; }
  "$lc" list --coverage --items "$tmp/edited.txt" > "$tmp/edited" || { fail "$1: list --coverage exits $?"; return; }
  grep -E "^${3//./\\.} +$4" "$tmp/edited" > /dev/null || fail "$1: $(grep "^$3 " "$tmp/edited")"
}

# Text and JSON: the same totals, one row per item.
count=$(grep -v '^#' "$items" | grep -c '|')
"$lc" list --coverage > "$tmp/text" || fail "list --coverage exits $?"
grep -q "^$count items: " "$tmp/text" || fail "the text totals do not count $count items: $(tail -1 "$tmp/text")"
[ "$(($(wc -l < "$tmp/text") - 2))" = "$count" ] || fail "the text table has not $count rows"
"$lc" list --coverage --json > "$tmp/json" || fail "list --coverage --json exits $?"
grep -q '"command": "coverage"' "$tmp/json" || fail "the JSON report is not the coverage command's"
grep -q "\"items\": $count," "$tmp/json" || fail "the JSON totals do not count $count items"
[ "$(grep -c '"status": ' "$tmp/json")" = "$count" ] || fail "the JSON report has not $count items"
grep -q '"id": "tpu.aligned",' "$tmp/json" || fail "no tpu.aligned in the JSON report"
# A registered, fully covered layout is complete; an item with no targets is missing.
grep -E '^tpu\.aligned +layout +yes +yes +[1-9][0-9]* +yes +yes +yes +complete$' "$tmp/text" > /dev/null ||
  fail "tpu.aligned is not complete: $(grep '^tpu.aligned ' "$tmp/text")"
grep -E '^tla\.inttuple\.api +function +yes +yes +[1-9][0-9]* +yes +yes +yes +complete$' "$tmp/text" > /dev/null ||
  fail "tla.inttuple.api (tuple: targets) is not complete: $(grep '^tla.inttuple.api ' "$tmp/text")"
expect_row "an item with no targets is not missing" \
  's/^\(tla.inttuple.api | function | IntTuple\) | .* | \(rank(IntTuple)\)/\1 | - | - | - | \2/' \
  tla.inttuple.api 'function +- +- +0 +- +- +- +missing$'
grep -E '^nvdla\.table\.sdp +table +yes +yes +[1-9][0-9]* +yes +yes +yes +complete$' "$tmp/text" > /dev/null ||
  fail "nvdla.table.sdp is not a complete table: $(grep '^nvdla.table.sdp ' "$tmp/text")"
# An SDP layer rule is checkable on a user's code through nvdla_layer_supported (layer:) only.
for item in nvdla.on-flying nvdla.sdp.bn-int8 nvdla.sdp.ew-int8; do
  grep -E "^${item//./\\.} +rule +yes +yes +[1-9][0-9]* +yes +yes +yes +complete$" "$tmp/text" > /dev/null ||
    fail "$item (layer: targets) is not complete: $(grep "^$item " "$tmp/text")"
done
expect_row "without its layer: targets nvdla.on-flying is still checkable on a plugin" \
  's# layer:nvdla.precision/[a-z0-9-]*##g' nvdla.on-flying 'rule +yes +yes +[1-9][0-9]* +yes +yes +- +partial$'

# Properties and fuzzers the list names exist in the sources.
check_names() {  # ITEMS_FILE: prints the names that do not exist
  grep -v '^#' "$1" | awk -F'|' 'NF == 7 { print $5 }' | tr ' ' '\n' | grep -v '^-\?$' | sort -u |
    while read -r p; do
      grep -qE "RC_GTEST_PROP\(${p%%.*}, ${p#*.}," "$src"/tests/property/*.cc || echo "property $p"
    done
  grep -v '^#' "$1" | awk -F'|' 'NF == 7 { print $6 }' | tr ' ' '\n' | grep -v '^-\?$' | sort -u |
    while read -r f; do [ -f "$src/fuzz/$f.cc" ] || echo "fuzzer $f"; done
}
missing=$(check_names "$items")
[ -z "$missing" ] || fail "docs/coverage_items.txt names what does not exist: $missing"
sed 's/TpuProperty.stride_formulas_hold/TpuProperty.no_such_property/; s/| fuzz_nvdla_sparse |/| fuzz_no_such |/' "$items" > "$tmp/names.txt"
missing=$(check_names "$tmp/names.txt")
case "$missing" in *"property TpuProperty.no_such_property"*"fuzzer fuzz_no_such"*) ;;
  *) fail "a missing property and fuzzer are not found: '$missing'" ;; esac

# A list that does not hold against the registry is an error naming the line.
expect_error() {  # NAME TEXT SED_SCRIPT
  sed "$3" "$items" > "$tmp/items.txt"
  cmp -s "$tmp/items.txt" "$items" && { fail "$1: the edit changed nothing"; return; }
  "$lc" list --coverage --items "$tmp/items.txt" > /dev/null 2> "$tmp/err"
  local status=$?
  [ "$status" = 2 ] || fail "$1: exit status $status, expected 2"
  grep -qF -- "$2" "$tmp/err" || fail "$1: no '$2' in: $(cat "$tmp/err")"
}
expect_error "an unknown layout" "no registered layout tpu.no_such" 's/layout:tpu.continuous /layout:tpu.no_such /'
expect_error "an unknown rule" "no rule tpu.compact/no-such in the rules table" 's#rule:tpu.compact/address-align-4 #rule:tpu.compact/no-such #'
expect_error "an unknown parameter" "no registered layout parameter tpu.matrix.no_such" 's/param:tpu.matrix.w /param:tpu.matrix.no_such /'
expect_error "an unknown entry" "no ABI entry nvdla.no_such" 's/entry:nvdla.sparse /entry:nvdla.no_such /'
expect_error "an unknown table" "no precision table cdp" 's/table:lrn /table:cdp /'
expect_error "an unknown okk function" "no function okk_no_such that" 's/okk:okk_compact_stride/okk:okk_no_such/'
expect_error "an unknown tuple function" "no function size that \`layoutcheck tuple\` checks" 's/| tuple:rank tuple:get tuple:depth |/| tuple:size tuple:get tuple:depth |/'
expect_error "a layer target that is a layout's rule" "no SDP layer rule tpu.compact/address-align-4" \
  's#layer:nvdla.precision/conv-table #layer:tpu.compact/address-align-4 #'
expect_error "a layer target that is no rule" "no SDP layer rule nvdla.precision/no-such" \
  's#layer:nvdla.precision/conv-table #layer:nvdla.precision/no-such #'
expect_error "an unknown section" "'Continuous Layouts' is not a section heading of" 's/| Continuous Layout | layout:/| Continuous Layouts | layout:/'
expect_error "a layout without an item" "no item names layout:tpu.continuous" '/^tpu.continuous |/d'
expect_error "a rule without an item" "no item names rule:tpu.compact/address-align-4" '/^tpu.compact.rules |/d'
expect_error "a duplicate id" "the id tpu.aligned is used twice" 's/^tpu.compact |/tpu.aligned |/'
expect_error "an unknown kind" "unknown kind 'view'" 's/^tpu.compact | layout |/tpu.compact | view |/'
expect_error "a cases glob with no case" "cases:tpu/no_such/* matches no oracle case" 's#cases:tpu/address/\*#cases:tpu/no_such/*#'
expect_error "a missing field" "an item has 7 fields" 's/^\(tpu.compact | layout | Compact Layout\) |/\1/'
"$lc" list --coverage --items "$tmp/no_such_file" > /dev/null 2>&1
[ $? = 2 ] || fail "an unreadable item list does not exit 2"
"$lc" list --markdown > /dev/null 2>&1
[ $? = 2 ] || fail "--markdown without --coverage does not exit 2"

# The oracles decide columns: a copy of them (LAYOUTCHECK_DATA_DIR) with a changed
# layer line leaves the optimized layer rules disagreeing with it, and value
# oracles citing another section count for none of the Winograd items.
data="$tmp/data"
mkdir -p "$data"
cp -r "$src/oracles" "$data/oracles"
ln -s "$(cd "$src/../shared/spec" && pwd)" "$data/spec" || fail "no documents beside the sources"
sed -i 's#^layer offline fp16 int8 -> nvdla.precision/sdp-offline-table#layer offline fp16 int8 -> nvdla.precision/on-flying-same-bit-depth#' \
  "$data/oracles/precision/sdp_layer.precision"
sed -i 's/§ Basic Weight for Winograd Convolution$/§ Sparse Compression option/' "$data/oracles/nvdla/figures.values"
LAYOUTCHECK_DATA_DIR="$data" "$lc" list --coverage > "$tmp/changed" 2> "$tmp/err" || fail "list --coverage on changed oracles exits $?: $(cat "$tmp/err")"
grep -E '^nvdla\.on-flying +rule +yes +- ' "$tmp/changed" > /dev/null ||
  fail "an oracle layer line the optimized rules disagree with leaves nvdla.on-flying optimized: $(grep '^nvdla.on-flying ' "$tmp/changed")"
grep -E '^nvdla\.winograd\.g-matrix +example +yes +yes +0 ' "$tmp/changed" > /dev/null ||
  fail "value oracles of another section still count for nvdla.winograd.g-matrix: $(grep '^nvdla.winograd.g-matrix ' "$tmp/changed")"
grep -E '^nvdla\.winograd\.g-matrix +example +yes +yes +5 ' "$tmp/text" > /dev/null ||
  fail "the value oracles of the G matrix do not count: $(grep '^nvdla.winograd.g-matrix ' "$tmp/text")"

# The compressed-surface placement is checkable on a library through `sparse --lib`
# (surface:): only with that target, and only for rules its placements isolate.
grep -E '^nvdla\.sparse\.alignment +rule +yes +yes +[1-9][0-9]* +yes +yes +yes +complete$' "$tmp/text" > /dev/null ||
  fail "nvdla.sparse.alignment is not complete: $(grep '^nvdla.sparse.alignment ' "$tmp/text")"
expect_row "nvdla.sparse.alignment without surface: is checkable on a library" \
  's/ surface:nvdla_sparse_surfaces_valid | / | /' nvdla.sparse.alignment 'rule +yes +yes +[1-9][0-9]* +yes +yes +- +partial$'
expect_row "a rule sparse --lib never asks about still counts as checkable" \
  's#rule:nvdla.sparse/surfaces-overlap surface:#rule:nvdla.sparse/surfaces-overlap rule:nvdla.feature/line-stride-align-32 surface:#' \
  nvdla.sparse.alignment 'rule .* +- +partial$'
expect_error "an unknown surface function" "no function nvdla_no_such that \`layoutcheck sparse\` checks" \
  's/surface:nvdla_sparse_surfaces_valid/surface:nvdla_no_such/'

[ "$failures" = 0 ] && echo "coverage: all checks passed"
exit $((failures > 0))
