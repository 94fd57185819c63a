#!/usr/bin/env bash
# find_package(layoutcheck) after `cmake --install`: installs the build into a
# temporary prefix, builds this folder as its own project against it, and
# checks the example plugin with the installed CLI.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build="$1"; src="$2"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
cmake -G Ninja -S "$src/examples/plugins" -B "$prefix/plugins" -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build "$prefix/plugins" --target tpu_plugin fuzz_tpu_plugin > /dev/null
"$prefix/bin/layoutcheck" check --impl "$prefix/plugins/libtpu_plugin.so" --layout 'tpu.aligned' --seconds 1 \
  --save "$prefix/regressions"
"$prefix/plugins/fuzz_tpu_plugin" "$src/corpus/fuzz_differential"
# The installed CLI finds the installed oracles and documents (no source path in the binary).
(cd / && "$prefix/bin/layoutcheck" oracle --impl "$prefix/plugins/libtpu_plugin.so" | tail -n 1)
! strings "$prefix/bin/layoutcheck" | grep -qF "$src/oracles"
# Its seed corpus, from the installed corpus, for a ClusterFuzzLite $OUT.
test "$(unzip -Z1 "$prefix/plugins/fuzz_tpu_plugin_seed_corpus.zip" | wc -l)" -ge \
  "$(find "$prefix/share/layoutcheck/corpus/fuzz_differential" -type f | wc -l)"
# The header-only ABI through pkg-config: the one-line build of a plugin.
cc -shared -fPIC $(PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --cflags layoutcheck-plugin) \
  "$src/examples/plugins/tpu_plugin.c" -o "$prefix/libtpu_pc.so"
"$prefix/bin/layoutcheck" check --impl "$prefix/libtpu_pc.so" --layout 'tpu.aligned' --seconds 1 \
  --save "$prefix/regressions"
