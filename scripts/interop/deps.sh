#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Debian 12 packages that building aws-ofi-nccl and its functional tests
# needs (autotools, hwloc, Open MPI, libfabric), installed if missing. CUDA
# comes from the toolkit under /usr/local/cuda, not from Debian.
set -euo pipefail
packages=(autoconf automake libtool make pkg-config libfabric-dev libhwloc-dev
          libopenmpi-dev openmpi-bin git python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "interop deps: all packages present"
  exit 0
fi
echo "interop deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y --no-install-recommends "${missing[@]}"
