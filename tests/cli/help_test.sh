#!/usr/bin/env bash
# The command line's help, version, suggestions and completion (tools/cli_args.cc).
#   help_test.sh LAYOUTCHECK SOURCE_DIR [COMPLETION_SCRIPT [MAN_PAGE]]
set -u
lc="$1"
src="$2"
completion="${3:-}"
manpage="${4:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Every command the binary lists, and at least these.
commands=$("$lc" --help-all | sed -n 's/^Command \([a-z]*\):$/\1/p' | tr '\n' ' ')
for cmd in list describe offset pack unpack check repro replay oracle precision convert show okk; do
  case " $commands " in *" $cmd "*) ;; *) fail "--help-all does not list '$cmd'" ;; esac
done
for cmd in $commands; do
  "$lc" "$cmd" --help > "$tmp/$cmd.help" 2> "$tmp/err" || fail "$cmd --help exits $?"
  grep -q "^usage: layoutcheck $cmd" "$tmp/$cmd.help" || fail "$cmd --help has no usage line"
  [ -s "$tmp/err" ] && fail "$cmd --help wrote to standard error: $(cat "$tmp/err")"
  # Every option has a one-line description.
  # Every option has a one-line description (beside it, or below it for a long placeholder).
  awk '/^  -/ { if (pending) bad = 1; pending = ($0 !~ /^  -[-a-z, ]+( [^ ]+)?  +[^ ]/); next }
       pending { if (substr($0, 1, 30) !~ /^ *$/ || substr($0, 31, 1) == " ") bad = 1; pending = 0 } END { exit bad || pending }' "$tmp/$cmd.help" ||
    fail "$cmd --help: an option without a description"
done
cat "$tmp"/*.help > "$tmp/all"
# Every option a command body reads is documented.
for f in "$src"/tools/*.cc; do
  for opt in $(grep -oE '(a\.(get|has|all)|ranged_number|o\.count|o\.at|need)\((a, |o, )?"[a-z-]+"' "$f" | grep -oE '"[a-z-]+"' | tr -d '"' | sort -u); do
    grep -q -- "--$opt\b" "$tmp/all" || fail "option --$opt (read in $(basename "$f")) is not in any --help"
  done
done
for opt in timeout fail-fast max-cases min-cases isolate strict-padding seed jobs save cases seconds layout impl json; do
  grep -q -- "^  --$opt\b" "$tmp/check.help" || fail "check --help lacks --$opt"
done
"$lc" help check | cmp -s - "$tmp/check.help" || fail "help check differs from check --help"
"$lc" --help | grep -q 'COMMAND --help' || fail "--help points to COMMAND --help"

version=$("$lc" --version) || fail "--version exits $?"
abi=$(sed -n 's/^#define LC_ABI_MAJOR \([0-9]*\)u$/\1/p' "$src/include/layoutcheck/c_api.h")
minor=$(sed -n 's/^#define LC_ABI_MINOR \([0-9]*\)u$/\1/p' "$src/include/layoutcheck/c_api.h")
project=$(sed -n 's/^project(layoutcheck VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
[ "$version" = "layoutcheck $project (plugin ABI $abi.$minor)" ] || fail "--version prints '$version'"

# expect_usage NAME TEXT COMMAND...: exit status 2 and TEXT in the message.
expect_usage() {
  local name="$1" text="$2"
  shift 2
  "$@" > /dev/null 2> "$tmp/err"
  local status=$?
  [ "$status" = 2 ] || fail "$name: exit status $status, expected 2"
  grep -qF -- "$text" "$tmp/err" || fail "$name: no '$text' in: $(cat "$tmp/err")"
}
expect_usage "a mistyped option" "unknown option --jsn for 'check' (did you mean --json?)" "$lc" check --jsn
expect_usage "a mistyped option with a value" "unknown option --layuot=x for 'check' (did you mean --layout?)" "$lc" check --layuot=x
expect_usage "a mistyped convert option" "unknown option --rul for 'convert' (did you mean --rule?)" "$lc" convert --rul ieee
expect_usage "a far option" "unknown option --frobnicate for 'list'" "$lc" list --frobnicate
grep -q 'did you mean' "$tmp/err" && fail "a far option gets a suggestion: $(cat "$tmp/err")"
expect_usage "a mistyped command" "unknown command 'chek' (did you mean check?)" "$lc" chek
expect_usage "a missing value" "option --dtype needs a value" "$lc" describe tpu.compact --dtype
expect_usage "no command" "missing command" "$lc"
"$lc" check --help --jsn > /dev/null 2>&1
[ $? = 0 ] || [ $? = 2 ] || fail "check --help --jsn exits neither 0 nor 2"

if [ -n "$completion" ]; then
  [ -s "$completion" ] || fail "no completion script at $completion"
  # Every command and every option of its --help completes.
  complete_words() {  # WORDS...: what completing the last word offers
    COMP_WORDS=(layoutcheck "$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _layoutcheck
    printf '%s\n' "${COMPREPLY[@]}"
  }
  complete() { :; }
  # shellcheck disable=SC1090
  source "$completion"
  for cmd in $commands; do
    complete_words "" | grep -qx "$cmd" || fail "completion lacks the command $cmd"
    for opt in $(grep -oE '^  --[a-z-]+' "$tmp/$cmd.help"); do
      complete_words "$cmd" "--" | grep -qx -- "$opt" || fail "completion of '$cmd' lacks $opt"
    done
  done
  complete_words check --js | grep -qx -- --json || fail "completion of 'check --js' is not --json"
fi

if [ -n "$manpage" ]; then
  # The man page holds every command and every option.
  for cmd in $commands; do
    grep -q "^\.SS \"Command $cmd:\"" "$manpage" || fail "the man page lacks the command $cmd"
    for opt in $(grep -oE '^  --[a-z-]+' "$tmp/$cmd.help"); do
      grep -qF -- "${opt//-/\\-}" "$manpage" || fail "the man page lacks $opt of $cmd"
    done
  done
fi

echo "help: $failures failed"
exit $((failures > 0))
