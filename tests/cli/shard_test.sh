#!/usr/bin/env bash
# --shard i/n of check, oracle and replay: the shards are disjoint and their
# union is the unsharded run, case for case.
#   shard_test.sh LAYOUTCHECK SOURCE_DIR
set -u
lc="$1" src="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# check: by layout; each layout's rows (cases and verdict counts) as unsharded.
rows() { grep -E '^[a-z]+\.[A-Za-z0-9_.]+ +[0-9]+ ' "$1" | tr -s ' ' | sort; }  # the column width follows the names
"$lc" check --layout '*' --cases 8 > "$tmp/check.all" 2> /dev/null || fail "check exits $?"
: > "$tmp/check.union"
for i in 1 2 3; do
  "$lc" check --layout '*' --cases 8 --shard "$i/3" > "$tmp/check.$i" 2> /dev/null || fail "check --shard $i/3 exits $?"
  [ -n "$(rows "$tmp/check.$i")" ] || fail "check --shard $i/3 is empty"
  rows "$tmp/check.$i" >> "$tmp/check.union"
done
sort "$tmp/check.union" > "$tmp/check.sorted"
rows "$tmp/check.all" | cmp -s - "$tmp/check.sorted" || fail "check: the shards' union differs from the whole run"
[ "$(cut -d' ' -f1 "$tmp/check.sorted" | sort | uniq -d)" = "" ] || fail "check: a layout is in two shards"

# oracle and replay: by case.
cases() { grep -E '^[^ ]+ +(ok|FAILED|skipped|failed|declined) ' "$1" | sort; }
cases_replay() { grep -E '^(ok|FAIL|fail|declined|skipped) ' "$1" | sort; }
for cmd in oracle replay; do
  if [ "$cmd" = oracle ]; then args=(oracle); pick=cases; else args=(replay "$src/corpus/fuzz_differential"); pick=cases_replay; fi
  "$lc" "${args[@]}" > "$tmp/$cmd.all" 2> /dev/null || fail "$cmd exits $?"
  : > "$tmp/$cmd.union"
  for i in 1 2 3 4; do
    "$lc" "${args[@]}" --shard "$i/4" > "$tmp/$cmd.$i" 2> /dev/null || fail "$cmd --shard $i/4 exits $?"
    [ -n "$($pick "$tmp/$cmd.$i")" ] || fail "$cmd --shard $i/4 is empty"
    $pick "$tmp/$cmd.$i" >> "$tmp/$cmd.union"
  done
  sort "$tmp/$cmd.union" > "$tmp/$cmd.sorted"
  [ -s "$tmp/$cmd.sorted" ] || fail "$cmd: no cases"
  $pick "$tmp/$cmd.all" | cmp -s - "$tmp/$cmd.sorted" || fail "$cmd: the shards' union differs from the whole run"
  [ "$(sort "$tmp/$cmd.sorted" | uniq -d)" = "" ] || fail "$cmd: a case is in two shards"
done

# A shard that is no i/n is a usage error.
for bad in 0/3 4/3 3 x/2 1/0 -1/2; do
  "$lc" check --shard "$bad" > /dev/null 2> "$tmp/err"
  [ $? = 2 ] && grep -q "is not i/n" "$tmp/err" || fail "--shard $bad: $(cat "$tmp/err")"
done

echo "shard: $failures failed"
exit $((failures > 0))
