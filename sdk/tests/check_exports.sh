#!/usr/bin/env bash
# Checks that a plugin library defines exactly the tables it should as
# dynamic symbols and nothing else (no C++ helpers NCCL could bind to): one
# ncclNetPlugin_vN per ABI version the SDK knows (NCCLNET_ABI_OLDEST..NEWEST
# in abi/net.h), and every version of each further family named:
#   --rma        ncclRmaPlugin_v* (abi/rma.h)
#   --gin-proxy  the proxy-type GIN tables NCCLNET_EXPORT_RMA_PLUGIN adds
#   --gin        every ncclGinPlugin_v* (abi/gin.h)
#   --collnet    ncclCollNetPlugin_v* (the net range, abi/collnet.h)
#   --forwarded-tables  --gin --rma --collnet: ncclnet-check forwards all
#   --rma-tables        --rma --gin-proxy: what an RMA plugin exports
set -euo pipefail
lib=$1
shift
abi="$(dirname "$0")/../include/ncclnet/abi"
bound() { awk -v name="$2" '$2 == name {print $3}' "$abi/$1"; }
versions() { printf "$1%s\n" $(seq "$2" "$3"); }
# The N of every X(arg, N) in a FOR_EACH macro's definition.
listed() {
  awk -v name="$2" '$1 == "#define" && index($2, name "(") == 1' "$abi/$1" |
    grep -o 'X(arg, [0-9]*)' | tr -dc '0-9\n'
}
oldest=$(bound net.h NCCLNET_ABI_OLDEST)
newest=$(bound net.h NCCLNET_ABI_NEWEST)
expected=$(versions ncclNetPlugin_v "$oldest" "$newest")
families=()
for arg in "$@"; do
  case "$arg" in
    --rma | --gin-proxy | --gin | --collnet) families+=("${arg#--}") ;;
    --forwarded-tables) families+=(gin rma collnet) ;;
    --rma-tables) families+=(rma gin-proxy) ;;
    *) echo "usage: $0 LIBRARY [--rma] [--gin-proxy] [--gin] [--collnet] [--forwarded-tables] [--rma-tables]" >&2; exit 2 ;;
  esac
done
for family in "${families[@]}"; do
  case "$family" in
    rma)
      expected+=$'\n'$(versions ncclRmaPlugin_v "$(bound rma.h NCCLNET_RMA_ABI_OLDEST)" \
        "$(bound rma.h NCCLNET_RMA_ABI_NEWEST)") ;;
    gin)
      expected+=$'\n'$(versions ncclGinPlugin_v "$(bound gin.h NCCLNET_GIN_ABI_OLDEST)" \
        "$(bound gin.h NCCLNET_GIN_ABI_NEWEST)") ;;
    gin-proxy)
      gin=$(listed gin.h NCCLNET_GIN_PROXY_FOR_EACH_VERSION)
      if [ -z "$gin" ]; then
        echo "FAIL: no NCCLNET_GIN_PROXY_FOR_EACH_VERSION versions in $abi/gin.h" >&2
        exit 2
      fi
      expected+=$'\n'$(printf "ncclGinPlugin_v%s\n" $gin) ;;
    collnet)
      expected+=$'\n'$(versions ncclCollNetPlugin_v "$oldest" "$newest") ;;
  esac
done
expected=$(sort <<<"$expected")
actual=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
if [ "$actual" != "$expected" ]; then
  echo "FAIL: $lib exports:"
  echo "$actual"
  echo "expected exactly:"
  echo "$expected"
  exit 1
fi
echo "OK: $lib exports only the expected tables ($(wc -l <<<"$expected") symbols)"
