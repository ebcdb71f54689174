#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole GPU run: every bundled plugin inside real NCCL on 2 GPUs, next to
# NCCL's internal Socket transport. Writes logs and a summary to $OUT.
#
#   scripts/gpu/run_all.sh STAGE_OR_BUILD_DIR
#
# Each plugin run uses NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 so that all
# traffic crosses the plugin, checks every result (nccl-driver), and proves
# from the NCCL log that the plugin was loaded and used.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:-build}")
OUT=${OUT:-$(mktemp -d /tmp/ncclnet-gpu.XXXXXX)}
mkdir -p "$OUT"
export OUT
summary=$OUT/summary.txt
: >"$summary"

{
  echo "== machine"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  ldconfig -p | grep -E "libnccl.so|libfabric.so|libibverbs.so" | head -5
} 2>&1 | tee -a "$summary"

status=0
for so in "$build"/plugins/*/libnccl-net-sdk-*.so; do
  "$build/tools/ncclnet-info/ncclnet-info" --plugin "$so" --nccl 2.28 >"$OUT/info-$(basename "$so" .so).txt" 2>&1
  echo "ncclnet-info $(basename "$so"): exit $?" | tee -a "$summary"
done
echo "== sdk-socket vs NCCL Socket" | tee -a "$summary"
if timeout 420 "$here/nccl_socket_compare.sh" "$build" >"$OUT/socket_compare.txt" 2>&1; then
  echo "socket compare: ok" | tee -a "$summary"
else
  echo "socket compare: FAILED" | tee -a "$summary"
  status=1
fi
tail -40 "$OUT/socket_compare.txt" >>"$summary"

# One plugin in NCCL: run nccl-driver and prove the plugin carried the traffic.
plugin_run() {  # NAME PLUGIN_SO NCCL_NET_NAME [VAR=VALUE ...]
  local name=$1 so=$2 net=$3
  shift 3
  if [ ! -e "$so" ]; then
    echo "$name: not built, skipped" | tee -a "$summary"
    return
  fi
  echo "== $name in NCCL" | tee -a "$summary"
  local log=$OUT/$name.log
  if timeout 300 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO \
      NCCL_DEBUG_SUBSYS=INIT,NET,ENV NCCL_NET_PLUGIN_REF_COUNT=1 \
      NCCL_NET_PLUGIN="$so" NCCL_NET="$net" "$@" \
      "$build/tools/nccl-driver/nccl-driver" --max-bytes "${MAX_BYTES:-64M}" --iters 5 >"$log" 2>&1 &&
      grep -q '^SUMMARY ok' "$log"; then
    echo "$name: results correct" | tee -a "$summary"
  else
    echo "$name: FAILED (see $name.log)" | tee -a "$summary"
    tail -15 "$log" >>"$summary"
    status=1
  fi
  grep -m1 -E "Using network $net" "$log" >>"$summary" || { echo "$name: NCCL did not use $net" >>"$summary"; status=1; }
  grep -m2 -E "via NET/$net" "$log" >>"$summary" || true
  awk '$1=="RESULT" && ($2=="allreduce" || $2=="sendrecv") {print}' "$log" | tail -6 >>"$summary"
}

plugin_run sdk-ofi "$build/plugins/ofi/libnccl-net-sdk-ofi.so" sdk-ofi \
  FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo NCCLNET_OFI_DOMAINS=lo
softverbs=$(ls "$build"/plugins/ib/softverbs/libsoftverbs.so* 2>/dev/null | head -1)
plugin_run sdk-ib "$build/plugins/ib/libnccl-net-sdk-ib.so" sdk-ib \
  NCCL_IBVERBS_LIB="$softverbs"

echo "== CUDA device peer (reference transport)" | tee -a "$summary"
if "$here/cuda_transport.sh" "$build" >"$OUT/cuda_transport.txt" 2>&1; then
  echo "cuda transport: ok" | tee -a "$summary"
else
  echo "cuda transport: FAILED" | tee -a "$summary"
  status=1
fi
cat "$OUT/cuda_transport.txt" >>"$summary"

echo "== done, status $status" | tee -a "$summary"
exit $status
