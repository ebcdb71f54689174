#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What real NCCL does with each deliberately broken build of conf-tcp (the
# suite's own test plugins, conformance/tests/CMakeLists.txt): every build
# runs one nccl-driver job (every op, 8 B to 4 MiB, so NCCL's LL, LL128
# and Simple protocols all carry traffic), the builds whose defect is about
# a dead peer also one job with a rank killed mid-traffic, and the builds
# whose defect needs a job that goes wrong (a size mismatch, a rank that
# destroys first) that job, beside the correct build. No checker: this
# is NCCL's own verdict, to set beside the suite's (docs/conformance.md,
# "Ground truth").
#
#   scripts/gpu/ground_truth.sh BUILD_DIR OUT_DIR [BUILD_NAME ...]
#
# One line per job in OUT_DIR/truth.txt: build, job, nccl-driver's verdict.
set -uo pipefail
build=$(realpath "$1")
out=$2
shift 2
mkdir -p "$out"
driver=$build/tools/nccl-driver/nccl-driver
plugins=$build/conformance/tests
if [ $# -eq 0 ]; then
  set -- $(cd "$plugins" && ls libnccl-net-conf-tcp*.so | sed 's/^libnccl-net-//; s/\.so$//')
fi
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
job() {  # BUILD JOB_NAME [nccl-driver options]
  local name=$1 what=$2
  shift 2
  local dir=$out/$name.$what
  timeout 120 env NCCL_NET_PLUGIN="$plugins/libnccl-net-$name.so" NCCL_NET="$name" \
    NCCL_NET_PLUGIN_REF_COUNT=1 \
    "$driver" --run-dir "$dir" --timeout "${TRUTH_TIMEOUT:-25}" "$@" >"$dir.txt" 2>&1
  local rc=$?
  local verdict
  verdict=$(grep -E "^(PASS|FAIL) " "$dir.txt" | tail -1)
  [ -n "$verdict" ] || verdict="(no verdict; exit $rc) $(tail -2 "$dir.txt" | tr '\n' ' ')"
  printf '%-40s %-7s %s\n' "$name" "$what" "$verdict" | tee -a "$out/truth.txt"
}
for name in "$@"; do
  job "$name" ops --min-bytes 8 --max-bytes 4M --factor 16 --iters 3 --warmup 1
  # The workloads that expose a defect the job above cannot show, each run
  # on the builds it concerns and on the correct build as the control.
  case $name in
    *peer-death* | *unmatched-death* | *death-on-new-send* | conf-tcp)
      job "$name" kill --kill-rank 1 --kill-after-ms 1500 --error-bound 30 \
        --ops allreduce,sendrecv --min-bytes 1M --max-bytes 16M --factor 4 ;;
  esac
  case $name in
    conf-tcp-overrun | conf-tcp-wrong-sizes | conf-tcp)  # a user's size mismatch (rule 32)
      job "$name" truncate --truncate-p2p ;;
  esac
  case $name in
    conf-tcp-resets-at-close | conf-tcp)  # the sender destroys first (rule 38)
      job "$name" tail --ops allreduce,sendrecv --min-bytes 8 --max-bytes 64K --factor 64 \
        --tail-skew-ms 700 ;;
  esac
done
