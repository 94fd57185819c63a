#!/usr/bin/env bash
# Mutation testing of the optimized library: applies one hand-written mutation
# at a time to a scratch copy of the source tree, rebuilds the library and the
# differential, property and unit tests there, and runs them. A mutant the tests do
# not kill is a gap in the tests (or an equivalent mutant). Not part of ctest.
#
#   scripts/mutate.sh [--files GLOB] [--max N] [--seed N] [--ops LIST] [--work DIR]
#                     [--timeout S] [--report-only] [--all-tests] [--list]
#                     [--only FILE:LINE:OP,...] [--no-sanitize]
#
#   --files GLOB   source files to mutate, relative to the tree (default optimized/*.cc)
#   --max N        mutants to run, spread over the files (default 40; 0 = all)
#   --seed N       which mutants the sample takes (default 1)
#   --ops LIST     comma-separated operators (default all):
#                    lt_le       `a < b` -> `a <= b` (loop bounds, range checks)
#                    le_lt       `a <= b` -> `a < b`
#                    gt_ge       `a > b` -> `a >= b`
#                    ge_gt       `a >= b` -> `a > b`
#                    drop_minus1 `x - 1` -> `x` (ceil division, last index)
#                    plus1       `+ 1` -> `+ 2`
#                    swap        exchange two index/stride names on one line (h/w, sh/sw, rows/cols, ...)
#                    drop_fill   a memset/std::fill statement (padding, zero fill) removed
#                    const_half  a constant 8/16/32/64/128/256 halved
#   --work DIR     scratch directory: src/ (the copy) and build/ (default build-mutate in the tree)
#   --timeout S    per test program and mutant (default 300); a time-out counts as a kill
#   --report-only  exit 0 even when mutants survive
#   --all-tests    run every differential, property and unit test for each mutant, not only
#                  those of the mutated file's family (tpu*, htp*, tla*, mge*, nvdla*, precision*)
#   --list         print the candidate mutants and exit
#   --only LIST    run exactly these mutants (comma-separated FILE:LINE:OP, as the
#                  report prints them), e.g. to re-run the survivors of a sample
#   --no-sanitize  build the copy without AddressSanitizer + UndefinedBehaviorSanitizer
#                  (by default they are on, so a mutant that reads or writes out of
#                  bounds dies even when the bytes it touches happen to be right)
#
# A line whose comment says `mutate: equivalent (REASON)` is not mutated: every
# mutant of it behaves as the original (a loop bound whose extra pass does no
# work, a thread-count threshold). The report lists those lines and reasons, so
# the claim stays visible and reviewable.
#
# The tree's own files are never modified: the copy under --work is mutated and
# restored from the tree after each mutant. Exit status: 0 when every mutant was
# killed (or --report-only), 1 when one survived, 2 on a usage or set-up error.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
files_glob="optimized/*.cc"
max=40
seed=1
ops="lt_le,le_lt,gt_ge,ge_gt,drop_minus1,plus1,swap,drop_fill,const_half"
work="$root/build-mutate"
timeout_s=300
report_only=0
list_only=0
all_tests=0
only=""
sanitize=1
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files_glob="$2"; shift 2 ;;
    --max) max="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --ops) ops="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --report-only) report_only=1; shift ;;
    --all-tests) all_tests=1; shift ;;
    --list) list_only=1; shift ;;
    --only) only="$2"; shift 2 ;;
    --no-sanitize) sanitize=0; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "mutate.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$max" in ''|*[!0-9]*) echo "mutate.sh: --max takes a number" >&2; exit 2 ;; esac
case "$seed" in ''|*[!0-9]*) echo "mutate.sh: --seed takes a number" >&2; exit 2 ;; esac

