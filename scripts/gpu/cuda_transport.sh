#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The reference transport's CUDA device peer on a GPU machine: its tests
# (rt_cuda_tests, GPU 0), where nothing may skip but the tests for machines
# without a GPU. The Transport scenarios with --device cuda across processes
# run from run_all.sh (PARTS=transport). Logs go to $OUT.
#
#   scripts/gpu/cuda_transport.sh STAGE_OR_BUILD_DIR
set -uo pipefail
build=$(realpath "${1:-build}")
OUT=${OUT:-$(mktemp -d /tmp/ncclnet-cuda-transport.XXXXXX)}
mkdir -p "$OUT"
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

exit $status
