#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What real NCCL does with each defect conf-tcp can plant (the suite's own
# test plugin, conformance/tests/plugins/conf_tcp/defects.hpp, chosen by
# CONF_TCP_DEFECT, which nccl-driver's ranks inherit): every defect runs one
# nccl-driver job (every op, 8 B to 4 MiB, so NCCL's LL, LL128 and Simple
# protocols all carry traffic), the defects about a dead peer also one job
# with a rank killed mid-traffic, and the defects that need a job that goes
# wrong (a size mismatch, a rank that destroys first) that job, beside the
# correct plugin. No checker: this is NCCL's own verdict, to set beside the
# suite's (docs/conformance.md, "Ground truth").
#
#   scripts/gpu/ground_truth.sh BUILD_DIR OUT_DIR [DEFECT ...]
#
# DEFECT is a CONF_TCP_DEFECT value, or "none" for the correct plugin;
# without any, the correct plugin and every defect conf-tcp knows. One line
# per job in OUT_DIR/truth.txt: plugin (conf-tcp, or conf-tcp+DEFECT), job,
# nccl-driver's verdict.
set -uo pipefail
build=$(realpath "$1")
out=$2
shift 2
mkdir -p "$out"
driver=$build/tools/nccl-driver/nccl-driver
plugin=$build/conformance/tests/libnccl-net-conf-tcp.so
if [ $# -eq 0 ]; then
  # The plugin's own list: an unknown name fails its init with a line
  # ending "known: NAME NAME ...".
  set -- none $(CONF_TCP_DEFECT=? "$build/tools/ncclnet-info/ncclnet-info" --plugin "$plugin" 2>&1 |
    sed -n 's/.*which is no defect of conf-tcp; known: //p' | head -1)
fi
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
job() {  # DEFECT JOB_NAME [nccl-driver options]
  local defect=$1 what=$2 name=conf-tcp
  shift 2
  [ "$defect" = none ] || name=conf-tcp+$defect
  local dir=$out/$name.$what
  timeout 120 env NCCL_NET_PLUGIN="$plugin" NCCL_NET=conf-tcp CONF_TCP_DEFECT="${defect#none}" \
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
  # with the defects it concerns and on the correct plugin as the control.
  case $name in
    *peer-death* | *unmatched-death* | *death-on-new-send* | none)
      job "$name" kill --kill-rank 1 --kill-after-ms 1500 --error-bound 30 \
        --ops allreduce,sendrecv --min-bytes 1M --max-bytes 16M --factor 4 ;;
  esac
  case $name in
    overrun | wrong-sizes | none)  # a user's size mismatch (rule 32)
      job "$name" truncate --truncate-p2p ;;
  esac
  case $name in
    resets-at-close | none)  # the sender destroys first (rule 38)
      job "$name" tail --ops allreduce,sendrecv --min-bytes 8 --max-bytes 64K --factor 64 \
        --tail-skew-ms 700 ;;
  esac
done