# The mutation operators, in awk: mutate(line, op) returns the mutated line, or
# the line itself when the operator does not apply. Matching runs on a mask of
# the line where string literals and comments are blanked, so a mutation never
# lands in a message or a comment.
read -r -d '' awk_ops <<'AWK'
function mask_of(s,   out, i, ch, in_str, n) {
  out = ""; in_str = 0; n = length(s)
  for (i = 1; i <= n; ++i) {
    ch = substr(s, i, 1)
    if (in_str) {
      if (ch == "\\") { out = out "__"; ++i; continue }
      if (ch == "\"") in_str = 0
      out = out "_"; continue
    }
    if (ch == "\"") { in_str = 1; out = out "_"; continue }
    if (ch == "'" && substr(s, i + 2, 1) == "'") { out = out "___"; i += 2; continue }
    if (substr(s, i, 2) == "//") { while (i <= n) { out = out " "; ++i }; break }
    out = out ch
  }
  return out
}
# Replaces the first match of re in the mask by rep, adjusting by lead/trail
# characters of context the regex takes on each side.
function sub_first(s, m, re, rep, lead, trail) {
  if (!match(m, re)) return s
  return substr(s, 1, RSTART - 1 + lead) rep substr(s, RSTART + RLENGTH - trail)
}
function swap_words(s, m, a, b,   out, i, n, w, c, pre, re_a, re_b) {
  # both words must appear, as whole identifiers, outside strings
  if (!has_word(m, a) || !has_word(m, b)) return s
  out = ""; n = length(s); i = 1
  while (i <= n) {
    c = substr(m, i, 1)
    if (c ~ /[A-Za-z_]/ && (i == 1 || substr(m, i - 1, 1) !~ /[A-Za-z0-9_]/)) {
      pre = i
      while (i <= n && substr(m, i, 1) ~ /[A-Za-z0-9_]/) ++i
      w = substr(m, pre, i - pre)
      if (w == a) out = out b; else if (w == b) out = out a; else out = out substr(s, pre, i - pre)
      continue
    }
    out = out substr(s, i, 1); ++i
  }
  return out
}
function has_word(m, w) {
  return match(" " m " ", "[^A-Za-z0-9_.>]" w "[^A-Za-z0-9_(]") > 0
}
function skip_line(s) {
  return s ~ /^[ \t]*(\/\/|#|\*|\/\*)/ || s ~ /static_assert|Status::invalid|Status::unsupported|namespace|^[ \t]*$/
}
function mutate(s, op,   m, k, pairs, np, r, t) {
  if (skip_line(s)) return s
  m = mask_of(s)
  if (op == "lt_le") return sub_first(s, m, " < ", " <= ", 0, 0)
  if (op == "le_lt") return sub_first(s, m, " <= ", " < ", 0, 0)
  if (op == "gt_ge") return sub_first(s, m, " > ", " >= ", 0, 0)
  if (op == "ge_gt") return sub_first(s, m, " >= ", " > ", 0, 0)
  if (op == "drop_minus1") return sub_first(s, m, " - 1([^0-9.xXuU]|$)", "", 0, 1)
  if (op == "plus1") return sub_first(s, m, " \\+ 1([^0-9.xXuU]|$)", " + 2", 0, 1)
  if (op == "const_half") {
    if (!match(m, "(^|[^A-Za-z0-9_.])(8|16|32|64|128|256)([^A-Za-z0-9_.]|$)")) return s
    r = RSTART; t = RLENGTH
    k = substr(s, r, t)
    lead = (k ~ /^[0-9]/) ? 0 : 1
    trail = (k ~ /[0-9]$/) ? 0 : 1
    k = substr(k, 1 + lead, length(k) - lead - trail)
    return substr(s, 1, r - 1 + lead) (k / 2) substr(s, r + t - trail)
  }
  if (op == "drop_fill") {
    if (!match(m, "(std::)?(memset|fill|fill_n)\\(")) return s
    r = RSTART
    t = s; sub(/;[^;]*$/, "", t)
    if (length(t) < r || substr(m, length(m)) != ";" && m !~ /;[ \t]*$/) return s
    return substr(s, 1, r - 1) "(void)0;"
  }
  if (op == "swap") {
    np = split("h:w H:W sh:sw sn:sc rows:cols row:col r:c n:c N:C ls:ss x:y i:j hi:wi ho:wo kh:kw", pairs, " ")
    for (k = 1; k <= np; ++k) {
      split(pairs[k], ab, ":")
      t = swap_words(s, m, ab[1], ab[2])
      if (t != s) return t
    }
    return s
  }
  return s
}
AWK

cd "$root" || exit 2
mapfile -t files < <(compgen -G "$files_glob" | sort)
if [ "${#files[@]}" -eq 0 ]; then echo "mutate.sh: --files '$files_glob' matches no file" >&2; exit 2; fi
IFS=',' read -r -a op_list <<< "$ops"

# Every candidate: file, line, operator. The sample takes them round-robin over
# the files, in a seeded order within each file.
candidates=$(for f in "${files[@]}"; do
  for op in "${op_list[@]}"; do
    awk -v op="$op" -v file="$f" "$awk_ops"'
      /mutate: equivalent \(/ { next }
      { t = mutate($0, op); if (t != $0) printf "%s\t%d\t%s\n", file, NR, op }' "$f"
  done
done)
total_candidates=$(printf '%s\n' "$candidates" | grep -c .)
sample=$(printf '%s\n' "$candidates" | grep . |
  awk -v seed="$seed" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' | sort -k1,1g |
  awk -F'\t' -v OFS='\t' '{ n = ++seen[$2]; print n, $2, $3, $4 }' | sort -k1,1n -s | cut -f2-)
if [ -n "$only" ]; then
  sample=$(printf '%s\n' "$only" | tr ',' '\n' | awk -F: -v OFS='\t' 'NF == 3 { print $1, $2, $3 }')
  while IFS=$'\t' read -r f line op; do
    [ -f "$root/$f" ] || { echo "mutate.sh: --only names $f, which is not a file of the tree" >&2; exit 2; }
    printf '%s\n' "$candidates" | grep -qxF "$f"$'\t'"$line"$'\t'"$op" ||
      { echo "mutate.sh: --only names $f:$line:$op, which is not a candidate mutant (see --list --max 0)" >&2; exit 2; }
  done <<< "$sample"
elif [ "$max" -gt 0 ]; then
  sample=$(printf '%s\n' "$sample" | head -n "$max")
fi
sample_count=$(printf '%s\n' "$sample" | grep -c .)

if [ "$list_only" -eq 1 ]; then
  printf '%s\n' "$sample" | while IFS=$'\t' read -r f line op; do
    printf '%s:%s\t%s\t%s\n' "$f" "$line" "$op" \
      "$(sed -n "${line}p" "$f" | awk -v op="$op" "$awk_ops"'{ print mutate($0, op) }' | sed 's/^[ \t]*//')"
  done
  echo "$sample_count of $total_candidates candidate mutants"
  exit 0
fi

# The scratch copy: the tree's tracked files as they are now.
src="$work/src"
build="$work/build"
mkdir -p "$src" "$build" || exit 2
git -C "$root" ls-files -z | (cd "$root" && tar --null -T - -cf -) | tar -xf - -C "$src" || exit 2
export CCACHE_NOHASHDIR=1
launcher=()
sanitize_flags=()
[ "$sanitize" -eq 1 ] && sanitize_flags=(-DLAYOUTCHECK_SANITIZE=address,undefined)
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAYOUTCHECK_BUILD_TESTS=ON \
  -DLAYOUTCHECK_BUILD_BENCH=OFF -DLAYOUTCHECK_WERROR=OFF "${sanitize_flags[@]}" "${launcher[@]}" > "$work/configure.log" 2>&1 ||
  { echo "mutate.sh: configuring the scratch copy failed, see $work/configure.log" >&2; exit 2; }
targets=(layoutcheck_differential_test layoutcheck_property_test layoutcheck_unit_test)
build_tests() { cmake --build "$build" --target "${targets[@]}" > "$work/build.log" 2>&1; }
# The tests of the mutated file's family (all of them for a file of no family,
# or with --all-tests).
filter_of() {
  [ "$all_tests" -eq 1 ] && { echo "*"; return; }
  case "$(basename "$1")" in
    tpu*) echo "*tpu*:*Tpu*" ;;
    htp*) echo "*htp*:*Htp*" ;;
    tla*) echo "*tla*:*Tla*" ;;
    mge*) echo "*mge*:*Mge*" ;;
    nvdla*) echo "*nvdla*:*Nvdla*" ;;
    precision*) echo "*recision*" ;;
    *) echo "*" ;;
  esac
}
# Runs the test programs; prints what killed the mutant, or nothing.
run_tests() {
  local t status filter=${1:-*}
  for t in "${targets[@]}"; do
    RC_PARAMS="seed=1 max_success=200" timeout "$timeout_s" "$build/bin/$t" --gtest_brief=1 --gtest_filter="$filter" \
      > "$work/test.log" 2>&1
    status=$?
    if [ "$status" -eq 124 ]; then echo "$t: timed out"; return; fi
    if [ "$status" -ne 0 ]; then
      echo "$t: $(grep -m1 -E '^\[  FAILED  \]' "$work/test.log" | sed 's/^\[  FAILED  \] //' | cut -c1-60)"
      [ -n "$(grep -m1 -E '^\[  FAILED  \]' "$work/test.log")" ] || echo "$t: exit $status"
      return
    fi
  done
}

