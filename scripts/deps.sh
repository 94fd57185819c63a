#!/usr/bin/env bash
# Installs the Debian packages layoutcheck builds with, when any is missing.
#   scripts/deps.sh          install what is missing
#   scripts/deps.sh --list   print the package list, one a line
#   scripts/deps.sh --browser   also install the browser the `browser` tests run (chromium, large)
set -euo pipefail
# Every package a find_package() or #include of the build resolves to. libdnnl-dev's
# CMake config needs OpenCL (ocl-icd-opencl-dev), which libdnnl-dev only recommends;
# CMake takes the LLVM tools (llvm-ar, ld.lld) for the clang builds when they are there.
# scripts/deps_audit.sh checks this list against the files a build actually used.
packages=(cmake ninja-build g++ clang libclang-rt-14-dev googletest libgtest-dev librapidcheck-dev
          libbenchmark-dev libdnnl-dev ocl-icd-opencl-dev opencl-c-headers libfp16-dev
          libcli11-dev nlohmann-json3-dev zip unzip pkgconf llvm lld help2man
          libxml2-utils libpng-dev)
# Optional: the headless browser of the `browser` ctest label (tests/browser/).
browser_packages=(chromium)
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi
if [ "${1:-}" = "--browser" ]; then
  packages+=("${browser_packages[@]}")
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "layoutcheck: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
