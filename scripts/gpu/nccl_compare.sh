#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Performance inside real NCCL, side by side: nccl-driver runs every
# subject in alternating rounds (one process per rank, its own NCCL_HOSTID,
# so every byte crosses the transport under test), with an MPS daemon so
# that the ranks sharing one GPU do not time-slice it, and prints medians,
# spreads and round-by-round ratios against the first subject.
#
#   scripts/gpu/nccl_compare.sh BUILD_DIR OUT_DIR
#
# SUBJECTS picks (default: every one below that is built; the checker
# wraps each bundled plugin as NAME-checked; sdk-ofi-eN is sdk-ofi with N
# endpoints per device, nccl-socket-TxS NCCL's Socket so tuned); ROUNDS (5),
# OPS (allreduce,sendrecv), MIN_BYTES (1M), MAX_BYTES (1G), ITERS (5).
# aws-ofi-nccl joins when STAGE_DIR/interop has it (scripts/interop/build.sh).
# VARIANTS adds subjects that are another one with more settings, each
# NAME=BASE:VAR=VALUE,VAR=VALUE (e.g. sdk-socket-4x1=sdk-socket:
# NCCL_SOCKET_NTHREADS=4,NCCL_NSOCKS_PERTHREAD=1 as one word); they run
# whatever SUBJECTS says.
# SAMPLER=1 preloads tools/ncclnet-sampler into every rank: one CPU profile
# per rank process, OUT_DIR/profiles/sampler.<subject>.<pid>.txt.
set -uo pipefail
build=$(realpath "$1")
out=$2
mkdir -p "$out"
driver=$build/tools/nccl-driver/nccl-driver
socket=$build/plugins/socket/libnccl-net-sdk-socket.so
ofi=$build/plugins/ofi/libnccl-net-sdk-ofi.so
ib=$build/plugins/ib/libnccl-net-sdk-ib.so
softverbs=$build/sdk/testing/devices/softverbs/libsoftverbs.so
checker=$build/tools/ncclnet-check/libnccl-net-sdk-check.so
aws=$build/interop/aws-ofi-nccl/lib/libnccl-net-ofi.so
ofi_env=(--env "FI_PROVIDER=tcp;ofi_rxm" --env FI_TCP_IFACE=lo --env NCCLNET_OFI_DOMAINS=lo)

args=(--mps --rounds "${ROUNDS:-5}" --ops "${OPS:-allreduce,sendrecv}"
      --min-bytes "${MIN_BYTES:-1M}" --max-bytes "${MAX_BYTES:-1G}" --factor 4
      --iters "${ITERS:-5}" --warmup 1 --timeout 120 --run-dir "$out/runs" --json "$out/compare.json"
      # Every subject: loopback, and the plugin kept loaded across comms.
      --env NCCL_SOCKET_IFNAME=lo --env NCCL_NET_PLUGIN_REF_COUNT=1)
sampler=$build/tools/ncclnet-sampler/libncclnet-sampler.so
if [ "${SAMPLER:-0}" = 1 ]; then
  [ -e "$sampler" ] || { echo "SAMPLER=1: $sampler is not built" >&2; exit 2; }
  mkdir -p "$out/profiles"
