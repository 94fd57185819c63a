#!/usr/bin/env bash
# Runs `layoutcheck check --fail-fast --cases 64` on every mutant of the ABI 1.1
# entry points: each must be caught (exit status 1, a FAIL line naming it).
#   entry_zoo.sh LAYOUTCHECK OUT_PREFIX MUTANT.so ENTRIES [MUTANT.so ENTRIES]...
set -u
lc="$1"; out="$2"; shift 2
escaped=0
total=0
while [ "$#" -ge 2 ]; do
  so="$1"; entries="$2"; shift 2
  name=$(basename "$so" .so)
  total=$((total + 1))
  "$lc" check --impl "$so" --layout "$entries" --fail-fast --cases 64 > "$out.$name.out" 2>&1
  status=$?
  if [ "$status" -eq 1 ] && grep -q "^FAIL" "$out.$name.out" && grep -q "repro: " "$out.$name.out"; then
    printf '%-40s caught: %s\n' "$name" "$(grep -m1 '^FAIL' "$out.$name.out" | cut -c1-120)"
  else
    printf '%-40s ESCAPED (exit %d)\n' "$name" "$status"
    cat "$out.$name.out"
    escaped=$((escaped + 1))
  fi
done
echo "entry zoo: $((total - escaped)) caught, ${escaped} escaped"
exit $((escaped > 0))
