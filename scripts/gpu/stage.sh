#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds here and copies what the GPU machine runs into one folder with the
# build tree's layout (plugins, the software verbs device, nccl-driver,
# ncclnet-info), so the GPU machine needs no compiler or -dev packages:
#
#   scripts/gpu/stage.sh [BUILD_DIR] [STAGE_DIR]     (default build, .gpu-stage)
#   then on the GPU machine: scripts/gpu/run_all.sh STAGE_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${1:-$root/build}")
stage=${2:-$root/.gpu-stage}
cmake --build "$build" --target sdk_socket_plugin nccl-driver ncclnet-info \
  $( [ -e "$root/plugins/ofi/CMakeLists.txt" ] && echo sdk_ofi_plugin ) \
  $( [ -e "$root/plugins/ib/CMakeLists.txt" ] && echo sdk_ib_plugin softverbs )
rm -rf "$stage"
copy() {  # copy FILE relative to the build tree, if it was built
  if [ -e "$build/$1" ]; then
    mkdir -p "$stage/$(dirname "$1")"
    cp -L "$build/$1" "$stage/$1"
  fi
}
copy plugins/socket/libnccl-net-sdk-socket.so
copy plugins/ofi/libnccl-net-sdk-ofi.so
copy plugins/ib/libnccl-net-sdk-ib.so
for lib in "$build"/plugins/ib/softverbs/libsoftverbs.so*; do
  [ -e "$lib" ] && copy "plugins/ib/softverbs/$(basename "$lib")"
done
copy tools/nccl-driver/nccl-driver
copy tools/ncclnet-info/ncclnet-info
du -sh "$stage"
