#!/usr/bin/env bash
# Configures and builds into ${BUILD_DIR:-build} with Ninja. Extra arguments
# go to cmake (e.g. -DNCCLNET_SANITIZE_ADDRESS=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja "$@"
cmake --build "$build" -j "$(nproc)"
