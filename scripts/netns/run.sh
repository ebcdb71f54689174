#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a two-rank program as across two nodes: rank 0 and rank 1 in network
# namespaces of their own, joined by a data veth (the plugin's traffic,
# where faults go) and a control veth (the rendezvous), then tears both down.
#
#   run.sh [options] -- COMMAND ARGS...
#
# In COMMAND and ARGS, {rank} becomes 0 or 1 and {rendezvous} rank 0's
# control address (10.200.2.1:29500). Both ranks get the plugins' interface
# selection for the data veth: NCCL_SOCKET_IFNAME (sdk-socket, and sdk-ib's
# handshake), FI_TCP_IFACE and NCCLNET_OFI_DOMAINS (sdk-ofi), and SOFTVERBS_NET
# (sdk-ib on softverbs: device addresses routed over the data veth).
#
#   --fault SPEC        loss:P | partition | rate:R (topology.sh), on the data veth
#   --fault-when REGEX  apply it once rank 0's output matches REGEX (default: at start)
#   --fault-delay S     ... and S seconds after that (default 0)
#   --heal-after S      remove it S seconds after it was applied (default: never)
#   --timeout S         kill a rank still running after S seconds (default 600)
#   --logs DIR          keep each rank's output in DIR/rank<R>.log
#
# Exit status: 0 when both ranks exited 0; else rank 0's status, or rank
# 1's when rank 0 exited 0; 124 for a rank killed by --timeout; 77 (skip)
# when namespaces cannot be created here (not root, or not permitted).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/topology.sh"

fault="" when="" delay=0 heal="" timeout=600 logs=""
while [ $# -gt 0 ]; do
  case $1 in
    --fault) fault=$2; shift 2 ;;
    --fault-when) when=$2; shift 2 ;;
    --fault-delay) delay=$2; shift 2 ;;
    --heal-after) heal=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: run.sh [options] -- COMMAND ARGS..." >&2; exit 2; }

if ! why=$(netns_usable); then
  echo "run.sh: SKIP: $why"
  exit 77
fi

prefix="ncn$$x"
pids=()
tmp=$(mktemp -d)
[ -n "$logs" ] || logs=$tmp
mkdir -p "$logs"
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  netns_down "$prefix"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! netns_up "$prefix"; then
  echo "run.sh: cannot build the namespaces and veth pairs" >&2
  exit 1
fi
rendezvous="${NETNS_CONTROL_ADDR[0]}:29500"
export NCCL_SOCKET_IFNAME=$NETNS_DATA_IF FI_TCP_IFACE=$NETNS_DATA_IF
export NCCLNET_OFI_DOMAINS=$NETNS_DATA_IF

start=$(date +%s.%N)
stamp() { awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "+%.1f s", n - s }'; }

launch() {  # RANK COMMAND...
  local rank=$1 arg args=()
  shift
  for arg in "$@"; do
    arg=${arg//\{rank\}/$rank}
    args+=("${arg//\{rendezvous\}/$rendezvous}")
  done
  SOFTVERBS_NET=${NETNS_SOFTVERBS_NET[$rank]} ip netns exec "${prefix}$rank" \
    timeout -k 5 "$timeout" "${args[@]}" >"$logs/rank$rank.log" 2>&1 &
  pids+=($!)
  eval "pid$rank=$!"
}

if [ -n "$fault" ] && [ -z "$when" ]; then
  netns_fault "$prefix" "$fault" || exit 1
  echo "netns: $(stamp) $fault on $NETNS_DATA_IF"
fi
launch 1 "$@"
launch 0 "$@"

# The fault schedule runs beside the ranks and ends with them.
if [ -n "$fault" ] && [ -n "$when" ]; then
  applied=0
  until grep -Eq "$when" "$logs/rank0.log" 2>/dev/null; do
    kill -0 "$pid0" 2>/dev/null || break
    sleep 0.1
  done
  if grep -Eq "$when" "$logs/rank0.log" 2>/dev/null; then
    sleep "$delay"
    netns_fault "$prefix" "$fault" && echo "netns: $(stamp) $fault on $NETNS_DATA_IF"
    applied=1
  fi
  if [ "$applied" = 1 ] && [ -n "$heal" ]; then
    # On the wall clock (a loaded machine stretches a count of short sleeps),
    # and early if rank 0 is gone.
    heal_at=$((${EPOCHREALTIME/./} + $(awk -v h="$heal" 'BEGIN { printf "%d", h * 1e6 }')))
    while [ "${EPOCHREALTIME/./}" -lt "$heal_at" ]; do
      kill -0 "$pid0" 2>/dev/null || break
      sleep 0.1
    done
    netns_fault "$prefix" none && echo "netns: $(stamp) healed"
  fi
fi

wait "$pid0"
rc0=$?
wait "$pid1"
rc1=$?
pids=()
echo "netns: $(stamp) rank 0 exited $rc0, rank 1 exited $rc1"
for r in 0 1; do sed "s/^/[rank $r] /" "$logs/rank$r.log"; done
[ "$rc0" -ne 0 ] && exit "$rc0"
exit "$rc1"
