#!/usr/bin/env bash
# The main job: install what is missing, build, then certify every bundled
# plugin with ncclnet-conformance on this machine (loopback; sdk-ib through
# the software verbs device), all exported ABI versions. Reports (JSON and
# JUnit) land in $BUILD_DIR/reports; the summary at the end is the suite's
# own line for each. Exit status: 0 only if every plugin passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$@"

conformance=$build/conformance/ncclnet-conformance
reports=$build/reports
mkdir -p "$reports"
written=()
unbuilt=()
status=0

certify() {  # NAME PLUGIN_SO [VAR=VALUE ...]
  local name=$1 so=$2
  shift 2
  if [ ! -e "$so" ]; then
    unbuilt+=("$name: not built (see the configure summary)")
    return
  fi
  echo
  echo "=== $name"
  env "$@" "$conformance" --plugin "$so" --profile "$root/conformance/profiles/$name.yaml" \
    --json "$reports/$name.json" --junit "$reports/$name.xml" || status=1
  written+=("$reports/$name.json")
}

if [ ! -x "$conformance" ]; then
  echo "ncclnet-conformance was not built (it needs yaml-cpp and GoogleTest)" >&2
  exit 1
fi
certify sdk-socket "$build/plugins/socket/libnccl-net-sdk-socket.so" NCCL_SOCKET_IFNAME=lo
certify sdk-ofi "$build/plugins/ofi/libnccl-net-sdk-ofi.so" \
  FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo NCCLNET_OFI_DOMAINS=lo
softverbs=$(ls "$build"/sdk/testing/devices/softverbs/libsoftverbs.so 2>/dev/null || true)
certify sdk-ib-softverbs "$build/plugins/ib/libnccl-net-sdk-ib.so" NCCL_IBVERBS_LIB="$softverbs"

echo
echo "=== summary"
if [ ${#written[@]} -gt 0 ]; then "$conformance" --summary "${written[@]}" || status=1; fi
if [ ${#unbuilt[@]} -gt 0 ]; then printf '%s\n' "${unbuilt[@]}"; fi
exit $status
