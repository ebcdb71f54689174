#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CPU smoke of the NCCL transport subjects (docs/interop.md, "NCCL's own
# transports as subjects"): build.sh compiles NCCL's Socket transport, and
# NCCL's IB transport when softverbs is built, from a local NCCL source; a few
# catalogue scenarios that NCCL's code passes then run under --strict, so a
# change to the suite, the glue or softverbs that breaks them shows at once.
#
#   scripts/interop/nccl_transports/smoke.sh BUILD_DIR [NCCL_SRC_OR_GIT[@TAG]]
#
# The source (second argument, else $NCCLNET_NCCL_SOURCE) is what build.sh
# takes: an NCCL tree, or a git directory and a tag. CI has no network and no
# NCCL source, so without one the smoke exits 77, which ctest shows as skipped
# (SKIP_RETURN_CODE); likewise without the CUDA headers NCCL's files include.
# A source that is named but missing is an error, not a skip.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:?usage: smoke.sh BUILD_DIR [NCCL_SRC_OR_GIT[@TAG]]}")
spec=${2:-${NCCLNET_NCCL_SOURCE:-}}
skip() { echo "nccl transports smoke: SKIP: $*"; exit 77; }
fail() { echo "nccl transports smoke: FAIL: $*" >&2; exit 1; }

[ -n "$spec" ] || skip "no NCCL source: configure with -DNCCLNET_NCCL_SOURCE=NCCL_SRC_OR_GIT[@TAG]" \
  "or set it in the environment (an NCCL tree, or a git directory and a tag)"
[ -e "${spec%@*}" ] || fail "NCCLNET_NCCL_SOURCE=$spec: ${spec%@*} does not exist"
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -f "$cuda/include/cuda_runtime_api.h" ] ||
  skip "no CUDA headers in $cuda/include (NCCL's sources include them; set CUDA_HOME)"
conformance=$build/conformance/ncclnet-conformance
[ -x "$conformance" ] || fail "$conformance is not built"
softverbs=$build/sdk/testing/devices/softverbs/libsoftverbs.so
subjects="socket"
[ -f "$softverbs" ] && subjects="socket ib"

# Under the build folder, so a second run reuses the extracted tree and objects.
export NCCL_SUBJECTS_WORK=$build/nccl-subjects
out=$NCCL_SUBJECTS_WORK/smoke-lib
SUBJECTS=$subjects "$here/build.sh" "$spec" "$out" || fail "build.sh $spec failed"

# run SUBJECT FILTER [WRAPPER...]: the scenarios of FILTER through ABI v11, every
# one a pass (--strict: a warning or NotRun fails too).
run() {
  local subject=$1 filter=$2
  shift 2
  local log=$NCCL_SUBJECTS_WORK/smoke-$subject.log
  if ! "$@" "$conformance" --plugin "$out/libnccl-net-nccl-$subject.so" --abi v11 --strict \
    --no-progress --gtest_filter="$filter" >"$log" 2>&1; then
    cat "$log" >&2
    fail "nccl-$subject: a scenario did not pass (log: $log)"
  fi
  echo "nccl transports smoke: nccl-$subject: $(grep '^PASS:' "$log")"
}

# Loading, connecting, data both ways and a ring on 4 channels; the
# truncation check is one NCCL's Socket keeps (ncclNetSocketTest).
run socket "Load.ExportsVersionedTables:Load.NameIsSetAndConsistent:Properties.DevicesStable:\
Connect.ConnectDoesNotBlock:Connect.AcceptDoesNotBlock:Data.PostingOrder:Data.RecvLargerThanSend:\
Data.TruncationIsAnError:Data.BothDirectionsAtOnce:Transport.RingSimpleFourChannels" \
  env NCCL_SOCKET_IFNAME=lo
if [[ $subjects == *ib* ]]; then
  run ib "Load.*:Properties.DevicesStable:Connect.ConnectDoesNotBlock:Data.PostingOrder:\
Data.RecvLargerThanSend:Data.BothDirectionsAtOnce:Transport.RingSimpleFourChannels" \
    "$here/on_softverbs.sh" "$softverbs"
else
  echo "nccl transports smoke: nccl-ib not run: softverbs is not built"
fi
