#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The interop matrix on one GPU machine (docs/interop.md), from a stage made
# by scripts/gpu/stage.sh plus scripts/interop/build.sh (STAGE/interop):
#   suite       ncclnet-conformance against each third-party plugin:
#               aws-ofi-nccl on tcp;ofi_rxm and tcp, every exported ABI on
#               the CPU, and --device cuda (v11 Transport and GpuMemory);
#               NCCL's example plugin, every exported ABI
#   functional  aws-ofi-nccl's functional tests (mpirun -np 2, both ranks on
#               GPU 0) against sdk-socket, sdk-ofi, sdk-ib (softverbs) and
#               aws-ofi-nccl itself
# Every cell runs under a timeout, in parallel lanes (sdk-ib's functional
# tests beside the long suite runs only). Writes
# OUT/interop.tsv (one line per cell) and OUT/interop.json (cells plus every
# scenario that did not pass, with its time).
#
#   scripts/interop/run_matrix.sh STAGE_DIR OUT_DIR
# Knobs: CELLS (regex over cell names, default all), SUITE_TIMEOUT (600),
# FUNC_TIMEOUT (90 s per functional test; the longest passing one took 35 s), FUNC_TESTS (the list below).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
stage=$(realpath "${1:?usage: run_matrix.sh STAGE_DIR OUT_DIR}")
out=$(realpath -m "${2:?usage: run_matrix.sh STAGE_DIR OUT_DIR}")
mkdir -p "$out"
CELLS=${CELLS:-.}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-600}
FUNC_TIMEOUT=${FUNC_TIMEOUT:-90}
FUNC_TESTS=${FUNC_TESTS:-"nccl_connection ring nccl_message_transfer reuse_listen_comm grouped_recv eager_multirecv inflight_close"}
third=$stage/interop
conformance=$stage/conformance/ncclnet-conformance
aws=$third/aws-ofi-nccl/lib/libnccl-net-ofi.so
example=$third/nccl-example/lib/libnccl-net-example.so
softverbs=$stage/sdk/testing/devices/softverbs/libsoftverbs.so
tsv=$out/interop.tsv
printf 'cell\tkind\tsubject\tprovider\tabi\tdevice\ttest\tresult\tseconds\tlog\n' >"$tsv"

record() {  # CELL KIND SUBJECT PROVIDER ABI DEVICE TEST RESULT SECONDS LOG
  local IFS=$'\t'
  # One write per line: lanes append concurrently.
  echo "$*" >>"$tsv"
}

# A conformance run: NAME PLUGIN PROFILE PROVIDER DEVICE [ARGS...]
suite_cell() {
  local name=$1 plugin=$2 profile=$3 provider=$4 device=$5
  shift 5
  [[ $name =~ $CELLS ]] || return 0
  local log=$out/$name.log json=$out/$name.json start=$SECONDS rc result
  if [ ! -e "$plugin" ]; then
    record "$name" suite "$(basename "$plugin")" "$provider" - "$device" - notbuilt 0 -
    return 0
  fi
  local env=()
  [ "$provider" != - ] && env+=("FI_PROVIDER=$provider")
  # Line-buffered and verbose: a run cut by its timeout still shows each
  # finished scenario with its time (the JSON report is written at the end).
  timeout -k 10 "$SUITE_TIMEOUT" env "${env[@]}" stdbuf -oL "$conformance" --plugin "$plugin" \
    --profile "$profile" --device "$device" --json "$json" --no-progress --verbose "$@" >"$log" 2>&1
  rc=$?
  case $rc in
    0) result=pass ;;
    124 | 137) result=timeout ;;
    *) result=fail ;;
  esac
  local abi=all
  [[ " $* " == *" --abi v11 "* ]] && abi=v11
  # The summary line, or for a run cut short how far it got.
  local said
  said=$(grep -E '^(PASS|FAIL): |^\[ *[0-9]+/[0-9]+\]' "$log" | tail -1 | cut -c1-160)
  record "$name" suite "$(basename "$plugin")" "$provider" "$abi" "$device" "${said:--}" \
    "$result" $((SECONDS - start)) "$(basename "$log")"
}

