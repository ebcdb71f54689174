#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the third-party subjects of the interop matrix from source and stages
# them next to our build for the GPU machine (docs/interop.md):
#   aws-ofi-nccl  the plugin (libnccl-net-ofi.so) and its functional tests,
#                 built with CUDA and Open MPI, tests patched by
#                 patch_functional_tests.sh (shared GPU, plugin by variable)
#   nccl-example  NCCL's example net plugin (plugins/net/example, 0 devices)
#   nccl-transports  with --nccl-transports: NCCL's own Socket and IB
#                 transports as plugins (nccl_transports/build.sh, default
#                 tag v2.28.9-1), staged to DIR/interop/nccl-transports/lib
# A source is a release tree (patched in place) or a git directory (then
# TAG is extracted under the work tree and patched there).
#
#   scripts/interop/build.sh --aws-ofi-nccl SRC_OR_GIT[@TAG] --nccl SRC_OR_GIT[@TAG] [--stage DIR] [--nccl-transports NCCL_GIT[@TAG]]
#
# Default tags: v1.21.1 (aws-ofi-nccl), v2.30.7-1 (NCCL). Work tree:
# $INTEROP_WORK (default build-interop/). --stage DIR (default .gpu-stage,
# made by scripts/gpu/stage.sh) receives DIR/interop/; without a stage the
# result stays in $INTEROP_WORK/stage/interop.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(realpath -m "${INTEROP_WORK:-$root/build-interop}")
cuda=${CUDA_HOME:-/usr/local/cuda}
aws_spec="" nccl_spec="" stage="" transports_spec=""
while [ $# -gt 0 ]; do
  case $1 in
    --aws-ofi-nccl) aws_spec=$2; shift 2 ;;
    --nccl) nccl_spec=$2; shift 2 ;;
    --stage) stage=$2; shift 2 ;;
    --nccl-transports) transports_spec=$2; shift 2 ;;
    *) echo "build.sh: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ -n "$aws_spec" ] || { echo "build.sh: --aws-ofi-nccl SRC_OR_GIT is required" >&2; exit 2; }
jobs=$(nproc)
mkdir -p "$work/src"