echo "mutate.sh: ${sample_count} of ${total_candidates} candidate mutants in ${#files[@]} file(s) ($files_glob), seed $seed"
echo "mutate.sh: baseline build and tests in $work ..."
start_all=$(date +%s)
if ! build_tests; then echo "mutate.sh: the unmutated copy does not build, see $work/build.log" >&2; exit 2; fi
baseline=$(run_tests)
if [ -n "$baseline" ]; then echo "mutate.sh: the unmutated copy fails its tests: $baseline" >&2; exit 2; fi

killed=0 survived=0 stillborn=0 i=0
survivors=()
while IFS=$'\t' read -r f line op; do
  [ -n "$f" ] || continue
  i=$((i + 1))
  original=$(sed -n "${line}p" "$root/$f")
  awk -v op="$op" -v at="$line" "$awk_ops"'{ print (NR == at ? mutate($0, op) : $0) }' "$root/$f" > "$src/$f"
  mutated=$(sed -n "${line}p" "$src/$f" | sed 's/^[ \t]*//')
  t0=$(date +%s)
  if ! build_tests; then
    verdict="stillborn (does not compile)"
    stillborn=$((stillborn + 1))
  else
    why=$(run_tests "$(filter_of "$f")")
    if [ -n "$why" ]; then verdict="killed: $why"; killed=$((killed + 1))
    else verdict="SURVIVED"; survived=$((survived + 1)); survivors+=("$f:$line"$'\t'"$op"$'\t'"$mutated"); fi
  fi
  cp "$root/$f" "$src/$f"   # a fresh time stamp, so the next build recompiles it
  printf '[%3d/%d] %-28s %-12s %4ss  %s\n' "$i" "$sample_count" "$f:$line" "$op" "$(( $(date +%s) - t0 ))" "$verdict"
  [ "$verdict" = SURVIVED ] && printf '          - %s\n          + %s\n' "$(echo "$original" | sed 's/^[ \t]*//')" "$mutated"
