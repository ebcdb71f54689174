#!/usr/bin/env bash
# Checks that a plugin library defines exactly ncclNetPlugin_v6 ... _v12 as
# dynamic symbols and nothing else (no C++ helpers NCCL could bind to).
set -euo pipefail
lib=$1
expected=$(printf 'ncclNetPlugin_v%s\n' 10 11 12 6 7 8 9)
actual=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
if [ "$actual" != "$expected" ]; then
  echo "FAIL: $lib exports:"
  echo "$actual"
  echo "expected exactly:"
  echo "$expected"
  exit 1
fi
echo "OK: $lib exports only ncclNetPlugin_v6..v12"
