#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole GPU run, on a machine with one GPU or more, from a tree staged by
# scripts/gpu/stage.sh. Writes logs, summary.txt and report.json to $OUT.
#
#   scripts/gpu/run_all.sh STAGE_DIR
#
# PARTS picks what runs (default "tests transport nccl compare"):
#   tests      the GPU unit tests (ctest -L gpu: CUDA driver loader, softverbs
#              and sdk-ib on GPU memory, the reference transport's CUDA device
#              peer), with NCCLNET_REQUIRE_GPU=1 so that nothing skips for want
#              of a GPU
#   transport  ncclnet-conformance's GPU catalogue for every plugin: the
#              Transport scenarios with --device cuda (host bounce for all,
#              GPU memory where the plugin advertises NCCL_PTR_CUDA) and the
#              GpuMemory scenarios; counts of CUDA and DMA-BUF registrations
#   nccl       sdk-socket in UNPACK mode, sdk-ofi and sdk-ib inside real NCCL
#              (sdk-ib also with GPUDirect through softverbs' DMA-BUF), every
#              result checked
#   gin        NCCL's device API over sdk-socket's GIN table: nccl-driver's
#              gin-alltoall (GPU-initiated puts and signals, NCCL's GIN proxy
#              calling the plugin), every result checked (not in the default
#              PARTS)
#   rma        ncclnet-conformance's Rma area against sdk-socket's RMA table,
#              in host memory and with --device cuda (windows and signals in
#              GPU memory; not in the default PARTS)
#   compare    every plugin, the checker around each bundled plugin and
#              NCCL's Socket (default and 4x4) inside NCCL in alternating
#              rounds, MPS on (nccl_compare.sh; SUBJECTS, ROUNDS, MAX_BYTES
#              pick; 5 rounds to 1 GiB take about 1 minute per subject, so
#              one call fits about 8 subjects; SAMPLER=1 adds a CPU profile
#              of every rank, compare/profiles/, tools/ncclnet-sampler)
#   check      ncclnet-check wrapped around every bundled plugin (--device cuda)
#              and aws-ofi-nccl from STAGE_DIR/interop (CPU and cuda), driven
#              by the conformance suite; a violation fails the run (not in
#              the default PARTS)
#   e2e        ncclnet-conformance's Nccl tier for every bundled plugin: real
#              NCCL jobs, one process per rank with its own NCCL_HOSTID, the
#              checker around the plugin (E2E_PLUGINS picks among sdk-socket
#              sdk-ofi sdk-ib aws-ofi-nccl, the last from STAGE_DIR/interop;
#              E2E_FILTER narrows the scenarios, a gtest
#              pattern after "*/Nccl."; not in the default PARTS)
#   truth      what real NCCL does with every defect conf-tcp can plant
#              (scripts/gpu/ground_truth.sh, TRUTH_DEFECTS to pick some;
#              not in the default PARTS)
#   thresholds where real NCCL starts to fail for each rule with a threshold
#              (scripts/gpu/thresholds.sh; not in the default PARTS)
#   interop    the interop matrix (scripts/interop/run_matrix.sh, one GPU):
#              our suite against aws-ofi-nccl and NCCL's example plugin,
#              aws-ofi-nccl's functional tests against our plugins; needs
#              STAGE_DIR/interop from scripts/interop/build.sh (not in the
#              default PARTS; docs/interop.md)
#   subjects   NCCL's own transports built as plugins, one folder per NCCL
#              release (scripts/interop/nccl_transports/build.sh SRC@TAG
#              STAGE_DIR/interop/nccl-transports/TAG; IB on softverbs): the
#              whole catalogue with --device cuda, the Nccl tier included
#              (SUBJECT_FILTER narrows it, a gtest pattern; not in the
#              default PARTS; docs/interop.md)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
stage=$(realpath "${1:-$root/.gpu-stage}")
PARTS=${PARTS:-"tests transport nccl compare"}
OUT=${OUT:-$(mktemp -d /tmp/ncclnet-gpu.XXXXXX)}
mkdir -p "$OUT"
export OUT
summary=$OUT/summary.txt
: >>"$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }
want() { [[ " $PARTS " == *" $1 "* ]]; }

