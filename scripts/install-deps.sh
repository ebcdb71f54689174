#!/usr/bin/env bash
# Installs the Debian 12 packages the build and tests need, if missing.
# nlohmann-json3-dev: the tools' and the suite's JSON reports; CLI11
# (libcli11-dev) parses the command lines of the tools and the suite.
# Optional extras (libfabric, libibverbs, yaml-cpp) are installed too so that
# every bundled plugin and the conformance suite are built; iproute2 and
# nftables for the runs across network namespaces (scripts/netns/).
# `install-deps.sh fuzz` adds clang and its runtimes (libFuzzer) for
# scripts/fuzz.sh.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config binutils python3
          libgtest-dev nlohmann-json3-dev libcli11-dev libyaml-cpp-dev libssl-dev libfabric-dev libibverbs-dev
          iproute2 nftables)
if [ "${1:-}" = fuzz ]; then packages+=(clang libclang-rt-dev); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
