#!/usr/bin/env bash
# Compiles every public header alone, as a consumer that found the SDK
# through pkg-config would (-I, not -isystem, so the headers' own warnings
# count): every header as C++17, every C header (*.h) also as C11, each with
# -Wall -Wextra -Wpedantic -Werror.
# Usage: check_headers.sh <c++ compiler> <c compiler> <SDK include dir>
set -uo pipefail
cxx=$1
cc=$2
include=$(cd "$3" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
checked=0

check() {  # <compiler> <std> <tu extension> <header>
  local tu="$work/tu.$3"
  # The declaration keeps a C unit that includes only macros from being
  # empty (which ISO C forbids).
  printf '#include "%s"\ntypedef int ncclnet_header_check_unit;\n' "$4" >"$tu"
  if ! "$1" -std="$2" -Wall -Wextra -Wpedantic -Werror -I"$include" -fsyntax-only "$tu" \
      >"$work/log" 2>&1; then
    echo "FAIL: $4 as $2:"
    cat "$work/log"
    failed=$((failed + 1))
  fi
  checked=$((checked + 1))
}

cd "$include" || exit 1
mapfile -t headers < <(find ncclnet -name '*.h' -o -name '*.hpp' | sort)
[ ${#headers[@]} -gt 0 ] || { echo "FAIL: no headers under $include/ncclnet"; exit 1; }
for header in "${headers[@]}"; do
  check "$cxx" c++17 cc "$header"
  case $header in *.h) check "$cc" c11 c "$header" ;; esac
done
if [ $failed -ne 0 ]; then
  echo "FAIL: $failed of $checked header compilations"
  exit 1
fi
echo "OK: $checked header compilations (${#headers[@]} headers) clean with $cxx and $cc"