# The stage's ctest files name the trees where they lie here.
"$here/relocate.sh" "$stage" || status=1
build=$stage
# shellcheck source=scripts/bundled.sh
. "$root/scripts/bundled.sh"
mapfile -t bundled < <(bundled_plugins "$build")
# sdk-socket's UNPACK mode, certified here only: the CUDA kernels (NCCL's
# own in real jobs) copy its bounce pages into place.
unpack="sdk-socket-unpack $build/plugins/socket/libnccl-net-sdk-socket.so $root/conformance/profiles/sdk-socket-unpack.yaml"
export LD_LIBRARY_PATH="$stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
softverbs=$build/sdk/testing/devices/softverbs/libsoftverbs.so
# The NCCL that nccl-driver runs: PyTorch's wheel (the newest here) unless
# NCCL_LIB names a folder; else whatever the loader finds.
NCCL_LIB=${NCCL_LIB:-$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0] + "/lib")' 2>/dev/null)}
[ -n "$NCCL_LIB" ] && export LD_LIBRARY_PATH="$NCCL_LIB:$LD_LIBRARY_PATH"

{
  echo "== machine"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  ldconfig -p | grep -E "libnccl.so|libfabric.so|libibverbs.so" | head -5
  echo "nccl-driver: $("$build/tools/nccl-driver/nccl-driver" --probe 2>&1 | tr "\n" " ")"
} 2>&1 | tee -a "$summary"

if want tests; then
  note "== GPU unit tests"
  if [ -e "$stage/CTestTestfile.cmake" ]; then
    if NCCLNET_REQUIRE_GPU=1 timeout 500 ctest --test-dir "$stage" --output-on-failure -L gpu \
        >"$OUT/gpu_ctest.log" 2>&1; then
      note "gpu ctest: ok ($(grep -Eo '[0-9]+% tests passed.*' "$OUT/gpu_ctest.log" | tail -1))"
    else
      note "gpu ctest: FAILED"
      grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu_ctest.log" | tail -15 >>"$summary"
      status=1
    fi
  else
    note "gpu ctest: the stage has no ctest files ($stage)"
    status=1
  fi
fi

if want transport; then
  note "== GPU conformance catalogue (--device cuda)"
  conformance=$build/conformance/ncclnet-conformance
  certify() {  # NAME PLUGIN PROFILE_FILE [VAR=VALUE ...]
    local name=$1 plugin=$2 profile=$3
    shift 3
    if [ ! -e "$plugin" ]; then
      note "$name: plugin not built, skipped"
      return
    fi
    local json=$OUT/conformance-$name.json
    rm -f "$json"
    timeout 500 env "$@" "$conformance" --plugin "$plugin" --profile "$profile" \
      --abi v11 --device cuda --gtest_filter='*/Transport.*:*/GpuMemory.*' --json "$json" \
      >"$OUT/conformance-$name.log" 2>&1 || status=1
    # The suite's own result line, what did not pass and the counters (a
    # run cut short wrote no report, which --summary says).
    "$conformance" --summary --verbose "$json" 2>&1 | tee -a "$summary"
  }
  for line in "${bundled[@]}" "$unpack"; do
    read -ra entry <<<"$line"
    certify "${entry[@]}"
  done
  note "== reference transport CUDA tests"
  if OUT=$OUT/cuda_transport "$here/cuda_transport.sh" "$build" >"$OUT/cuda_transport.txt" 2>&1; then
    note "cuda transport: ok"
  else
    note "cuda transport: FAILED"
    tail -20 "$OUT/cuda_transport.txt" >>"$summary"
    status=1
  fi
fi

