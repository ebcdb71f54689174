#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds here and mirrors the build tree into one folder for the GPU machine:
# every executable, plugin and ctest file, debug info stripped, objects and
# static libraries left out, and the NCCL subjects the smoke test builds
# (scripts/interop/nccl_transports/ stages its own under interop/; about
# 20 MiB). The GPU machine then needs no
# compiler and no -dev packages (libfabric and rdma-core headers are only
# here). The stage may be copied anywhere, with this source tree:
# scripts/gpu/relocate.sh (which run_all.sh runs first) points its ctest
# files at where both lie then.
#
#   scripts/gpu/stage.sh [BUILD_DIR] [STAGE_DIR]     (default build, .gpu-stage)
#   then on the GPU machine: scripts/gpu/run_all.sh STAGE_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$root/build}")
stage=$(realpath -m "${2:-$root/.gpu-stage}")
cmake --build "$build"
rm -rf "$stage"
mkdir -p "$stage"
# The paths the ctest files name, for relocate.sh: the build tree, the
# source tree and the cmake that runs the `cmake -P` tests.
echo "$build" >"$stage/.built-at"
echo "$root" >"$stage/.source-at"
sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$build/CMakeCache.txt" >"$stage/.cmake-at"
cd "$build"
find . \( -name CMakeFiles -o -name out_of_tree_work -o -name Testing -o -name .gpu-stage -o -name nccl-subjects \) -prune -o \
  -type f ! -name '*.o' ! -name '*.a' ! -name '*.ninja' ! -name '.ninja_*' ! -name '*.log' -print |
  while read -r f; do
    mkdir -p "$stage/$(dirname "$f")"
    # A test running meanwhile may remove its own outputs: a file gone
    # since find listed it is not part of the stage.
    if [ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = "177ELF" ]; then
      objcopy --strip-debug "$f" "$stage/$f"
    else
      cp -p "$f" "$stage/$f" 2>/dev/null || [ ! -e "$f" ]
    fi
  done
# Run-time libraries the GPU machine's distribution ships in another
# version (yaml-cpp 0.7 here, 0.8 on Ubuntu 24.04): run_all.sh puts lib/ on
# LD_LIBRARY_PATH.
mkdir -p "$stage/lib"
for lib in $(ldd "$build/conformance/ncclnet-conformance" 2>/dev/null | awk '/yaml-cpp/ {print $3}'); do
  cp -L "$lib" "$stage/lib/"
done
du -sh "$stage"
