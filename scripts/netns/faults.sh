#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault profiles across two network namespaces (run.sh): ncclnet-churn
# streams verified messages over the data veth while the kernel drops,
# partitions or rate-limits it (nftables and tbf; this kernel has no
# netem). The rule: every byte intact, or an error from the plugin within
# its bound; never wrong bytes, never a hang.
#
#   faults.sh socket|ofi|ib BUILD_DIR [PROFILE...]
#
# Profiles (default: all):
#   clean              no fault, 5 s
#   loss2              2 % of the packets dropped both ways, 20 s
#   churn-loss2        2 % loss, 200 connect/transfer/close cycles
#   rate               tbf at 50 Mbit/s both ways, 10 s
#   partition-heals    everything dropped for 10 s mid-stream, then healed
#   partition-forever  everything dropped mid-stream, never healed: both
#                      ranks must fail with an error within the bound
# The bound: NCCLNET_SOCKET_PEER_TIMEOUT_MS for sdk-socket (30 s unless
# set); FAULT_BOUND_S for the others (60 s unless set). Allowed: 1.2 x the
# bound + 5 s; a rank with no error by then plus 10 s is a hang.
# FAULTS_QUICK=1 shortens the timed profiles (CI): 5 s streams, 50 cycles.
# Exit status: 0 when every profile held; 77 (skip) without namespaces.
set -u
here=$(cd "$(dirname "$0")" && pwd)
kind=${1:?socket, ofi or ib}
build=${2:?build directory}
shift 2
profiles=("$@")
[ ${#profiles[@]} -gt 0 ] ||
  profiles=(clean loss2 churn-loss2 rate partition-heals partition-forever)
churn=$build/tools/ncclnet-churn/ncclnet-churn

case $kind in
  socket)
    plugin=$build/plugins/socket/libnccl-net-sdk-socket.so
    bound=$(((${NCCLNET_SOCKET_PEER_TIMEOUT_MS:-30000} + 999) / 1000))
    ;;
  ofi)
    plugin=$build/plugins/ofi/libnccl-net-sdk-ofi.so
    export FI_PROVIDER=${FI_PROVIDER:-"tcp;ofi_rxm"}
    bound=${FAULT_BOUND_S:-60}
    ;;
  ib)
    plugin=$build/plugins/ib/libnccl-net-sdk-ib.so
    export NCCL_IBVERBS_LIB=${NCCL_IBVERBS_LIB:-$build/sdk/testing/devices/softverbs/libsoftverbs.so}
    bound=${FAULT_BOUND_S:-60}
    ;;
  *) echo "faults.sh: unknown plugin kind '$kind'" >&2; exit 2 ;;
esac
for f in "$churn" "$plugin"; do
  [ -e "$f" ] || { echo "faults.sh: $f is not built" >&2; exit 2; }
done
allowed=$(awk -v b="$bound" 'BEGIN { print int(b * 1.2 + 5) }')
stall=$((allowed + 10))
long=20 short=10 cycles=200
if [ "${FAULTS_QUICK:-0}" = 1 ]; then long=5 short=5 cycles=50; fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

status=0
results=()
verdict() {  # PROFILE PASS|FAIL TEXT
  results+=("$(printf '%-18s %-4s %s' "$1" "$2" "$3")")
  [ "$2" = PASS ] || status=1
}

stream=("$churn" --plugin "$plugin" --rank '{rank}' --rendezvous '{rendezvous}'
  --size 262144 --pause-ms 2 --stall "$stall")

for profile in "${profiles[@]}"; do
  out=$logs/$profile.out
  echo "=== $kind: $profile"
  case $profile in
    clean) "$here/run.sh" --timeout 120 -- "${stream[@]}" --seconds 5 >"$out" 2>&1 ;;
    loss2) "$here/run.sh" --timeout 180 --fault loss:2 -- "${stream[@]}" --seconds "$long" >"$out" 2>&1 ;;
    churn-loss2)
      "$here/run.sh" --timeout 300 --fault loss:2 -- "$churn" --plugin "$plugin" --rank '{rank}' \
        --rendezvous '{rendezvous}' --cycles "$cycles" --stall "$stall" >"$out" 2>&1 ;;
    rate)
      "$here/run.sh" --timeout 180 --fault rate:50mbit -- "${stream[@]}" --seconds "$short" >"$out" 2>&1 ;;
    partition-heals)
      "$here/run.sh" --timeout 300 --fault partition --fault-when 'streaming' --fault-delay 3 \
        --heal-after 10 -- "${stream[@]}" --seconds 30 >"$out" 2>&1 ;;
    partition-forever)
      "$here/run.sh" --timeout $((stall + 60)) --fault partition --fault-when 'streaming' \
        --fault-delay 3 -- "${stream[@]}" --seconds 3600 >"$out" 2>&1 ;;
    *) echo "faults.sh: unknown profile '$profile'" >&2; exit 2 ;;
  esac
  rc=$?
  cat "$out"
  if [ "$rc" = 77 ]; then
    echo "faults.sh: SKIP: $(sed -n 's/^run.sh: SKIP: //p' "$out")"
    exit 77
  fi
  rcs=$(sed -n 's/.*rank 0 exited \([0-9]*\), rank 1 exited \([0-9]*\).*/\1 \2/p' "$out")
  summary=$(grep -h -o 'rank [01]: [0-9]* \(messages\|connect\).*' "$out" | sed 's/every byte verified; //' | tr '\n' ' ')
  if [ "$profile" != partition-forever ]; then
    if [ "$rcs" = "0 0" ]; then
      verdict "$profile" PASS "$summary"
    else
      verdict "$profile" FAIL "exit statuses '$rcs': $(grep -h 'FAILED' "$out" | tr '\n' ' ')"
    fi
    if [ "$profile" = partition-heals ] && [ "$rcs" = "0 0" ]; then
      # The partition must have hit the stream: some wait lasted most of it.
      gap=$(grep -ho 'longest wait for a completion [0-9.]*' "$out" | awk '{ if ($NF > m) m = $NF } END { print m + 0 }')
      if awk -v g="$gap" 'BEGIN { exit !(g < 8) }'; then
        verdict "$profile" FAIL "the partition did not stall the stream (longest wait ${gap} s)"
      fi
    fi
    continue
  fi
  # partition-forever: both ranks end with the plugin's error, within the bound.
  worst=0 text=""
  for r in 0 1; do
    line=$(grep -h "^\[rank $r\] rank $r: FAILED" "$out" | head -n1)
    took=$(echo "$line" | sed -n 's/.*after \([0-9.]*\) s without a completed transfer.*/\1/p')
    if ! echo "$line" | grep -q 'FAILED (plugin error)' || [ -z "$took" ]; then
      verdict "$profile" FAIL "rank $r did not end in a plugin error: ${line:-no verdict (killed)}"
      continue 2
    fi
    text+="rank $r: error after $took s; "
    worst=$(awk -v a="$worst" -v b="$took" 'BEGIN { print (b > a) ? b : a }')
  done
  if awk -v w="$worst" -v a="$allowed" 'BEGIN { exit !(w <= a) }'; then
    verdict "$profile" PASS "${text}bound $bound s (allowed $allowed s)"
  else
    verdict "$profile" FAIL "${text}past the allowed $allowed s (bound $bound s)"
  fi
done

echo
echo "=== $kind: fault profiles across network namespaces"
printf '%s\n' "${results[@]}"
exit $status