if want check; then
  note "== ncclnet-check around every plugin (GPU catalogue, --device cuda; aws-ofi-nccl also on the CPU)"
  conformance=$build/conformance/ncclnet-conformance
  checker=$build/tools/ncclnet-check/libnccl-net-sdk-check.so
  # NAME INNER_PLUGIN DEVICE [VAR=VALUE ...]: the suite drives the checker,
  # which wraps INNER and aborts a rank at its first violation, so the run
  # passes only with none (profile and bounds as in ctest's
  # ncclnet_check_wraps_*).
  checked() {
    local name=$1 inner=$2 device=$3
    shift 3
    if [ ! -e "$inner" ]; then
      note "check-$name: plugin not built or staged, skipped"
      return
    fi
    local args=(--abi v11 --device "$device")
    [ "$device" = cuda ] && args+=(--gtest_filter='*/Transport.*:*/GpuMemory.*')
    local log=$OUT/conformance-check-$name.log
    if timeout 500 env NCCLNET_CHECK_PLUGIN="$inner" NCCLNET_CHECK_ABORT=1 NCCLNET_CHECK_BLOCK_US=5000000 \
        "$@" "$conformance" --plugin "$checker" --profile "$root/tools/ncclnet-check/tests/checked.yaml" \
        "${args[@]}" --no-progress --json "$OUT/conformance-check-$name.json" >"$log" 2>&1; then
      note "check-$name: $(grep -E "^(PASS|FAIL)" "$log" | tail -1)"
    else
      note "check-$name: FAILED: $(grep -E "^(PASS|FAIL)" "$log" | tail -1)"
      grep -E "ncclnet-check|^(FAIL|     )" "$log" | head -10 >>"$summary"
      status=1
    fi
  }
  # Each plugin under the env of the profile it is certified with.
  for line in "${bundled[@]}" "$unpack"; do
    read -ra entry <<<"$line"
    mapfile -t profile_env < <("$conformance" --profile "${entry[2]}" --print-env)
    checked "${entry[0]}-cuda" "${entry[1]}" cuda "${profile_env[@]}" "${entry[@]:3}"
  done
  aws=$stage/interop/aws-ofi-nccl/lib/libnccl-net-ofi.so
  aws_env=(FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo OFI_NCCL_EXCLUDE_TCP_IF=docker0)
  checked aws-ofi-nccl-cpu "$aws" cpu "${aws_env[@]}"
  checked aws-ofi-nccl-cuda "$aws" cuda "${aws_env[@]}"
fi

# One plugin in NCCL: nccl-driver runs 2 ranks, one process each with its
# own NCCL_HOSTID, checks every result and proves from NCCL's log that the
# plugin carried every channel; GREP adds a line the ranks' logs must hold.
driver_args=()  # more nccl-driver options for plugin_run
plugin_run() {  # NAME PLUGIN_SO NCCL_NET_NAME [VAR=VALUE ...]
  local name=$1 so=$2 net=$3
  shift 3
  if [ ! -e "$so" ]; then
    note "$name: not built, skipped"
    return
  fi
  local log=$OUT/nccl-$name.log
  if timeout 300 env NCCL_SOCKET_IFNAME=lo NCCL_NET_PLUGIN_REF_COUNT=1 NCCL_NET_PLUGIN="$so" \
      NCCL_NET="$net" "$@" "$build/tools/nccl-driver/nccl-driver" --max-bytes "${MAX_BYTES:-64M}" \
      --iters 5 --run-dir "$OUT/nccl-$name" "${driver_args[@]}" >"$log" 2>&1; then
    note "$name: $(grep -E "^PASS " "$log" | head -1)"
  else
    note "$name: FAILED: $(grep -E "^FAIL " "$log" | head -1)"
    status=1
  fi
  awk '$1=="RESULT" && ($2=="allreduce" || $2=="sendrecv" || $2=="gin-alltoall") {print}' "$log" |
    tail -4 >>"$summary"
}

