#!/usr/bin/env bash
# Installs the SDK from <build dir> into a scratch prefix, then builds the
# hello plugin and host against it twice: with find_package and with
# pkg-config. Each plugin must export only its tables and load through the
# Loader.
set -euo pipefail
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
checker=$here/../check_exports.sh

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

echo "== find_package(ncclnet-sdk)"
cmake -S "$here" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/cmake" >"$work/build.log"
"$checker" "$work/cmake/libnccl-net-hello.so"
out=$("$work/cmake/hello_host" "$work/cmake/libnccl-net-hello.so")
echo "$out"
[ "$out" = "loaded hello v12 device0=hello0" ]

echo "== pkg-config ncclnet-plugin / ncclnet-sdk"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig:$prefix/lib64/pkgconfig
mkdir -p "$work/pc"
# shellcheck disable=SC2046
g++ -Wall -Wextra -Wpedantic -Werror -o "$work/pc/libnccl-net-hello.so" "$here/hello_net.cc" \
  $(pkg-config --cflags --libs ncclnet-plugin)
# shellcheck disable=SC2046
g++ -Wall -Wextra -Wpedantic -Werror -o "$work/pc/hello_host" "$here/hello_host.cc" \
  $(pkg-config --cflags --libs ncclnet-sdk)
"$checker" "$work/pc/libnccl-net-hello.so"
out=$("$work/pc/hello_host" "$work/pc/libnccl-net-hello.so")
echo "$out"
[ "$out" = "loaded hello v12 device0=hello0" ]

echo "== NCCL_NET_PLUGIN=hello through the library path"
out=$(LD_LIBRARY_PATH=$work/pc "$work/pc/hello_host" hello)
echo "$out"
[ "$out" = "loaded hello v12 device0=hello0" ]
echo "out-of-tree plugin: OK"
