#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sdk-socket inside real NCCL, next to NCCL's internal Socket transport.
#
#   scripts/gpu/nccl_socket_compare.sh [BUILD_DIR]
#
# Runs tools/nccl-driver (2 ranks on GPUs 0 and 1, one process) with P2P and
# SHM disabled, so every byte crosses the network transport:
#   1. NCCL_NET_PLUGIN=<abs path of libnccl-net-sdk-socket.so> NCCL_NET=sdk-socket
#   2. NCCL's internal Socket (NCCL_NET=Socket) at its defaults
#   3. the same at each NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD in $SETTINGS
# then proves from the NCCL log that run 1 loaded and used the plugin, and
# prints bus bandwidth side by side. Environment knobs:
#   SETTINGS   thread x socket settings for NCCL's Socket (default "2x4 4x4 8x2 4x8")
#   OURS       sdk-socket variants besides its defaults: TxK (threads x sockets)
#              or NAME:VAR=VALUE[,VAR=VALUE] (default none; e.g.
#              "4x4 spin0:NCCLNET_SOCKET_SPIN_US=0")
#   MAX_BYTES  largest message (default 256M); ITERS (default 10)
#   NCCL_SOCKET_IFNAME  interface for every run (default lo)
#   OUT        directory for logs (default: a fresh mktemp -d)
set -euo pipefail

BUILD=$(realpath "${1:-build}")
DRIVER="$BUILD/tools/nccl-driver/nccl-driver"
PLUGIN="$BUILD/plugins/socket/libnccl-net-sdk-socket.so"
SETTINGS=${SETTINGS:-"2x4 4x4 8x2 4x8"}
MAX_BYTES=${MAX_BYTES:-256M}
ITERS=${ITERS:-10}
OUT=${OUT:-$(mktemp -d /tmp/nccl-socket-compare.XXXXXX)}
mkdir -p "$OUT"

for f in "$DRIVER" "$PLUGIN"; do
  [[ -e "$f" ]] || { echo "missing $f: build with CUDA and NCCL first" >&2; exit 2; }
done
# Both transports on loopback unless told otherwise: the two ranks share a
# host, and the comparison is between transports, not interfaces.
NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
# Both transports use the same interface: the comparison is the transport.
export NCCL_SOCKET_IFNAME
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV
# Keep NCCL from loading the plugin again after the last comm (NCCL 2.28 bug).
export NCCL_NET_PLUGIN_REF_COUNT=1
unset NCCL_SOCKET_NTHREADS NCCL_NSOCKS_PERTHREAD NCCL_NET NCCL_NET_PLUGIN

run() {  # run NAME [VAR=VALUE ...]
  local name=$1; shift
  echo "== $name: $*" >&2
  if ! env "$@" "$DRIVER" --max-bytes "$MAX_BYTES" --iters "$ITERS" >"$OUT/$name.log" 2>&1; then
    echo "run '$name' failed; last lines of $OUT/$name.log:" >&2
    tail -20 "$OUT/$name.log" >&2
    return 1
  fi
  grep -q '^SUMMARY ok' "$OUT/$name.log" || { echo "run '$name': a result check failed" >&2; return 1; }
}

status=0
run sdk-socket NCCL_NET_PLUGIN="$PLUGIN" NCCL_NET=sdk-socket || status=1
run nccl-default NCCL_NET_PLUGIN=none NCCL_NET=Socket NCCL_IB_DISABLE=1 || status=1
names="sdk-socket"
# An OURS entry is TxK (threads x sockets) or NAME:VAR=VALUE[,VAR=VALUE...].
ours_env() {
  case $1 in
    *:*) local vars=${1#*:}; echo "${vars//,/ }" ;;
    *) echo "NCCL_SOCKET_NTHREADS=${1%x*} NCCL_NSOCKS_PERTHREAD=${1#*x}" ;;
  esac
}
ours_name() { echo "${1%%:*}"; }
for s in ${OURS:-}; do
  # shellcheck disable=SC2046
  run "sdk-socket-$(ours_name "$s")" NCCL_NET_PLUGIN="$PLUGIN" NCCL_NET=sdk-socket \
    $(ours_env "$s") || status=1
  names="$names sdk-socket-$(ours_name "$s")"
done
names="$names nccl-default"
for s in $SETTINGS; do
  t=${s%x*}; k=${s#*x}
  run "nccl-$s" NCCL_NET_PLUGIN=none NCCL_NET=Socket NCCL_IB_DISABLE=1 \
    NCCL_SOCKET_NTHREADS="$t" NCCL_NSOCKS_PERTHREAD="$k" || status=1
  names="$names nccl-$s"
done

# Proof that run 1 went through our plugin: NCCL loaded it, chose it, and
# its channels connect through it.
log="$OUT/sdk-socket.log"
echo
echo "== proof from $log"
proof=0
grep -m1 -E "NET/Plugin.*(Loaded|loaded).*sdk-socket|Loaded net plugin sdk-socket" "$log" || proof=1
grep -m1 -E "Using network sdk-socket" "$log" || proof=1
grep -m2 -E "via NET/sdk-socket" "$log" || proof=1
grep -m1 -E "NET/sdk-socket.*(connected to|accepted)" "$log" || proof=1
if [[ $proof -ne 0 ]]; then
  echo "NOT PROVEN: the log lacks one of the lines above (see $log)" >&2
  status=1
fi

# Side-by-side bus bandwidth.
echo
printf "%-10s %12s" op bytes
for n in $names; do printf " %14s" "$n"; done
echo "   (busbw GB/s)"
for op in allreduce allgather sendrecv; do
  for bytes in $(awk -v op=$op '$1=="RESULT" && $2==op {print $3}' "$OUT/sdk-socket.log"); do
    printf "%-10s %12s" "$op" "$bytes"
    for n in $names; do
      v=$(awk -v op=$op -v b=$bytes '$1=="RESULT" && $2==op && $3==b {print $6}' "$OUT/$n.log" 2>/dev/null)
      printf " %14s" "${v:--}"
    done
    echo
  done
done

# The issue's targets: all-reduce busbw at the largest size.
busbw() { awk -v b="$2" '$1=="RESULT" && $2=="allreduce" && $3==b {print $6}' "$OUT/$1.log"; }
largest=$(awk '$1=="RESULT" && $2=="allreduce" {b=$3} END {print b}' "$OUT/sdk-socket.log")
ours=$(busbw sdk-socket "$largest"); default=$(busbw nccl-default "$largest")
best=0; bestName=-
for s in $SETTINGS; do
  v=$(busbw "nccl-$s" "$largest"); v=${v:-0}
  if awk -v a="$v" -v b="$best" 'BEGIN {exit !(a > b)}'; then best=$v; bestName=$s; fi
done
echo
awk -v o="${ours:-0}" -v d="${default:-0}" -v b="$best" -v n="$bestName" -v s="$largest" 'BEGIN {
  printf "all-reduce %s bytes: sdk-socket %.3f GB/s; %.2fx NCCL Socket default (target >= 2), %.2fx NCCL Socket best %s (target >= 1.1)\n",
    s, o, (d > 0 ? o / d : 0), (b > 0 ? o / b : 0), n }'
for s in ${OURS:-}; do
  s=$(ours_name "$s")
  v=$(busbw "sdk-socket-$s" "$largest")
  awk -v o="${v:-0}" -v b="$best" -v s="$s" 'BEGIN {
    printf "  sdk-socket at %s: %.3f GB/s, %.2fx NCCL Socket best\n", s, o, (b > 0 ? o / b : 0) }'
done
echo "logs: $OUT"
exit $status
