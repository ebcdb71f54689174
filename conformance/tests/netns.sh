#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One plugin across two network namespaces, as across two nodes (CI's small
# run): the conformance subset of PROFILE with rank 0 and rank 1 in separate
# namespaces meeting at the rendezvous on the control veth; the report must
# show a world of 2 and, for sdk-socket and sdk-ofi, the device on the data
# veth (nd0; softverbs devices are reached through routes that only nd0
# carries, topology.sh). Then the fault
# PROFILES of scripts/netns/faults.sh (FAULTS_QUICK=1).
#   netns.sh KIND CONFORMANCE PLUGIN PROFILE JSON BUILD_DIR [FAULT PROFILES...]
# Exit 77 (ctest SKIP_RETURN_CODE) where namespaces cannot be created.
set -u
kind=$1 bin=$2 plugin=$3 profile=$4 json=$5 build=$6
shift 6
root=$(cd "$(dirname "$0")/../.." && pwd)
run=$root/scripts/netns/run.sh

for tool in ip nft tc; do
  if ! command -v "$tool" >/dev/null; then
    echo "netns.sh: SKIP: '$tool' is not installed (iproute2, nftables: scripts/install-deps.sh)"
    exit 77
  fi
done
rm -f "$json"
"$run" --timeout 240 -- "$bin" --plugin "$plugin" --profile "$profile" --rank '{rank}' --size 2 \
  --rendezvous '{rendezvous}' --json "$json"
rc=$?
[ "$rc" = 77 ] && exit 77
if [ "$rc" != 0 ]; then
  echo "netns.sh: the conformance run across namespaces failed (exit $rc)"
  exit 1
fi
if ! grep -q '"worldSize": *2' "$json"; then
  echo "netns.sh: $json does not record a world of 2 processes"
  exit 1
fi
if [ "$kind" != ib ] && ! grep -q '"name": *"[^"]*nd0' "$json"; then
  echo "netns.sh: $json names no device on the data veth nd0:"
  grep '"name"' "$json" | head -n 5
  exit 1
fi
echo "netns.sh: conformance across namespaces passed"
[ $# -gt 0 ] || exit 0
FAULTS_QUICK=1 "$root/scripts/netns/faults.sh" "$kind" "$build" "$@"
