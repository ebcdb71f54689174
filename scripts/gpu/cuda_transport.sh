#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The reference transport's CUDA device peer on a GPU machine: its tests
# (rt_cuda_tests, GPU 0), then ncclnet-conformance's Transport scenarios with
# --device cuda (each rank's kernels on GPU rank % GPUs, the *GpuMemory
# variants in device memory) against sdk-socket and sdk-ib on softverbs.
# Logs and JSON reports go to $OUT.
#
#   scripts/gpu/cuda_transport.sh STAGE_OR_BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(realpath "${1:-build}")
OUT=${OUT:-$(mktemp -d /tmp/ncclnet-cuda-transport.XXXXXX)}
mkdir -p "$OUT"
profiles=$build/conformance/profiles
[ -d "$profiles" ] || profiles=$root/conformance/profiles
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0

run() {  # NAME COMMAND...: runs it under a deadline, logs to $OUT/NAME.log
  local name=$1
  shift
  if timeout 900 "$@" >"$OUT/$name.log" 2>&1; then
    echo "$name: ok"
  else
    echo "$name: FAILED (see $OUT/$name.log)"
    tail -25 "$OUT/$name.log"
    status=1
  fi
}

tests=$build/sdk/reference_transport/tests/rt_cuda_tests
if [ ! -x "$tests" ]; then
  echo "rt_cuda_tests: not built (no nvcc when the build was configured?)"
  exit 1
fi
run rt_cuda_tests "$tests"
# On a GPU machine nothing may skip but the test for machines without one
# (and the unreachable-memory test where the GPU reaches all host memory).
skipped=$(grep -E '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$OUT/rt_cuda_tests.log" |
  grep -v -e CudaPeerWithoutGpu -e HostMemoryThatTheGpuCannotReach || true)
if nvidia-smi -L >/dev/null 2>&1 && [ -n "$skipped" ]; then
  echo "rt_cuda_tests: tests skipped on a GPU machine:"
  echo "$skipped"
  grep -B1 -A1 'Skipped$' "$OUT/rt_cuda_tests.log" | head -9
  status=1
fi

conformance=$build/conformance/ncclnet-conformance
if [ ! -x "$conformance" ]; then
  echo "ncclnet-conformance: not built"
  exit 1
fi
certify() {  # NAME PLUGIN PROFILE [VAR=VALUE ...]
  local name=$1 plugin=$2 profile=$3
  shift 3
  if [ ! -e "$plugin" ]; then
    echo "$name: plugin not built, skipped"
    return
  fi
  run "$name" env "$@" "$conformance" --plugin "$plugin" --profile "$profiles/$profile" \
    --abi v12 --device cuda --verbose --gtest_filter='*Transport*' --json "$OUT/$name.json"
  # Each verdict with its reason, and the registrations the transport made.
  python3 - "$OUT/$name.json" <<'PY' || grep -E '^(pass|fail|notrun) ' "$OUT/$name.log"
import json, sys
report = json.load(open(sys.argv[1]))
for s in report["scenarios"]:
    print("  %-8s %-40s %s" % (s["verdict"], s["scenario"], s.get("reason", "")[:150]))
print("  counters:", report["summary"].get("counters", {}))
PY
  # With a GPU, only the GPU-memory variants may be NotRun (a plugin without
  # NCCL_PTR_CUDA); the others run on the CUDA device peer.
  if nvidia-smi -L >/dev/null 2>&1 &&
      grep -E '^notrun ' "$OUT/$name.log" | grep -qv GpuMemory; then
    echo "$name: Transport scenarios NotRun on a GPU machine"
    status=1
  fi
}
certify conformance-cuda-sdk-socket "$build/plugins/socket/libnccl-net-sdk-socket.so" \
  sdk-socket.yaml NCCL_SOCKET_IFNAME=lo
softverbs=$(ls "$build"/plugins/ib/softverbs/libsoftverbs.so 2>/dev/null | head -1)
certify conformance-cuda-sdk-ib "$build/plugins/ib/libnccl-net-sdk-ib.so" \
  sdk-ib-softverbs.yaml NCCL_IBVERBS_LIB="$softverbs"
exit $status
