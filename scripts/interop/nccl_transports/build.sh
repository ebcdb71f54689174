#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds NCCL's own network transports as standalone net plugins, the "NCCL
# transport subjects" of the interop matrix (docs/interop.md):
#   libnccl-net-nccl-socket.so  src/transport/net_socket.cc, table "nccl-socket"
#   libnccl-net-nccl-ib.so      src/transport/net_ib.cc, table "nccl-ib"
# Each exports one symbol, the table version of the release built
# (NCCL_NET_PLUGIN_SYMBOL in its nccl_net.h: ncclNetPlugin_v11 for 2.28,
# ncclNetPlugin_v12 for 2.30): a copy of NCCL's internal table (ncclNetSocket,
# ncclNetIb), renamed so NCCL_NET is not ambiguous. From 2.30 (where NCCL's
# IB transport is split into src/transport/net_ib/) only the Socket subject.
#
# Why: NCCL's internal transports are the behaviour NCCL's proxy was written
# against; running ncclnet-conformance on them tells which of our rules NCCL's
# own code keeps. NCCL is a test subject, fetched and built here: none of its
# source enters our tree. Ours is only this script and the glue next to it
# (socket_subject.cc, ib_subject.cc, nccl_internal_stubs.cc; see their headers).
#
# How: NCCL's real files are compiled (the transport, misc/socket.cc,
# misc/utils.cc, misc/param.cc, debug.cc; for IB also misc/ibvwrap.cc,
# ibvsymbols.cc, mlx5dvwrap.cc, mlx5dvsymbols.cc) with nccl.h generated from
# nccl.h.in as NCCL's src/Makefile does; no libnccl, libcudart or libibverbs is
# linked (NCCL's IB dlopens "libibverbs.so" at init).
#
#   scripts/interop/nccl_transports/build.sh NCCL_SRC_OR_GIT[@TAG] [OUT_DIR]
#
# NCCL_SRC_OR_GIT: an NCCL source tree, or a git directory (bare or not) from
# which TAG (default v2.28.9-1) is extracted under $NCCL_SUBJECTS_WORK
# (default build-nccl-subjects/, ignored by git). OUT_DIR (default
# $NCCL_SUBJECTS_WORK/lib) receives the libraries and NCCL_VERSION.
# SUBJECTS (default "socket ib") picks what to build; JOBS (default 2) the
# compilers run at once. Run the suite:
#
#   NCCL_SOCKET_IFNAME=lo build/conformance/ncclnet-conformance \
#     --plugin OUT_DIR/libnccl-net-nccl-socket.so --abi v11
#   # IB on softverbs (on_softverbs.sh says what it sets and why):
#   scripts/interop/nccl_transports/on_softverbs.sh \
#     build/sdk/testing/devices/softverbs/libsoftverbs.so build/conformance/ncclnet-conformance \
#     --plugin OUT_DIR/libnccl-net-nccl-ib.so --abi v11
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
spec=${1:?usage: build.sh NCCL_SRC_OR_GIT[@TAG] [OUT_DIR]}
work=$(realpath -m "${NCCL_SUBJECTS_WORK:-$root/build-nccl-subjects}")
out=$(realpath -m "${2:-$work/lib}")
cuda=${CUDA_HOME:-/usr/local/cuda}
cxx=${CXX:-g++}
jobs=${JOBS:-2}

