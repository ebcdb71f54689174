#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records the call traces of small real NCCL jobs (conformance/traces/nccl-*,
# replayed on CPUs by the Replay.Nccl* scenarios): nccl-driver runs two
# ranks on one GPU as two hosts, the checker wraps sdk-socket and writes one
# trace per rank (NCCLNET_CHECK_TRACE). Few channels, sizes and iterations
# keep each trace a few thousand lines.
#
#   scripts/gpu/record_nccl_traces.sh BUILD_DIR OUT_DIR
#
# OUT_DIR/<pattern>/rank<i>.trace, ranks in pid order, as conformance/traces
# holds them.
set -euo pipefail
build=$(realpath "$1")
out=$(realpath -m "$2")
driver=$build/tools/nccl-driver/nccl-driver
record() {  # PATTERN [VAR=VALUE ...] -- [nccl-driver options]
  local name=$1
  shift
  local env=()
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  local raw=$out/raw-$name
  rm -rf "$raw" "${out:?}/$name"
  mkdir -p "$raw" "$out/$name"
  env NCCL_SOCKET_IFNAME=lo NCCL_NET_PLUGIN_REF_COUNT=1 NCCL_NET=sdk-socket \
    NCCL_NET_PLUGIN="$build/tools/ncclnet-check/libnccl-net-sdk-check.so" \
    NCCLNET_CHECK_PLUGIN="$build/plugins/socket/libnccl-net-sdk-socket.so" \
    NCCLNET_CHECK_TRACE="$raw" NCCL_MAX_NCHANNELS=2 "${env[@]}" \
    "$driver" --run-dir "$raw/run" --timeout 120 --iters 1 --warmup 0 "$@"
  local i=0
  for f in $(ls "$raw"/*.trace | sort -t. -k3 -n); do
    cp "$f" "$out/$name/rank$i.trace"
    i=$((i + 1))
  done
  wc -l "$out/$name"/*.trace
}
record nccl-ring-simple NCCL_PROTO=Simple -- --ops allreduce --min-bytes 8 --max-bytes 1M --factor 32
record nccl-ring-ll NCCL_PROTO=LL -- --ops allreduce,allgather --min-bytes 8 --max-bytes 64K --factor 32
record nccl-p2p -- --ops sendrecv,alltoall --min-bytes 8 --max-bytes 1M --factor 32