done <<< "$sample"

ran=$((killed + survived))
echo
echo "==================== mutation testing of $files_glob ===================="
echo "mutants: $sample_count sampled of $total_candidates, $killed killed, $survived survived, $stillborn did not compile"
if [ "$ran" -gt 0 ]; then
  echo "kill rate: $killed/$ran = $(awk -v k="$killed" -v n="$ran" 'BEGIN {printf "%.1f", 100 * k / n}')%"
fi
if [ "${#survivors[@]}" -gt 0 ]; then
  echo
  printf '%-30s %-12s %s\n' "where" "operator" "mutated line"
  printf '%s\n' "${survivors[@]}" | awk -F'\t' '{ printf "%-30s %-12s %s\n", $1, $2, $3 }'
fi
equivalent=$(for f in "${files[@]}"; do
  grep -n 'mutate: equivalent (' "$f" | sed "s|^|$f:|"
done)
if [ -n "$equivalent" ]; then
  echo
  echo "lines not mutated, marked equivalent ($(printf '%s\n' "$equivalent" | grep -c .)):"
  printf '%s\n' "$equivalent" | sed -E 's/^([^:]+:[0-9]+):.*mutate: equivalent \((.*)\).*$/  \1  \2/'
fi
echo "time: $(( $(date +%s) - start_all )) s"
[ "$survived" -gt 0 ] && [ "$report_only" -eq 0 ] && exit 1
exit 0
