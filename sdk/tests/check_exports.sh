#!/usr/bin/env bash
# Checks that a plugin library defines exactly one ncclNetPlugin_vN per ABI
# version the SDK knows (NCCLNET_ABI_OLDEST..NEWEST in abi/net.h) as dynamic
# symbols and nothing else (no C++ helpers NCCL could bind to).
set -euo pipefail
lib=$1
net_h="$(dirname "$0")/../include/ncclnet/abi/net.h"
oldest=$(awk '$2 == "NCCLNET_ABI_OLDEST" {print $3}' "$net_h")
newest=$(awk '$2 == "NCCLNET_ABI_NEWEST" {print $3}' "$net_h")
expected=$(printf 'ncclNetPlugin_v%s\n' $(seq "$oldest" "$newest") | sort)
actual=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
if [ "$actual" != "$expected" ]; then
  echo "FAIL: $lib exports:"
  echo "$actual"
  echo "expected exactly:"
  echo "$expected"
  exit 1
fi
echo "OK: $lib exports only ncclNetPlugin_v$oldest..v$newest"
