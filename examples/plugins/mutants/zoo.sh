#!/usr/bin/env bash
# Runs `layoutcheck check --fail-fast` on every mutant plugin: each must be
# caught (exit status 1) within the case budget, except the known escapes
# below, which are listed loudly with the reason. Prints, per mutant, the wall
# time to its first failure, then the median and the worst over the zoo
# (measured, never asserted).
#   zoo.sh LAYOUTCHECK SAVE_DIR MUTANT.so...
# ZOO_JOBS (default 16) is check's --jobs: with it every layout of the family is
# checked at once and --fail-fast stops them all at the first failure, so a bug
# in the last registered layout costs no more than one in the first.
# ZOO_JOBS=1 measures the plain `check --impl X.so --fail-fast`.
set -u
lc="$1"; save="$2"; shift 2
jobs=${ZOO_JOBS:-16}
budget=500         # cases per layout
escape_budget=100  # cases per layout for a known escape: enough to notice it is caught now

# Mutants today's generated cases do not reach, with the case that would catch
# each. A known escape that is caught is reported so it can leave the list; a
# mutant not in the list that escapes fails the test.
declare -A known_escapes=(
)

escaped=0
times=()
gen_times=()
slowest=""
slowest_t=0
rows=()
unexpected=()
escapes_seen=()
now_caught=()
for so in "$@"; do
  name=$(basename "$so" .so)
  name=${name#lib}
  short=${name#mutant_}
  family=${short%%_*}
  out="$save.$name.out"
  err="$save.$name.err"
  start=$EPOCHREALTIME
  # stderr carries the progress lines; each is stamped with the time it arrived.
  reason=${known_escapes[$short]:-}
  cases=$budget
  [ -n "$reason" ] && cases=$escape_budget
  ( "$lc" check --impl "$so" --layout "${family}*" --fail-fast --jobs "$jobs" --max-cases "$cases" --min-cases 1 \
      --seconds 600 \
      --save "$save" 2>&1 1>&3 | while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$err"
    exit "${PIPESTATUS[0]}" ) 3> "$out"
  status=$?
  end=$EPOCHREALTIME
  # The first failure: a failed worked example of the documents, or a layout
  # whose progress line counts a failed case (--fail-fast stops right there).
  first=$(awk '/examples of the claimed layouts: .* [1-9][0-9]* failed$/ || /^[0-9.]+ \[[0-9]+\/[0-9]+\] .*: [0-9]+ cases, [1-9][0-9]* failed$/ {print $1; exit}' "$err")
  generated=$(awk '/^[0-9.]+ \[[0-9]+\/[0-9]+\] .*: [0-9]+ cases, [1-9][0-9]* failed$/ {print $1; exit}' "$err")
  [ -n "$first" ] || first=$end
  t=$(awk -v a="$start" -v b="$first" 'BEGIN {printf "%.2f", b - a}')
  tg=-
  [ -n "$generated" ] && tg=$(awk -v a="$start" -v b="$generated" 'BEGIN {printf "%.2f", b - a}')
  total=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')
  # Caught: a failed generated case (FAIL) or a failed worked example of the documents.
  by_example=$(grep -m1 -A1 "^oracle (the documents' examples.* [1-9][0-9]* failed$" "$out" | tail -n +2)
  if [ "$status" -eq 1 ] && { grep -q "^FAIL" "$out" || [ -n "$by_example" ]; }; then
    times+=("$t")
    [ -n "$generated" ] && gen_times+=("$tg")
    if awk -v a="$t" -v b="$slowest_t" 'BEGIN {exit !(a > b)}'; then slowest_t=$t slowest=$short; fi
    if grep -q "^FAIL" "$out"; then
      what=$(grep -m1 -A1 '^FAIL' "$out" | tail -1 | sed 's/^ *//' | cut -c1-90)
    else
      what="only by a worked example: $(echo "$by_example" | sed 's/^ *[^ ]*: //' | cut -c1-70)"
    fi
    rows+=("$(printf '%-40s caught %7.2f s %9s %8.2f s  %s' "$short" "$t" "$tg${generated:+ s}" "$total" "$what")")
    [ -n "$reason" ] && now_caught+=("$short")
  elif [ -n "$reason" ]; then
    rows+=("$(printf '%-42s KNOWN ESCAPE (exit %d, %d cases per layout): %s' "$short" "$status" "$cases" "$reason")")
    escapes_seen+=("$short: $reason")
  else
    rows+=("$(printf '%-42s ESCAPED (exit %d)' "$short" "$status")")
    unexpected+=("$short")
    echo "---- $short escaped; its output:"
    cat "$out"
    sed 's/^[0-9.]* //' "$err"
    escaped=$((escaped + 1))
  fi
done

echo
echo "=========== mutant zoo: layoutcheck check --fail-fast --jobs $jobs, $budget cases per layout ==========="
printf '%-40s %-6s %9s %11s %10s  %s\n' "mutant" "" "to first" "to first" "whole run" "first failure"
printf '%-40s %-6s %9s %11s %10s\n' "" "" "failure" "generated" "(shrink)"
printf '%s\n' "${rows[@]}"
echo "------------------------------------------------------------------------------------------------"
if [ "${#times[@]}" -gt 0 ]; then
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.2f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
  echo "TIME TO CATCH over ${#times[@]} caught mutants: median ${median} s, worst ${slowest_t} s (${slowest})"
  if [ "${#gen_times[@]}" -gt 0 ]; then
    gen_median=$(printf '%s\n' "${gen_times[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.2f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
    gen_worst=$(printf '%s\n' "${gen_times[@]}" | sort -g | tail -1)
    echo "  to the first failing generated case (${#gen_times[@]} mutants): median ${gen_median} s, worst ${gen_worst} s"
  fi
  echo "  (wall time from start to the first failure, a worked example or a generated case; goal: median"
  echo "   under 1 s, none over 5 s; measured, not asserted)"
fi
if [ "${#escapes_seen[@]}" -gt 0 ]; then
  echo "!!! KNOWN ESCAPES (${#escapes_seen[@]}): not caught by today's generated cases"
  printf '!!!   %s\n' "${escapes_seen[@]}"
fi
if [ "${#now_caught[@]}" -gt 0 ]; then
  echo "NOTE: known escapes now caught, remove them from known_escapes in zoo.sh: ${now_caught[*]}"
fi
if [ "${#unexpected[@]}" -gt 0 ]; then
  echo "ESCAPED (not known escapes, the test fails): ${unexpected[*]}"
fi
echo "zoo: $(( $# - escaped - ${#escapes_seen[@]} )) caught, ${#escapes_seen[@]} known escapes, ${escaped} escaped"
exit $((escaped > 0))