fi
add_subject() {  # NAME [--env VAR=VALUE ...]
  local name=$1
  args+=(--subject "$@")
  # NCCL names its threads only when asked (NCCL_SET_THREAD_NAME).
  [ "${SAMPLER:-0}" = 1 ] && args+=(--env "LD_PRELOAD=$sampler" --env NCCL_SET_THREAD_NAME=1
    --env "NCCLNET_SAMPLER_OUT=$(realpath "$out")/profiles" --env "NCCLNET_SAMPLER_TAG=$name")
  return 0
}
subject() {  # NAME [--env VAR=VALUE ...]
  local name=$1 variant settings setting
  shift
  [[ " ${SUBJECTS:-$name} " == *" $name "* ]] && add_subject "$name" "$@"
  for variant in ${VARIANTS:-}; do
    [ "$(echo "$variant" | sed 's/^[^=]*=\([^:]*\):.*/\1/')" = "$name" ] || continue
    local more=()
    IFS=, read -ra settings <<<"${variant#*:}"
    for setting in "${settings[@]}"; do more+=(--env "$setting"); done
    add_subject "${variant%%=*}" "$@" "${more[@]}"
  done
  return 0
}
[ -e "$socket" ] && subject sdk-socket --env NCCL_NET_PLUGIN="$socket" --env NCCL_NET=sdk-socket
subject nccl-socket --env NCCL_NET_PLUGIN=none --env NCCL_NET=Socket
# NCCL's Socket at NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD: 4x4 (the
# fastest of those tried on the one-GPU host), and any nccl-socket-TxS that
# SUBJECTS names, for a sweep.
settings=(4x4)
for name in ${SUBJECTS:-}; do
  [[ $name =~ ^nccl-socket-([0-9]+)x([0-9]+)$ ]] && [ "$name" != nccl-socket-4x4 ] &&
    settings+=("${name#nccl-socket-}")
done
for setting in "${settings[@]}"; do
  subject "nccl-socket-$setting" --env NCCL_NET_PLUGIN=none --env NCCL_NET=Socket \
    --env NCCL_SOCKET_NTHREADS="${setting%x*}" --env NCCL_NSOCKS_PERTHREAD="${setting#*x}"
done
[ -e "$socket" ] && [ -e "$checker" ] && subject sdk-socket-checked --env NCCL_NET_PLUGIN="$checker" \
  --env NCCLNET_CHECK_PLUGIN="$socket" --env NCCL_NET=sdk-socket
[ -e "$ofi" ] && subject sdk-ofi --env NCCL_NET_PLUGIN="$ofi" --env NCCL_NET=sdk-ofi "${ofi_env[@]}"
# sdk-ofi at NCCLNET_OFI_ENDPOINTS=N: any sdk-ofi-eN that SUBJECTS names;
# sdk-ofi-eNp with NCCLNET_OFI_PROGRESS_THREAD=1 as well.
for name in ${SUBJECTS:-}; do
  [[ $name =~ ^sdk-ofi-e([0-9]+)(p?)$ ]] && [ -e "$ofi" ] &&
    subject "$name" --env NCCL_NET_PLUGIN="$ofi" --env NCCL_NET=sdk-ofi "${ofi_env[@]}" \
      --env NCCLNET_OFI_ENDPOINTS="${BASH_REMATCH[1]}" \
      --env NCCLNET_OFI_PROGRESS_THREAD="$([ -n "${BASH_REMATCH[2]}" ] && echo 1 || echo 0)"
done
[ -e "$ofi" ] && [ -e "$checker" ] && subject sdk-ofi-checked --env NCCL_NET_PLUGIN="$checker" \
  --env NCCLNET_CHECK_PLUGIN="$ofi" --env NCCL_NET=sdk-ofi "${ofi_env[@]}"
[ -e "$aws" ] && subject aws-ofi-nccl --env NCCL_NET_PLUGIN="$aws" --env NCCL_NET=Libfabric \
  --env "FI_PROVIDER=tcp;ofi_rxm" --env FI_TCP_IFACE=lo --env OFI_NCCL_EXCLUDE_TCP_IF=docker0 \
  --env OFI_NCCL_PROTOCOL=SENDRECV
[ -e "$ib" ] && subject sdk-ib --env NCCL_NET_PLUGIN="$ib" --env NCCL_NET=sdk-ib \
  --env NCCL_IBVERBS_LIB="$softverbs" --env NCCL_NET_GDR_LEVEL=LOC
[ -e "$ib" ] && [ -e "$checker" ] && subject sdk-ib-checked --env NCCL_NET_PLUGIN="$checker" \
  --env NCCLNET_CHECK_PLUGIN="$ib" --env NCCL_NET=sdk-ib \
  --env NCCL_IBVERBS_LIB="$softverbs" --env NCCL_NET_GDR_LEVEL=LOC
echo "nccl-driver ${args[*]}" >"$out/command.txt"
"$driver" "${args[@]}"
