#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the .deb packages (cpack -G DEB) and installs them on a clean
# Debian 12 made with debootstrap, then certifies sdk-socket there with the
# installed suite and profile, no environment beyond NCCL_SOCKET_IFNAME:
#   scripts/package/check-debs.sh [build dir] [chroot dir]
# Needs root. The chroot is made once (minbase, from the Debian mirror this
# host's apt uses) and reused; it is restored from a clean copy each run.
# Also checks that no test plugin is in any package, and that every plugin
# and tool in the packages loads its dependencies in the clean system.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
base=${2:-/var/tmp/ncclnet-debian12}
suite=bookworm

[ "$(id -u)" -eq 0 ] || { echo "check-debs: needs root (debootstrap, chroot)" >&2; exit 1; }
for tool in cpack debootstrap dpkg-deb; do
  command -v $tool >/dev/null || { echo "check-debs: needs $tool" >&2; exit 1; }
done

echo "== cpack -G DEB"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB >"$build/cpack.log") || { tail -30 "$build/cpack.log"; exit 1; }
mapfile -t debs < <(ls "$build"/packages/*.deb)
for deb in "${debs[@]}"; do
  printf '%s\n' "$(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
  if dpkg-deb -c "$deb" | grep -E 'conf-tcp|testnet|loopnet|fixture' ; then
    echo "FAIL: $(basename "$deb") holds a test plugin" >&2
    exit 1
  fi
done

mirror() {  # the Debian mirror this host's apt uses
  local uri
  uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1)
  [ -n "$uri" ] || uri=$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | head -1)
  echo "$uri"
}

clean=$base/clean
if [ ! -x "$clean/usr/bin/apt-get" ]; then
  echo "== debootstrap $suite (minbase) into $clean"
  rm -rf "$clean"
  debootstrap --variant=minbase "$suite" "$clean" "$(mirror)" >"$base.debootstrap.log" 2>&1 ||
    { tail -20 "$base.debootstrap.log"; exit 1; }
fi
sys=$base/run
rm -rf "$sys"
cp -a "$clean" "$sys"
cleanup() {
  umount -l "$sys/proc" 2>/dev/null || true
  umount -l "$sys/dev/shm" 2>/dev/null || true
  umount -l "$sys/dev" 2>/dev/null || true
}
trap cleanup EXIT
mount -t proc proc "$sys/proc"
mount --bind /dev "$sys/dev"
mkdir -p "$sys/dev/shm" && mount -t tmpfs tmpfs "$sys/dev/shm"
cp /etc/resolv.conf "$sys/etc/resolv.conf"
mkdir -p "$sys/debs"
cp "${debs[@]}" "$sys/debs/"

in_chroot() { chroot "$sys" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

echo "== apt-get install the packages in a clean Debian 12"
in_chroot apt-get update -q >"$base.apt.log" 2>&1 || { tail "$base.apt.log"; exit 1; }
in_chroot sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /debs/*.deb' \
  >>"$base.apt.log" 2>&1 || { tail -30 "$base.apt.log"; exit 1; }
in_chroot dpkg -l 'ncclnet-sdk*' | grep '^ii'

echo "== every installed plugin and tool finds its libraries"
for f in $(in_chroot sh -c 'ls /usr/bin/ncclnet-* /usr/lib/libnccl-net-*.so /usr/lib/ncclnet-sdk/*.so'); do
  in_chroot sh -c "head -c 4 '$f' | grep -q ELF" || continue  # ncclnet-new-plugin is a script
  if in_chroot ldd "$f" | grep 'not found'; then
    echo "FAIL: $f misses a library in a clean install" >&2
    exit 1
  fi
done
if in_chroot sh -c 'ls /usr/lib/libnccl-net-conf* /usr/lib/libnccl-net-*test* 2>/dev/null' | grep .; then
  echo "FAIL: a test plugin is installed" >&2
  exit 1
fi

echo "== ncclnet-conformance --plugin sdk-socket --profile sdk-socket (installed)"
in_chroot ncclnet-conformance --version
in_chroot env NCCL_SOCKET_IFNAME=lo ncclnet-conformance --plugin sdk-socket \
  --profile /usr/share/ncclnet-sdk/profiles/sdk-socket.yaml --no-progress \
  --json /tmp/sdk-socket.json --junit /tmp/sdk-socket.xml
in_chroot ncclnet-info --plugin sdk-socket >/dev/null
echo "packages: OK (${#debs[@]} .deb files installed and used on a clean $suite)"
