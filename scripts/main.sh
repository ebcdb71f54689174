#!/usr/bin/env bash
# The main job: install what is missing, build, then show what NCCL would
# load for each bundled plugin on this machine (loopback).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$@"
info=$build/tools/ncclnet-info/ncclnet-info
status=0
for plugin in "$build"/plugins/*/libnccl-net-sdk-*.so "$build"/sdk/tests/libnccl-net-sdk-testnet.so; do
  [ -e "$plugin" ] || continue
  echo "=================================================================="
  NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} "$info" --plugin "$plugin" || status=1
done
exit $status
