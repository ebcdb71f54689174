#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sdk-socket against NCCL's Socket at one thread x socket setting, in
# alternating runs, at several channel counts: the run-to-run spread of the
# GPU host is larger than the differences between the transports, so each
# side gets REPEAT runs and the medians are compared.
#
#   scripts/gpu/nccl_socket_spread.sh [BUILD_DIR]
#
# Environment knobs:
#   CHANNELS  NCCL_MIN_NCHANNELS values, applied to both sides alike
#             (default "0 4 8"; 0: NCCL's own choice, 2 on one NIC)
#   REPEAT    runs per side and channel count (default 3)
#   SETTING   NCCL Socket's NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD (default 2x4)
#   ITERS     timed iterations per size (default 20); sizes 64 MiB and 256 MiB
#   OURS_ENV  VAR=VALUE settings for the sdk-socket runs only (default none)
#   OUT       directory for logs (default: a fresh mktemp -d)
# The first sdk-socket run at each channel count sets NCCLNET_SOCKET_TIMELINE=1
# and NCCLNET_SOCKET_TRACE_DIR, and prints its comms' stage averages and where
# a ring loop goes (scripts/socket_trace.py --ring2-allreduce --brief).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

BUILD=$(realpath "${1:-build}")
DRIVER="$BUILD/tools/nccl-driver/nccl-driver"
PLUGIN="$BUILD/plugins/socket/libnccl-net-sdk-socket.so"
CHANNELS=${CHANNELS:-"0 4 8"}
REPEAT=${REPEAT:-3}
SETTING=${SETTING:-2x4}
ITERS=${ITERS:-20}
OUT=${OUT:-$(mktemp -d /tmp/nccl-socket-spread.XXXXXX)}
mkdir -p "$OUT"
for f in "$DRIVER" "$PLUGIN"; do
  [[ -e "$f" ]] || { echo "missing $f: build with CUDA and NCCL first" >&2; exit 2; }
done
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
export NCCL_NET_PLUGIN_REF_COUNT=1
unset NCCL_SOCKET_NTHREADS NCCL_NSOCKS_PERTHREAD NCCL_NET NCCL_NET_PLUGIN NCCL_MIN_NCHANNELS

# shellcheck disable=SC2206
ours=(NCCL_NET_PLUGIN="$PLUGIN" NCCL_NET=sdk-socket ${OURS_ENV:-})
theirs=(NCCL_NET_PLUGIN=none NCCL_NET=Socket NCCL_IB_DISABLE=1
        NCCL_SOCKET_NTHREADS="${SETTING%x*}" NCCL_NSOCKS_PERTHREAD="${SETTING#*x}")

# run LOG VAR=VALUE...: prints all-reduce busbw at 256 MiB, or "failed".
run() {
  local log=$1; shift
  if env "$@" timeout 180 "$DRIVER" --ops allreduce --min-bytes 64M --max-bytes 256M \
      --iters "$ITERS" >"$log" 2>&1 && grep -q '^SUMMARY ok' "$log"; then
    awk '$1=="RESULT" && $2=="allreduce" && $3==268435456 {print $6}' "$log"
  else
    echo failed
  fi
}
median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : 0)}'; }

status=0
[[ -n "${OURS_ENV:-}" ]] && echo "sdk-socket runs with: $OURS_ENV"
printf "%-9s %-28s %-28s %9s %9s %7s\n" channels "sdk-socket runs" "NCCL Socket $SETTING runs" \
  "median" "median" ratio
for ch in $CHANNELS; do
  extra=()
  [[ $ch != 0 ]] && extra=(NCCL_MIN_NCHANNELS="$ch")
  a=""; b=""
  for i in $(seq "$REPEAT"); do
    timeline=()
    if [[ $i == 1 ]]; then
      rm -rf "$OUT/trace-ch$ch" && mkdir -p "$OUT/trace-ch$ch"  # no older run's files
      timeline=(NCCLNET_SOCKET_TIMELINE=1 NCCLNET_SOCKET_TRACE_DIR="$OUT/trace-ch$ch")
    fi
    a="$a $(run "$OUT/sdk-socket-ch$ch-$i.log" "${ours[@]}" "${extra[@]}" "${timeline[@]}")"
    b="$b $(run "$OUT/nccl-$SETTING-ch$ch-$i.log" "${theirs[@]}" "${extra[@]}")"
  done
  [[ "$a$b" == *failed* ]] && status=1
  ma=$(echo "$a" | median); mb=$(echo "$b" | median)
  used=$(grep -m1 -oE "[0-9]+ coll channels" "$OUT/sdk-socket-ch$ch-1.log" | cut -d' ' -f1)
  printf "%-9s %-28s %-28s %9s %9s %7s\n" "${used:-?}" "$a" "$b" "$ma" "$mb" \
    "$(awk -v x="$ma" -v y="$mb" 'BEGIN {printf (y > 0 ? "%.2f" : "-"), x / y}')"
done
echo
echo "stage averages of the first sdk-socket run at each channel count (NCCLNET_SOCKET_TIMELINE=1):"
for ch in $CHANNELS; do
  # Large-message comms only; the averages over every such comm of the run.
  grep -hoE "(send|recv)Comm.*timeline: [0-9]+ messages of [0-9]+ bytes.*" \
      "$OUT/sdk-socket-ch$ch-1.log" 2>/dev/null |
    awk -v ch="$ch" '{
      kind = substr($0, 1, 4); n = 0
      for (i = 1; i <= NF; i++) if ($i == "us") v[++n] = $(i - 1)
      for (i = 1; i <= NF; i++) if ($i == "bytes") bytes = $(i - 1)
      if (bytes < 65536) next
      c[kind]++; for (i = 1; i <= 3; i++) s[kind, i] += v[i]
    } END {
      for (k in c) printf "  channels %s %s (%d comms): %.1f / %.1f / %.1f us\n", ch, k, c[k],
        s[k, 1] / c[k], s[k, 2] / c[k], s[k, 3] / c[k]
    }'
done
echo "  send: waiting for clear-to-send / matched to last byte sent / last byte to test()"
echo "  recv: waiting for the header / header to last byte received / last byte to test()"
if command -v python3 >/dev/null; then
  for ch in $CHANNELS; do
    echo "channels $ch, from the per-message stamps:"
    python3 "$here/../socket_trace.py" "$OUT/trace-ch$ch" --ring2-allreduce --brief | sed 's/^/  /'
  done
fi
echo "logs: $OUT"
exit $status
