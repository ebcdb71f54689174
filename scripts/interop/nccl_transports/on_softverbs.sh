#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs COMMAND with NCCL's IB transport (the nccl-ib subject of build.sh) on
# softverbs, our software RoCE v2 device, on a host without an RDMA device:
#
#   scripts/interop/nccl_transports/on_softverbs.sh LIBSOFTVERBS COMMAND [ARG...]
#   e.g. ... on_softverbs.sh build/sdk/testing/devices/softverbs/libsoftverbs.so \
#          build/conformance/ncclnet-conformance --plugin OUT/libnccl-net-nccl-ib.so --abi v11
#
# What it sets, and why (docs/interop.md, "NCCL IB on softverbs"):
#   LD_LIBRARY_PATH  a folder whose libibverbs.so is LIBSOFTVERBS goes first:
#                    NCCL dlopens "libibverbs.so" by that name (misc/ibvsymbols.cc
#                    buildIbvSymbols) and has no variable naming another file.
#   NCCL_IB_GID_INDEX=3 (unless set)  softverbs' RoCE v2 GID of its IPv4 address,
#                    the entry NCCL picks on a real RoCE port. Left to choose, NCCL
#                    reads each candidate's RoCE version from the fixed path
#                    /sys/class/infiniband/<dev>/ports/<port>/gid_attrs/types/<i>
#                    (transport/net_ib.cc ncclIbRoceGetVersionNum), which only a
#                    kernel RDMA device has; its connect then fails.
#   NCCL_SOCKET_IFNAME=lo (unless set)  the out-of-band socket NCCL's IB opens
#                    beside the QPs, on the interface softverbs' peers share.
set -euo pipefail
lib=${1:?usage: on_softverbs.sh LIBSOFTVERBS COMMAND [ARG...]}
shift
[ $# -gt 0 ] || { echo "on_softverbs.sh: no command" >&2; exit 2; }
[ -f "$lib" ] || { echo "on_softverbs.sh: $lib: no such file" >&2; exit 2; }
lib=$(realpath "$lib")
dir=$(mktemp -d "${TMPDIR:-/tmp}/nccl-ib-softverbs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
ln -s "$lib" "$dir/libibverbs.so"
export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_IB_GID_INDEX=${NCCL_IB_GID_INDEX:-3}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
"$@"
