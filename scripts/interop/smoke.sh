#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The interop scripts' CPU-only smoke (aws-ofi-nccl itself needs a CUDA
# driver to init, and its functional tests a GPU: docs/interop.md):
#  1. patch_functional_tests.sh on a miniature of the functional tests'
#     layout: both edits land, a second run changes nothing, and a tree
#     whose patterns moved makes it fail instead of building unpatched tests;
#  2. the patched tests' loader path (loader_smoke.c: NCCLNET_INTEROP_PLUGIN,
#     dlopen, ncclNetPlugin_v11, init, devices, getProperties) against our
#     plugins in the build (or staging) layout, by path and by the bare
#     file name the unpatched tests use.
#
#   scripts/interop/smoke.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(realpath "${1:?usage: smoke.sh BUILD_DIR}")
tmp=$(mktemp -d /tmp/interop-smoke.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "interop smoke: FAIL: $*" >&2; exit 1; }

# --- 1. the patch -------------------------------------------------------------
mini=$tmp/tree/tests/functional
mkdir -p "$mini"
printf '#pragma once\n#include <cuda_runtime.h>\n#include <mpi.h>\n' >"$mini/functional_test.h"
cat >"$mini/functional_test.cpp" <<'CPP'
#include "functional_test.h"
void *open_plugin(void) { return dlopen("libnccl-net.so", RTLD_NOW | RTLD_LOCAL); }
void pick(int r) { (void)cudaSetDevice(r); }
CPP
printf '#include "functional_test.h"\nvoid other(int r) { cudaSetDevice(r); }\n' >"$mini/other.cpp"
"$here/patch_functional_tests.sh" "$tmp/tree" >/dev/null
grep -q 'dlopen(interop_plugin_name()' "$mini/functional_test.cpp" || fail "the dlopen was not patched"
grep -q 'interop_set_device(r)' "$mini/other.cpp" || fail "cudaSetDevice was not patched"
grep -q 'NCCLNET_INTEROP_PLUGIN' "$mini/functional_test.h" || fail "the helpers are missing"
before=$(cat "$mini"/*)
"$here/patch_functional_tests.sh" "$tmp/tree" >/dev/null
[ "$before" = "$(cat "$mini"/*)" ] || fail "a second run changed the tree"
moved=$tmp/moved/tests/functional
mkdir -p "$moved"
printf '#include <cuda.h>\n' >"$moved/functional_test.h"
printf 'void *p(void) { return dlopen("x.so", 0); }\n' >"$moved/functional_test.cpp"
if "$here/patch_functional_tests.sh" "$tmp/moved" >"$tmp/moved.log" 2>&1; then
  fail "a tree without the expected patterns was accepted"
fi
grep -q "expected" "$tmp/moved.log" || fail "the refusal does not say what was expected"
echo "interop smoke: patch applies once, refuses a moved tree"

# --- 2. the loader path ---------------------------------------------------------
cc -std=c11 -Wall -Wextra -Werror -I "$root/sdk/include" -o "$tmp/loader_smoke" \
  "$here/loader_smoke.c" -ldl
check() {  # NAME PLUGIN MIN_DEVICES [VAR=VALUE ...]
  local name=$1 plugin=$2 min=$3
  shift 3
  if [ ! -e "$plugin" ]; then
    echo "interop smoke: $name not built, skipped"
    return
  fi
  local out
  out=$(env NCCLNET_INTEROP_PLUGIN="$plugin" "$@" "$tmp/loader_smoke" 2>&1) ||
    fail "$name: $out"
  local n
  n=$(sed -n 's/^plugin .* devices \([0-9]*\)$/\1/p' <<<"$out")
  [ -n "$n" ] && [ "$n" -ge "$min" ] || fail "$name: expected at least $min devices: $out"
  echo "interop smoke: $name through the tests' loader path: $n device(s)"
}
check sdk-socket "$build/plugins/socket/libnccl-net-sdk-socket.so" 1 NCCL_SOCKET_IFNAME=lo
check sdk-ofi "$build/plugins/ofi/libnccl-net-sdk-ofi.so" 1 FI_PROVIDER="tcp;ofi_rxm" \
  FI_TCP_IFACE=lo NCCLNET_OFI_DOMAINS=lo
check sdk-ib "$build/plugins/ib/libnccl-net-sdk-ib.so" 1 \
  NCCL_IBVERBS_LIB="$build/sdk/testing/devices/softverbs/libsoftverbs.so"
# A file name without a path goes through the dynamic linker's search, as
# the unpatched tests' libnccl-net.so does.
mkdir -p "$tmp/lib"
ln -s "$build/plugins/socket/libnccl-net-sdk-socket.so" "$tmp/lib/libnccl-net.so"
check "libnccl-net.so on LD_LIBRARY_PATH" "$tmp/lib/libnccl-net.so" 1 NCCL_SOCKET_IFNAME=lo
out=$(env -u NCCLNET_INTEROP_PLUGIN LD_LIBRARY_PATH="$tmp/lib" NCCL_SOCKET_IFNAME=lo \
  "$tmp/loader_smoke" 2>&1) || fail "default name: $out"
grep -q "^plugin sdk-socket" <<<"$out" || fail "unset NCCLNET_INTEROP_PLUGIN did not load libnccl-net.so: $out"
echo "interop smoke: ok"
