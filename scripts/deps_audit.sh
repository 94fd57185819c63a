#!/usr/bin/env bash
# Checks that every system file a build used comes from a package scripts/deps.sh
# installs (or from one of those packages' dependencies), so that a package
# installed by hand on one machine cannot hide a missing install step.
#
#   scripts/deps_audit.sh [--packages "p1 p2 ..."] BUILD_DIR...
#
# What a build used: the headers in ninja's dependency log, the absolute paths
# of libraries and tools in its commands, and the CMake package configurations
# and files recorded in CMakeCache.txt. Each is mapped to its Debian package
# with `dpkg -S`; each package must be in the closure of deps.sh's list under
# Depends/Pre-Depends (Recommends do not count: deps.sh installs without them),
# or be Essential. Exit 0 when all are, 1 with the list of files and packages
# to add otherwise, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=""
dirs=()
while (($#)); do
  case "$1" in
    --packages) packages="${2:?--packages needs a list}"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "deps_audit: unknown option $1" >&2; exit 2 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
((${#dirs[@]})) || { echo "deps_audit: name at least one build directory" >&2; exit 2; }
[ -n "$packages" ] || packages="$(scripts/deps.sh --list | tr '\n' ' ')"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 1. The files the builds used.
for d in "${dirs[@]}"; do
  [ -f "$d/build.ninja" ] || { echo "deps_audit: $d is not a configured Ninja build directory" >&2; exit 2; }
  [ -f "$d/.ninja_deps" ] || { echo "deps_audit: $d has no dependency log; build it first" >&2; exit 2; }
  ninja -C "$d" -t deps 2>/dev/null | awk '/^    \// {print $1}'
  ninja -C "$d" -t commands 2>/dev/null | tr ' ' '\n' | sed -n 's/^-[IL]\{0,1\}\(\/usr\/.*\)/\1/p; s/^\(\/usr\/[^ ]*\)$/\1/p'
  # CMake: compilers, found files and package configuration directories.
  sed -n 's/^[A-Za-z0-9_]*:\(FILEPATH\|PATH\|STRING\|UNINITIALIZED\|INTERNAL\)=\(\/usr\/[^;]*\)$/\2/p' "$d/CMakeCache.txt"
done | sort -u >"$work/paths"

: >"$work/files"
while read -r p; do
  if [ -d "$p" ]; then
    # A package configuration directory: its configuration file stands for it.
    find "$p" -maxdepth 1 -name '*onfig.cmake' -o -maxdepth 1 -name '*-config.cmake' | head -n 1
  elif [ -e "$p" ]; then
    echo "$p"
  fi
done <"$work/paths" | sort -u >"$work/files"

# 2. Their packages, from dpkg's file lists. dpkg knows a file by the path it
# was shipped under, which on a merged-/usr system may differ from the one the
# build used: each file is looked up as used, resolved, and with /usr added or
# taken away.
grep -v "^$PWD/" "$work/files" >"$work/system" || true
tr '\n' '\0' <"$work/system" | xargs -0 -r readlink -f >"$work/real"
paste "$work/system" "$work/real" | awk -F '\t' -v OFS='\t' '{
  f = $1; r = $2; fs = f; rs = r; sub(/^\/usr/, "", fs); sub(/^\/usr/, "", rs)
  print f, f, r, fs, rs, "/usr" f, "/usr" r
}' >"$work/candidates"
awk -v OFS='\t' '{ pkg = FILENAME; sub(/.*\//, "", pkg); sub(/\.list$/, "", pkg); sub(/:.*/, "", pkg); print pkg, $0 }' \
  /var/lib/dpkg/info/*.list >"$work/dpkg-files"
awk -F '\t' '
  NR == FNR { owner[$2] = owner[$2] ? owner[$2] "," $1 : $1; next }
  {
    found = ""
    for (i = 2; i <= NF && found == ""; ++i) if ($i in owner) found = owner[$i]
    if (found == "") { print $1 > unowned; next }
    n = split(found, pkgs, ",")
    for (k = 1; k <= n; ++k) print pkgs[k], $1 > owned
  }' owned="$work/owned" unowned="$work/unowned" "$work/dpkg-files" "$work/candidates"
touch "$work/owned" "$work/unowned"

# 3. What deps.sh brings: its packages and their dependencies, recursively.
# shellcheck disable=SC2086
apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances $packages 2>/dev/null | awk '!/^ / {sub(/:.*/, ""); print}' | tr -d '<>' |
  sort -u >"$work/closure"
dpkg-query -W -f='${Package} ${Essential}\n' | awk '$2 == "yes" {print $1}' >>"$work/closure"
sort -u -o "$work/closure" "$work/closure"

status=0
missing="$(awk 'NR == FNR {ok[$1] = 1; next} !($1 in ok)' "$work/closure" "$work/owned" | sort -u)"
if [ -n "$missing" ]; then
  status=1
  echo "deps_audit: the build used files from packages scripts/deps.sh does not install:"
  awk '{files[$1] = files[$1] " " $2} END {for (p in files) print "  " p ":" files[p]}' <<<"$missing" |
    cut -c1-400 | sort
  echo "  add them to the package list in scripts/deps.sh"
fi
if [ -s "$work/unowned" ]; then
  status=1
  echo "deps_audit: the build used files no Debian package owns (installed by hand?):"
  sed 's/^/  /' "$work/unowned" | head -n 40
fi
if ((status == 0)); then
  echo "deps_audit: $(wc -l <"$work/files") system files used by ${dirs[*]}, from" \
    "$(cut -d' ' -f1 "$work/owned" | sort -u | wc -l) packages, all installed by scripts/deps.sh"
fi
exit "$status"
