#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where real NCCL starts to fail, for every rule whose check has a threshold
# (docs/contract.md): conf-tcp (conformance/tests/plugins/conf_tcp/
# tunables.hpp) takes a property or a call's duration from its environment,
# and one nccl-driver job runs at each value, on either side of the suite's
# threshold, without a checker so that the verdict is NCCL's own. Then the
# requests NCCL really keeps in flight on one comm (rule 28): every op from
# 8 B to 256 MiB through the checker around sdk-socket and sdk-ib on
# softverbs, whose finalize line reports the peak.
#
#   scripts/gpu/thresholds.sh BUILD_DIR OUT_DIR
#
# One line per job in OUT_DIR/thresholds.txt: rule, setting, seconds, verdict.
set -uo pipefail
build=$(realpath "$1")
out=$2
mkdir -p "$out"
driver=$build/tools/nccl-driver/nccl-driver
tunable=$build/conformance/tests/libnccl-net-conf-tcp.so
checker=$build/tools/ncclnet-check/libnccl-net-sdk-check.so
softverbs=$build/sdk/testing/devices/softverbs/libsoftverbs.so
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_NET_PLUGIN_REF_COUNT=1

# job RULE NAME LIMIT_S [VAR=VALUE ...] -- [nccl-driver options]
job() {
  local rule=$1 name=$2 limit=$3
  shift 3
  local env=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  local dir=$out/$name start=$SECONDS
  timeout $((limit + 30)) env "${env[@]}" "$driver" --run-dir "$dir" --timeout "$limit" "$@" \
    >"$dir.txt" 2>&1
  local rc=$? verdict
  verdict=$(grep -E "^(PASS|FAIL) " "$dir.txt" | tail -1)
  [ -n "$verdict" ] || verdict="(no verdict; exit $rc) $(tail -2 "$dir.txt" | tr '\n' ' ')"
  printf '%-8s %-26s %4d s  %s\n' "$rule" "$name" $((SECONDS - start)) "$verdict" |
    tee -a "$out/thresholds.txt"
}
# Every op, 8 B to 64 KiB: NCCL's LL and LL128 carry the small sizes,
# where a latency property weighs most in NCCL's choice of algorithm.
small=(--min-bytes 8 --max-bytes 64K --factor 8 --iters 2 --warmup 1)
tunable_job() {  # RULE NAME LIMIT_S [VAR=VALUE ...] -- [nccl-driver options]
  local rule=$1 name=$2 limit=$3
  shift 3
  job "$rule" "$name" "$limit" NCCL_NET_PLUGIN="$tunable" NCCL_NET=conf-tcp CONF_TCP_DEFECT= "$@"
}

# Rule 14: the latency NCCL adds to every inter-node step of its model
# (src/graph/tuning.cc ncclTopoTuneModel; truncated to an integer first).
# With every op, on both sides of the default job's bound, and of the bounds
# the model predicts for a Ring/LL all-reduce over 2 and 4 nodes of one GPU
# each: 6.6 + 2(n-1)(5 + trunc(latency)) < 0, so at -9 and at -7.
for latency in 0 -2.9 -3 -11 -15.9 -16 nan inf 1e6; do
  tunable_job 14 "latency=$latency" 60 CONF_TCP_LATENCY="$latency" -- "${small[@]}"
done
for point in 2:-8.9 2:-9 4:-6.9 4:-7; do
  tunable_job 14 "ring-ll,ranks=${point%%:*},latency=${point#*:}" 90 CONF_TCP_LATENCY="${point#*:}" \
    NCCL_ALGO=Ring NCCL_PROTO=LL -- --ranks "${point%%:*}" --ops allreduce --min-bytes 8 \
    --max-bytes 4K --factor 8 --iters 2 --warmup 1
done
# Rule 15: maxComms, which NCCL 2.28 stores and never reads.
for comms in 0 -1; do
  tunable_job 15 "maxComms=$comms" 60 CONF_TCP_MAX_COMMS="$comms" -- "${small[@]}"
done
# Rule 18: maxP2pBytes outside (0, 1 TiB], and a small one inside.
for bytes in 0 1099511627777 4096; do
  tunable_job 18 "maxP2pBytes=$bytes" 60 CONF_TCP_MAX_P2P_BYTES="$bytes" -- "${small[@]}" \
    --max-bytes 1M
done
# Rules 21 and 22: every listen, connect and accept call takes 1.5 s, past
# the suite's 1 s bound (one channel, so that NCCL makes few of them); the
# control has the same settings and no delay. Rule 51: every deregMr and
# close takes 1.5 s, in a job that ends normally and in one that aborts.
one=(NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1)
ops=(--ops allreduce,sendrecv --min-bytes 8 --max-bytes 1M --factor 32 --iters 2 --warmup 1)
tunable_job 21,22 "setup=0ms" 240 "${one[@]}" -- "${ops[@]}"
tunable_job 21,22 "setup=1500ms" 240 "${one[@]}" CONF_TCP_SLOW_SETUP_MS=1500 -- "${ops[@]}"
tunable_job 51 "close=1500ms" 240 "${one[@]}" CONF_TCP_SLOW_CLOSE_MS=1500 -- "${ops[@]}"
tunable_job 51 "close=1500ms,abort" 240 "${one[@]}" CONF_TCP_SLOW_CLOSE_MS=1500 -- \
  --ops allreduce,sendrecv --min-bytes 1M --max-bytes 16M --factor 4 --abort-after-ms 1000

# Rule 28: the peak of requests in flight on one comm, every op to 256 MiB.
peak() {  # NAME INNER_PLUGIN [VAR=VALUE ...]
  local name=$1 inner=$2
  shift 2
  job 28 "peak:$name" 300 NCCL_NET_PLUGIN="$checker" NCCLNET_CHECK_PLUGIN="$inner" \
    NCCL_NET="$name" "$@" -- --iters 3 --warmup 1
  grep -rh "at most .* requests in flight" "$out/peak:$name" 2>/dev/null |
    sed 's/^.*ncclnet-check: /         /' | sort | uniq -c | tee -a "$out/thresholds.txt"
}
peak sdk-socket "$build/plugins/socket/libnccl-net-sdk-socket.so"
peak sdk-ib "$build/plugins/ib/libnccl-net-sdk-ib.so" NCCL_IBVERBS_LIB="$softverbs" \
  NCCL_NET_GDR_LEVEL=LOC
