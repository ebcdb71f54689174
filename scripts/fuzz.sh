#!/usr/bin/env bash
# The fuzz job (docs/fuzzing.md): installs clang if missing, builds every
# libFuzzer target (ASan + UBSan) in ${FUZZ_BUILD_DIR:-build-fuzz} and runs
# each one over its seed corpus, then for FUZZ_SECONDS more (default 5: the
# CI smoke run). Exit status: non-zero when a target crashed, leaked, hung
# or tripped a sanitizer; the input is then saved next to the build's
# top-level files as <target>-crash-<sha1> (or -leak-, -timeout-).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-5}
"$root/scripts/install-deps.sh" fuzz
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DNCCLNET_WITH_CUDA_KERNELS=OFF \
  -DNCCLNET_BUILD_FUZZERS=ON -DNCCLNET_BUILD_TESTS=OFF -DNCCLNET_FUZZ_SECONDS="$seconds" "$@"
cmake --build "$build" -j "$(nproc)" --target ncclnet_fuzzers
ctest --test-dir "$build" -L fuzz --output-on-failure -j "$(nproc)" --timeout $((seconds + 300))
