#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The vendor kit as a vendor meets it, from an install of the SDK:
#   test_vendor_kit.sh <build dir> <scratch dir>
# 1. `cmake --install` of the runtime, dev and sdk-socket components puts no
#    test plugin anywhere, and the installed tools find the installed plugin
#    and profiles with no LD_LIBRARY_PATH (RUNPATH, --profile NAME);
# 2. `ncclnet-new-plugin acme` writes a project that builds against the
#    installed SDK (find_package, and pkg-config under -Wpedantic), passes
#    the Load scenarios through every ABI as generated, and whose own ctest
#    runs them.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
unset LD_LIBRARY_PATH NCCL_NET_PLUGIN

step() { echo; echo "== $*"; }

step "install: runtime, dev and socket components"
for component in runtime dev socket; do
  cmake --install "$build" --prefix "$prefix" --component "$component" >"$work/install-$component.log"
done
plugins=$(cd "$prefix" && find . -name 'libnccl-net-*.so' | sort)
echo "$plugins"
[ "$plugins" = "./lib/libnccl-net-sdk-socket.so" ] || { echo "FAIL: unexpected plugins installed"; exit 1; }
for f in bin/ncclnet-conformance bin/ncclnet-info bin/ncclnet-new-plugin share/man/man1/ncclnet-conformance.1 \
         share/doc/ncclnet-sdk/LICENSE share/ncclnet-sdk/profiles/sdk-socket.yaml \
         share/ncclnet-sdk/examples/hello-net/CMakeLists.txt include/ncclnet/version.h; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f is not installed"; exit 1; }
done
"$prefix/bin/ncclnet-conformance" --version
"$prefix/bin/ncclnet-conformance" --help | grep -F "$prefix/share/ncclnet-sdk/profiles" >/dev/null ||
  { echo "FAIL: --help does not name the installed profiles"; exit 1; }

step "installed tools find the installed plugin and profile by name"
NCCL_SOCKET_IFNAME=lo "$prefix/bin/ncclnet-conformance" --plugin sdk-socket --profile sdk-socket \
  --gtest_filter='Load.*:Properties.*' --no-progress --json "$work/installed.json" | tail -3

step "ncclnet-new-plugin refuses bad names"
for bad in Acme acme_nic 9lives acme- socket; do
  if "$prefix/bin/ncclnet-new-plugin" --dir "$work/bad" "$bad" 2>"$work/bad.err"; then
    echo "FAIL: '$bad' was accepted"; exit 1
  fi
  echo "refused '$bad': $(head -1 "$work/bad.err")"
done

step "ncclnet-new-plugin acme"
cd "$work"
"$prefix/bin/ncclnet-new-plugin" acme
ls -A acme acme/src acme/profiles

step "the generated project builds with find_package(ncclnet-sdk) and runs its own test"
PATH=$prefix/bin:$PATH cmake -S acme -B acme/b -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$work/acme-configure.log"
cmake --build acme/b >"$work/acme-build.log"
"$prefix/bin/ncclnet-conformance" --plugin acme/b/libnccl-net-acme.so --abi all \
  --gtest_filter='*/Load.*' --no-progress --junit "$work/acme-load.xml" | tail -4
ctest --test-dir acme/b --output-on-failure | tail -3

step "the generated source builds through pkg-config with -Wpedantic"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
g++ -Wall -Wextra -Wpedantic -Werror -o "$work/libnccl-net-acme-pc.so" acme/src/acme_net.cc \
  $(pkg-config --cflags --libs ncclnet-plugin)
echo "vendor kit: OK"