path=${spec%@*} tag=v2.28.9-1
[ "$path" != "$spec" ] && tag=${spec##*@}
if [ -f "$path/src/transport/net_socket.cc" ]; then
  src=$(realpath "$path")
  commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
  label="$tag (tree $src)"
else
  src=$work/src/nccl-$tag
  if [ ! -d "$src" ]; then
    rm -rf "$src.tmp" && mkdir -p "$src.tmp"
    git -C "$path" archive "$tag" | tar -x -C "$src.tmp"
    mv "$src.tmp" "$src"
  fi
  commit=$(git -C "$path" rev-parse "$tag^{commit}")
  label=$tag
fi
[ -f "$src/src/transport/net_socket.cc" ] || { echo "build.sh: no src/transport/net_socket.cc in $src" >&2; exit 1; }

obj=$work/obj/nccl-socket-$tag
gen=$obj/include
mkdir -p "$gen" "$out"

# nccl.h, as NCCL's src/Makefile makes it from makefiles/version.mk.
ver() { sed -n "s/^$1 *:= *//p" "$src/makefiles/version.mk"; }
major=$(ver NCCL_MAJOR) minor=$(ver NCCL_MINOR) patch=$(ver NCCL_PATCH) suffix=$(ver NCCL_SUFFIX)
code=$(printf "%d%02d%02d" "$major" "$minor" "$patch")
sed -e "s/\${nccl:Major}/$major/g" -e "s/\${nccl:Minor}/$minor/g" -e "s/\${nccl:Patch}/$patch/g" \
    -e "s/\${nccl:Suffix}/$suffix/g" -e "s/\${nccl:Version}/$code/g" \
    "$src/src/nccl.h.in" >"$gen/nccl.h.tmp"
cmp -s "$gen/nccl.h.tmp" "$gen/nccl.h" 2>/dev/null && rm "$gen/nccl.h.tmp" || mv "$gen/nccl.h.tmp" "$gen/nccl.h"

# NCCL's flags (makefiles/common.mk, release defaults: no NET_PROFILER, no
# RDMA_CORE), -O2 instead of -O3, include order of src/Makefile.
cuda_version=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda/include/cuda.h")
cxxflags=(-std=c++17 -O2 -g -fPIC -fvisibility=hidden -Wall -Wno-unused-function -Wno-sign-compare
          -DCUDA_MAJOR=$((cuda_version / 1000)) -DCUDA_MINOR=$((cuda_version % 1000 / 10))
          -I"$src/src" -I"$gen" -I"$src/src/include" -I"$src/src/include/plugin"
          -I"$cuda/include" -I"$cuda/include/cccl")
# 2.30 moved the operating system's part of sockets, dlopen and threads
# into src/os (one file per OS, chosen by NCCL_OS_LINUX).
os_sources=()
if [ -f "$src/src/os/linux.cc" ]; then
  os_sources=("$src/src/os/linux.cc")
  cxxflags+=(-DNCCL_OS_LINUX)
fi
# 2.30 reads its parameters through a registry (src/param).
for f in param.cc param_registry.cc; do
  [ -f "$src/src/param/$f" ] && os_sources+=("$src/src/param/$f")
done
common=("${os_sources[@]}" "$src/src/misc/socket.cc" "$src/src/misc/utils.cc" "$src/src/misc/param.cc"
        "$src/src/debug.cc" "$here/nccl_internal_stubs.cc")
socket_sources=("$src/src/transport/net_socket.cc" "$here/socket_subject.cc")
ib_sources=("$src/src/transport/net_ib.cc" "$src/src/misc/ibvwrap.cc" "$src/src/misc/ibvsymbols.cc"
            "$src/src/misc/mlx5dvwrap.cc" "$src/src/misc/mlx5dvsymbols.cc" "$here/ib_subject.cc")

# compile SOURCE...: objects into $obj (at most $jobs compilers at once), their
# paths into the array `objects`.
compile() {
  local s o pids=()
  objects=()
  for s in "$@"; do
    o=$obj/$(basename "$(dirname "$s")")_$(basename "$s" .cc).o
    objects+=("$o")
    if [ ! -e "$o" ] || [ "$s" -nt "$o" ] || [ "$gen/nccl.h" -nt "$o" ]; then
      "$cxx" "${cxxflags[@]}" -c "$s" -o "$o" &
      pids+=($!)
      if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
    fi
  done
  for p in "${pids[@]}"; do wait "$p"; done
}

# link NAME LDFLAGS SOURCE...: libnccl-net-NAME.so. Only the release's table
# symbol leaves the library; --no-undefined proves it needs neither libnccl
# nor libcudart. LDFLAGS (one word, may be empty) is the subject's own.
symbol=$(sed -n 's/^#define NCCL_NET_PLUGIN_SYMBOL *\([A-Za-z0-9_]*\).*/\1/p' \
  "$src/src/include/plugin/nccl_net.h")
[ -n "$symbol" ] || { echo "build.sh: no NCCL_NET_PLUGIN_SYMBOL in $src/src/include/plugin/nccl_net.h" >&2; exit 1; }
echo "{ global: $symbol; local: *; };" >"$obj/exports.map"
link() {
  local name=$1 extra=$2 lib=$out/libnccl-net-$1.so exported
  shift 2
  compile "${common[@]}" "$@"
  "$cxx" -shared -o "$lib" "${objects[@]}" -Wl,--version-script="$obj/exports.map" \
    -Wl,--no-undefined -Wl,-soname,"libnccl-net-$name.so" ${extra:+"$extra"} -lpthread -ldl
  exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^_' || true)
  [ "$exported" = "$symbol" ] || { echo "build.sh: $lib exports: $exported" >&2; exit 1; }
  echo "build.sh: $lib ($symbol, NCCL $label, $commit)"
}

: >"$out/NCCL_VERSION"
for subject in ${SUBJECTS:-socket ib}; do
  case $subject in
    socket) link nccl-socket "" "${socket_sources[@]}" ;;
    # Resident once loaded (-z nodelete), as in NCCL, where the transport is
    # part of libnccl: its init starts a detached thread per device running
    # net_ib.cc's ncclIbAsyncThreadMain, and finalize stops none of them nor
    # closes a device (ncclIbFinalizeDevices only counts down), so unmapping
    # the code after a dlclose would crash those threads.
    ib)
      if [ ! -f "$src/src/transport/net_ib.cc" ]; then
        echo "build.sh: NCCL $label has no src/transport/net_ib.cc (2.30 split it into net_ib/); the IB subject is built from 2.28" >&2
        continue
      fi
      link nccl-ib -Wl,-z,nodelete "${ib_sources[@]}" ;;
    *) echo "build.sh: unknown subject $subject (socket, ib)" >&2; exit 2 ;;
  esac
  echo "nccl-$subject NCCL $label $commit" >>"$out/NCCL_VERSION"
done