if want nccl; then
  note "== every plugin inside real NCCL"
  # UNPACK: NCCL's own receive kernels unpack sdk-socket's bounce pages;
  # only SIMPLE ring and tree kernels do (no LL, LL128 or PAT).
  plugin_run sdk-socket-unpack "$build/plugins/socket/libnccl-net-sdk-socket.so" sdk-socket \
    NCCLNET_SOCKET_UNPACK=1 NCCL_PROTO=Simple NCCL_PAT_ENABLE=0
  if ! grep -h -m1 "NCCL_NET_DEVICE_UNPACK net plugin version 7" "$OUT"/nccl-sdk-socket-unpack/*.log \
      >>"$summary"; then
    note "sdk-socket-unpack: NCCL did not take the UNPACK device"
    status=1
  fi
  plugin_run sdk-ofi "$build/plugins/ofi/libnccl-net-sdk-ofi.so" sdk-ofi \
    FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo NCCLNET_OFI_DOMAINS=lo
  plugin_run sdk-ib "$build/plugins/ib/libnccl-net-sdk-ib.so" sdk-ib \
    NCCL_IBVERBS_LIB="$softverbs" NCCL_NET_GDR_LEVEL=LOC
  # GPUDirect: softverbs has no PCI path, so NCCL is told the NIC is close
  # enough (SYS); receives land in GPU memory through DMA-BUF registrations.
  plugin_run sdk-ib-gdr "$build/plugins/ib/libnccl-net-sdk-ib.so" sdk-ib \
    NCCL_IBVERBS_LIB="$softverbs" NCCL_NET_GDR_LEVEL=SYS NCCL_NET_GDR_READ=1
  if ! grep -q "GPUDirect RDMA" "$OUT/nccl-sdk-ib-gdr.log"; then
    note "sdk-ib-gdr: NCCL did not use GPUDirect RDMA"
    status=1
  fi
fi

if want gin; then
  note "== GIN: NCCL's device API through sdk-socket's GIN table"
  # Two hosts to NCCL (one NCCL_HOSTID per rank), so the device
  # communicator needs GIN and NCCL 2.28 takes ncclGinPlugin_v11 from the
  # net plugin's library (src/gin/gin_host.cc ncclGinConnectOnce).
  driver_args=(--ops gin-alltoall --mps --min-bytes 64 --max-bytes "${GIN_MAX_BYTES:-16M}")
  plugin_run sdk-socket-gin "$build/plugins/socket/libnccl-net-sdk-socket.so" sdk-socket \
    NCCL_DEBUG_SUBSYS=INIT,NET
  driver_args=()
  # NCCL's word that the proxy GIN ran, and the plugin's that its mesh did.
  grep -h -m2 -E "GIN|RMA mesh" "$OUT"/nccl-sdk-socket-gin/*.log >>"$summary" ||
    note "sdk-socket-gin: no line of NCCL or the plugin about GIN"
fi

if want rma; then
  note "== Rma area: sdk-socket's RMA table, host memory and GPU memory"
  for device in cpu cuda; do
    json=$OUT/conformance-rma-$device.json
    rm -f "$json"
    timeout 400 env NCCL_SOCKET_IFNAME=lo "$build/conformance/ncclnet-conformance" \
      --plugin "$build/plugins/socket/libnccl-net-sdk-socket.so" \
      --profile "$root/conformance/profiles/sdk-socket.yaml" --device "$device" \
      --gtest_filter='*/Rma.*' --json "$json" >"$OUT/conformance-rma-$device.log" 2>&1 || status=1
    # (Every older net table's run of the area is notrun by design.)
    "$build/conformance/ncclnet-conformance" --summary --verbose "$json" 2>&1 |
      grep -v "RMA scenarios run once" | tee -a "$summary"
  done
fi

if want compare; then
  note "== inside real NCCL, side by side (scripts/gpu/nccl_compare.sh, MPS on)"
  if timeout "${COMPARE_TIMEOUT:-580}" "$here/nccl_compare.sh" "$build" "$OUT/compare" >"$OUT/compare.txt" 2>&1; then
    note "compare: every job passed"
  else
    note "compare: FAILED"
    status=1
  fi
  grep -vE "^(RESULT|PASS) " "$OUT/compare.txt" >>"$summary"
fi

if want e2e; then
  note "== Nccl tier: real NCCL jobs over each plugin, checker around it"
  tier() {  # NAME PLUGIN PROFILE_FILE [VAR=VALUE ...]
    local name=$1 plugin=$2 profile=$3
    shift 3
    if [ ! -e "$plugin" ]; then
      note "$name: not built or staged, skipped"
      return
    fi
    local json=$OUT/e2e-$name.json
    timeout 590 env NCCL_SOCKET_IFNAME=lo "$@" "$build/conformance/ncclnet-conformance" \
      --plugin "$plugin" --profile "$profile" --abi v11 \
      --gtest_filter="*/Nccl.${E2E_FILTER:-*}" --json "$json" >"$OUT/e2e-$name.log" 2>&1 || status=1
    note "$name: $(grep -E "^(PASS|FAIL)" "$OUT/e2e-$name.log" | tail -1)"
    python3 - "$json" <<'PY' >>"$summary" 2>&1 || true
import json, sys
for s in json.load(open(sys.argv[1]))["scenarios"]:
    if s.get("abi") != 11: continue
    text = s.get("reason") or "; ".join(s.get("notes", []))
    print("   %-7s %-24s %5.1f s  %s" % (s["verdict"], s["scenario"], s.get("seconds", 0), text[:220]))
PY
  }
  for p in ${E2E_PLUGINS:-$(printf '%s\n' "${bundled[@]}" | cut -d' ' -f1) aws-ofi-nccl}; do
    case $p in
      # From scripts/interop/build.sh; same provider as sdk-ofi.
      aws-ofi-nccl) tier aws-ofi-nccl "$stage/interop/aws-ofi-nccl/lib/libnccl-net-ofi.so" \
        "$root/scripts/interop/aws-ofi-nccl.yaml" FI_PROVIDER="tcp;ofi_rxm" OFI_NCCL_PROTOCOL=SENDRECV ;;
      *) for line in "${bundled[@]}"; do
           read -ra entry <<<"$line"
           if [ "${entry[0]}" = "$p" ]; then tier "${entry[@]}"; fi
         done ;;
    esac
  done
