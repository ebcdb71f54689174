#!/usr/bin/env bash
# Fails when the SDK's headers include each other in a circle. #pragma once
# lets such a circle compile, but then what a header sees depends on which
# header of the circle a plugin included first, and a reader cannot tell
# which file owns what. Every header under <SDK include dir>/ncclnet is read;
# an #include "ncclnet/..." or <ncclnet/...> line is an edge.
# Usage: check_include_cycles.sh <SDK include dir>
set -uo pipefail
include=$(cd "$1" && pwd) || exit 1
cd "$include" || exit 1

mapfile -t headers < <(find ncclnet -name '*.h' -o -name '*.hpp' | sort)
[ ${#headers[@]} -gt 0 ] || { echo "FAIL: no headers under $include/ncclnet"; exit 1; }

declare -A edges state
for header in "${headers[@]}"; do
  edges[$header]=$(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]\(ncclnet/[^">]*\)[">].*|\1|p' \
    "$header" | tr '\n' ' ')
done

failed=0
stack=()
visit() {  # depth first; state: 1 on the current path, 2 done
  local header=$1 next i
  state[$header]=1
  stack+=("$header")
  for next in ${edges[$header]}; do
    if [ ! -f "$next" ]; then
      echo "FAIL: $header includes $next, which is not a header of the SDK"
      failed=$((failed + 1))
    elif [ "${state[$next]:-0}" = 1 ]; then
      local cycle=""
      for ((i = ${#stack[@]} - 1; i >= 0; i--)); do
        cycle="${stack[$i]} -> $cycle"
        [ "${stack[$i]}" = "$next" ] && break
      done
      echo "FAIL: include cycle: $cycle$next"
      failed=$((failed + 1))
    elif [ "${state[$next]:-0}" = 0 ]; then
      visit "$next"
    fi
  done
  unset 'stack[${#stack[@]}-1]'
  state[$header]=2
}
for header in "${headers[@]}"; do
  [ "${state[$header]:-0}" = 0 ] && visit "$header"
done
if [ $failed -ne 0 ]; then
  echo "FAIL: $failed include problems among ${#headers[@]} headers"
  exit 1
fi
echo "OK: ${#headers[@]} headers, no include cycle"