# source SPEC DEFAULT_TAG NAME: prints a source tree, extracting a tag from a
# git directory when SPEC names one. The commit goes to $work/src/NAME.commit.
source_tree() {
  local spec=$1 tag=$2 name=$3 path
  path=${spec%@*}
  [ "$path" != "$spec" ] && tag=${spec##*@}
  if [ -e "$path/configure.ac" ] || [ -e "$path/plugins/net/example" ] && [ ! -e "$path/objects" ]; then
    realpath "$path"
    git -C "$path" rev-parse HEAD >"$work/src/$name.commit" 2>/dev/null || echo unknown >"$work/src/$name.commit"
    echo "$tag (tree $path)" >"$work/src/$name.version"
    return
  fi
  local dest=$work/src/$name-$tag
  if [ ! -d "$dest" ]; then
    mkdir -p "$dest.tmp"
    git -C "$path" archive "$tag" | tar -x -C "$dest.tmp"
    mv "$dest.tmp" "$dest"
  fi
  git -C "$path" rev-parse "$tag^{commit}" >"$work/src/$name.commit"
  echo "$tag" >"$work/src/$name.version"
  echo "$dest"
}

"$here/deps.sh"

# --- aws-ofi-nccl -----------------------------------------------------------
aws_src=$(source_tree "$aws_spec" v1.21.1 aws-ofi-nccl)
aws_build=$work/aws-ofi-nccl-build
aws_prefix=$work/aws-ofi-nccl-install
"$here/patch_functional_tests.sh" "$aws_src"
if [ ! -x "$aws_src/configure" ]; then
  (cd "$aws_src" && ./autogen.sh) >"$work/aws-ofi-nccl-autogen.log" 2>&1
fi
mkdir -p "$aws_build"
if [ ! -e "$aws_build/Makefile" ]; then
  echo "build.sh: configuring aws-ofi-nccl ($aws_src)"
  # Default platform (no EC2 tuning); CUDA from the toolkit; MPI by its
  # wrapper compilers on PATH; libfabric and hwloc from Debian's default
  # paths (naming /usr would put -isystem /usr/include before libstdc++'s
  # own wrappers and break <cstdlib>).
  (cd "$aws_build" && "$aws_src/configure" --prefix="$aws_prefix" --with-cuda="$cuda" \
     --disable-werror) >"$work/aws-ofi-nccl-configure.log" 2>&1 ||
    { tail -30 "$work/aws-ofi-nccl-configure.log"; exit 1; }
fi
echo "build.sh: building aws-ofi-nccl (log $work/aws-ofi-nccl-make.log)"
# gin_gdaki_backend_version compiles without the MPI wrapper but includes
# mpi.h: MPI's include directories go on every compile line.
mpi_cppflags=$(mpicc --showme:incdirs | tr ' ' '\n' | sed 's/^/-I/' | tr '\n' ' ')
make -C "$aws_build" -j"$jobs" CPPFLAGS="$mpi_cppflags" install >"$work/aws-ofi-nccl-make.log" 2>&1 ||
  { tail -40 "$work/aws-ofi-nccl-make.log"; exit 1; }

# --- NCCL's example plugin --------------------------------------------------
if [ -n "$nccl_spec" ]; then
  nccl_src=$(source_tree "$nccl_spec" v2.30.7-1 nccl)
  mkdir -p "$work/nccl-example"
  # The example's Makefile pulls NCCL's whole make setup; its one line of
  # compiling is all it needs.
  (cd "$nccl_src/plugins/net/example" &&
     cc -O2 -Inccl -fPIC -shared -o "$work/nccl-example/libnccl-net-example.so" ./*.c)
fi

# --- NCCL's own transports as plugins (optional) ------------------------------
if [ -n "$transports_spec" ]; then
  NCCL_SUBJECTS_WORK=$work/nccl-transports JOBS=$jobs \
    "$here/nccl_transports/build.sh" "$transports_spec" "$work/nccl-transports/lib"
fi

# --- stage ------------------------------------------------------------------
out=$(realpath -m "${stage:-$work/stage}")/interop
if [ -z "$stage" ] && [ -d "$root/.gpu-stage" ]; then out=$root/.gpu-stage/interop; fi
rm -rf "$out"
mkdir -p "$out/aws-ofi-nccl/lib" "$out/aws-ofi-nccl/bin"
strip_copy() { objcopy --strip-debug "$1" "$2"; }
strip_copy "$aws_prefix/lib/libnccl-net-ofi.so" "$out/aws-ofi-nccl/lib/libnccl-net-ofi.so"
for t in "$aws_prefix"/bin/*; do
  [ -x "$t" ] && strip_copy "$t" "$out/aws-ofi-nccl/bin/$(basename "$t")"
done
if [ -e "$work/nccl-example/libnccl-net-example.so" ]; then
  mkdir -p "$out/nccl-example/lib"
  cp "$work/nccl-example/libnccl-net-example.so" "$out/nccl-example/lib/"
fi
if [ -n "$transports_spec" ]; then
  mkdir -p "$out/nccl-transports/lib"
  for l in "$work"/nccl-transports/lib/libnccl-net-nccl-*.so; do strip_copy "$l" "$out/nccl-transports/lib/$(basename "$l")"; done
fi
{
  echo "aws-ofi-nccl $(cat "$work/src/aws-ofi-nccl.version") $(cat "$work/src/aws-ofi-nccl.commit")"
  [ -e "$work/src/nccl.version" ] && echo "nccl-example $(cat "$work/src/nccl.version") $(cat "$work/src/nccl.commit")"
  [ -n "$transports_spec" ] && cat "$work/nccl-transports/lib/NCCL_VERSION"
  echo "libfabric $(pkg-config --modversion libfabric)"
  echo "openmpi $(dpkg-query -W -f='${Version}' libopenmpi-dev)"
  echo "cuda $("$cuda/bin/nvcc" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2)"
} >"$out/VERSIONS"
cat "$out/VERSIONS"
du -sh "$out"