fi

if want truth; then
  note "== ground truth: real NCCL over each defect conf-tcp plants"
  "$here/ground_truth.sh" "$build" "$OUT/truth" ${TRUTH_DEFECTS:-} >/dev/null 2>&1
  cat "$OUT/truth/truth.txt" >>"$summary"
fi

if want thresholds; then
  note "== thresholds: real NCCL on either side of each rule's bound"
  "$here/thresholds.sh" "$build" "$OUT/thresholds" >/dev/null 2>&1
  cat "$OUT/thresholds/thresholds.txt" >>"$summary"
fi

if want subjects; then
  note "== NCCL's own transports as subjects (whole catalogue, --device cuda)"
  # subject DIR NAME: the library DIR/libnccl-net-NAME.so (built from the
  # release DIR/NCCL_VERSION names), the IB one on softverbs.
  subject() {
    local dir=$1 name=$2 lib=$1/libnccl-net-$2.so label
    label=$(basename "$dir")-$name
    [ -e "$lib" ] || return 0
    local run=(env NCCL_SOCKET_IFNAME=lo) profile=()
    if [ "$name" = nccl-ib ]; then
      run=("$root/scripts/interop/nccl_transports/on_softverbs.sh" "$softverbs")
      profile=(--profile "$root/scripts/interop/nccl_transports/nccl-ib-softverbs.yaml")
    fi
    timeout "${SUBJECT_TIMEOUT:-560}" "${run[@]}" "$build/conformance/ncclnet-conformance" --plugin "$lib" \
      "${profile[@]}" --device cuda --gtest_filter="${SUBJECT_FILTER:-*}" \
      --json "$OUT/subject-$label.json" >"$OUT/subject-$label.log" 2>&1
    note "$label ($(grep "nccl-${name#nccl-} " "$dir/NCCL_VERSION" | cut -d' ' -f3)): $(grep -E "^(PASS|FAIL)" "$OUT/subject-$label.log" | tail -1)"
    grep -E "^(FAIL|WARN) " "$OUT/subject-$label.log" >>"$summary"
  }
  # One folder per NCCL release (scripts/interop/nccl_transports/build.sh
  # SRC@TAG STAGE_DIR/interop/nccl-transports/TAG).
  for dir in "$stage"/interop/nccl-transports/*/; do
    for name in nccl-socket nccl-ib; do subject "${dir%/}" "$name"; done
  done
fi

if want interop; then
  note "== interop matrix (docs/interop.md)"
  if [ ! -d "$stage/interop" ]; then
    note "interop: the stage has no interop/ (scripts/interop/build.sh makes it)"
    status=1
  elif "$root/scripts/interop/run_matrix.sh" "$stage" "$OUT/interop" >"$OUT/interop.txt" 2>&1; then
    note "interop: every cell green"
  else
    note "interop: red cells (each explained in docs/interop.md, or new)"
    status=1
  fi
  cat "$OUT/interop.txt" >>"$summary"
fi

# The machine-readable report: every conformance run and the summary lines.
python3 - "$OUT" <<'PY' || true
import glob, json, os, sys
out = sys.argv[1]
report = {"conformance": {}, "summary": open(os.path.join(out, "summary.txt")).read().splitlines()}
for path in sorted(glob.glob(os.path.join(out, "conformance-*.json"))):
    r = json.load(open(path))
    name = os.path.basename(path)[len("conformance-"):-len(".json")]
    report["conformance"][name] = {
        "result": r["result"],
        "counts": {v: r["summary"][v] for v in ("pass", "fail", "notrun")},
        "counters": r["summary"].get("counters", {}),
        "notrun": {s["scenario"]: s.get("reason", "") for s in r["scenarios"] if s["verdict"] == "notrun"},
    }
json.dump(report, open(os.path.join(out, "report.json"), "w"), indent=1)
PY
note "== done, status $status"
exit $status