# One functional test against one plugin: SUBJECT PLUGIN TEST [VAR=VALUE ...]
functional_cell() {
  local subject=$1 plugin=$2 test=$3
  shift 3
  local name=func-$subject-$test
  [[ $name =~ $CELLS ]] || return 0
  local bin=$third/aws-ofi-nccl/bin/$test log=$out/$name.log start=$SECONDS rc result
  if [ ! -x "$bin" ] || [ ! -e "$plugin" ]; then
    record "$name" functional "$subject" - v11 cuda "$test" notbuilt 0 -
    return 0
  fi
  local xs=(-x NCCLNET_INTEROP_PLUGIN="$plugin" -x LD_LIBRARY_PATH -x NCCL_DEBUG=WARN)
  for kv in "$@"; do xs+=(-x "$kv"); done
  # Both ranks here; shared memory between them; no launcher network.
  timeout -k 10 "$FUNC_TIMEOUT" mpirun --allow-run-as-root --oversubscribe -np 2 \
    --mca pml ob1 --mca btl self,vader --mca oob_tcp_if_include lo "${xs[@]}" "$bin" \
    >"$log" 2>&1
  rc=$?
  case $rc in
    0) result=pass ;;
    124 | 137) result=timeout ;;
    *) result=fail ;;
  esac
  record "$name" functional "$subject" - v11 cuda "$test" "$result" $((SECONDS - start)) \
    "$(basename "$log")"
}

functional_lane() {  # SUBJECT PLUGIN [VAR=VALUE ...]
  local subject=$1 plugin=$2 t
  shift 2
  for t in $FUNC_TESTS; do functional_cell "$subject" "$plugin" "$t" "$@"; done
}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ofi_env=(FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo NCCLNET_OFI_DOMAINS=lo)
aws_env=(FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo OFI_NCCL_EXCLUDE_TCP_IF=docker0)

# The long pole first: our suite through every ABI of aws-ofi-nccl, one
# lane per provider (about 8 minutes each on 16 cores).
lanes=()
for provider in "tcp;ofi_rxm" tcp; do
  tag=${provider//;/-}
  suite_cell "suite-aws-ofi-nccl-$tag-cpu" "$aws" "$here/aws-ofi-nccl.yaml" "$provider" cpu &
  lanes+=($!)
done
# Then sdk-ib's functional tests without other MPI jobs beside them:
# softverbs' link timers are wall-clock, and with every lane at once on the
# GPU machine its connections timed out once (grouped_recv and
# reuse_listen_comm, which passed in the run before; ctest runs sdk-ib's
# conformance alone for the same reason).
functional_lane sdk-ib "$stage/plugins/ib/libnccl-net-sdk-ib.so" NCCL_IBVERBS_LIB="$softverbs"
for provider in "tcp;ofi_rxm" tcp; do
  tag=${provider//;/-}
  suite_cell "suite-aws-ofi-nccl-$tag-cuda" "$aws" "$here/aws-ofi-nccl.yaml" "$provider" cuda \
    --abi v11 --gtest_filter='*/Transport.*:*/GpuMemory.*' &
  lanes+=($!)
done
suite_cell suite-nccl-example-cpu "$example" "$here/nccl-example.yaml" - cpu &
lanes+=($!)
functional_lane sdk-socket "$stage/plugins/socket/libnccl-net-sdk-socket.so" NCCL_SOCKET_IFNAME=lo &
lanes+=($!)
functional_lane sdk-ofi "$stage/plugins/ofi/libnccl-net-sdk-ofi.so" "${ofi_env[@]}" &
lanes+=($!)
functional_lane aws-ofi-nccl "$aws" "${aws_env[@]}" &
lanes+=($!)
wait "${lanes[@]}"

python3 - "$out" <<'PY'
import csv, glob, json, os, sys
out = sys.argv[1]
cells = list(csv.DictReader(open(os.path.join(out, "interop.tsv")), delimiter="\t"))
for c in cells:
    path = os.path.join(out, c["cell"] + ".json")
    if c["kind"] != "suite" or not os.path.exists(path):
        continue
    r = json.load(open(path))
    c["summary"] = r.get("summary", {})
    c["plugin"] = {k: r["plugin"].get(k) for k in ("name", "loaded", "exportedVersions", "selectedVersion", "error") if k in r["plugin"]}
    c["scenarios"] = [{k: s.get(k) for k in ("scenario", "abi", "verdict", "seconds", "reason")}
                      for s in r["scenarios"] if s["verdict"] not in ("pass",)]
    c["slowest"] = sorted(({"scenario": s["scenario"], "abi": s["abi"], "seconds": s["seconds"]}
                           for s in r["scenarios"]), key=lambda s: -s["seconds"])[:15]
json.dump({"cells": cells}, open(os.path.join(out, "interop.json"), "w"), indent=1)
for c in sorted(cells, key=lambda c: c["cell"]):
    print("%-45s %-8s %5ss  %s" % (c["cell"], c["result"], c["seconds"], c["test"] if c["kind"] == "suite" else ""))
PY
! grep -qP '\t(fail|timeout)\t' "$tsv"
