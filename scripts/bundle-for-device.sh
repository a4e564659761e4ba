#!/usr/bin/env bash
# Installs a build into .carry/memtopo with the non-system libraries it needs (TOML++,
# spdlog, fmt) beside it, for machines without those packages (the lent GPU machine).
# Usage: scripts/bundle-for-device.sh [BUILD_DIR]   then, there:
#   LD_LIBRARY_PATH=$PWD/.carry/memtopo/.bundle-libs .carry/memtopo/bin/memtopo run ...
set -euo pipefail
build=${1:-build}
dest=.carry/memtopo
rm -rf "$dest"
cmake --install "$build" --prefix "$dest" --strip >/dev/null
# Test binaries and benchmark programs travel too when they exist.
mkdir -p "$dest/test-bin"
find "$build/bin" -maxdepth 1 -type f -executable ! -name memtopo -exec cp {} "$dest/test-bin/" \; 2>/dev/null || true
strip --strip-debug "$dest"/test-bin/* 2>/dev/null || true
# Test plugins that need a GPU (MEMTOPO_TEST_PLUGIN_ROOT=$dest/test-plugins there).
if [ -d "$build/tests/plugin-sets/cuda-faults" ]; then
  mkdir -p "$dest/test-plugins" && cp -r "$build/tests/plugin-sets/cuda-faults" "$dest/test-plugins/"
fi
bundler=${MEMTOPO_BUNDLER:-../shared/tools/bundle-for-device}
[ -x "$bundler" ] || bundler=/work/shared/tools/bundle-for-device
"$bundler" "$dest" >/dev/null
du -sh "$dest"
