#!/usr/bin/env bash
# Runs `layoutcheck check --fail-fast` on every mutant plugin: each must be
# caught (exit status 1) within the case budget. Prints the time each took.
#   zoo.sh LAYOUTCHECK SAVE_DIR MUTANT.so...
set -u
lc="$1"; save="$2"; shift 2
budget=500    # cases per layout
escaped=0
times=()
for so in "$@"; do
  name=$(basename "$so" .so)
  family=${name#libmutant_}
  family=${family%%_*}
  start=$(date +%s.%N)
  "$lc" check --impl "$so" --layout "${family}*" --fail-fast --max-cases "$budget" --min-cases 1 --seconds 600 --save "$save" \
    > "$save.$name.out" 2>&1
  status=$?
  end=$(date +%s.%N)
  t=$(awk "BEGIN {print $end - $start}")
  times+=("$t")
  if [ "$status" -eq 1 ] && grep -q "^FAIL" "$save.$name.out"; then
    printf '%-36s caught in %6.2f s: %s\n' "$name" "$t" "$(grep -m1 -A1 '^FAIL' "$save.$name.out" | tail -1 | cut -c1-110)"
  else
    printf '%-36s ESCAPED (exit %d)\n' "$name" "$status"
    cat "$save.$name.out"
    escaped=$((escaped + 1))
  fi
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
echo "median time to catch: ${median} s over ${#times[@]} mutants"
echo "zoo: $(( $# - escaped )) passed, ${escaped} failed"
exit $((escaped > 0))
