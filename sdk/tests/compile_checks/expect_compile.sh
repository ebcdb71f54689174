#!/usr/bin/env bash
# Compiles one source of this folder as a plugin author's C++17 file
# (-Wall -Wextra -Wpedantic -Werror, the SDK headers through -I) and checks
# the outcome its comments announce:
#   // expect: compiles              no error and no warning
#   // expect-error: <text>          one error line holding <text>, per line;
#                                    no other error, none from the SDK's detail/
# Usage: expect_compile.sh <c++ compiler> <SDK include dir> <source>
set -uo pipefail
cxx=$1
include=$2
src=$3

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Werror -I"$include" -c "$src" -o /dev/null >"$log" 2>&1
rc=$?

fail() {
  echo "FAIL: $src with $cxx: $1"
  echo "---- compiler output ----"
  cat "$log"
  exit 1
}

mapfile -t expected < <(sed -n 's|^// expect-error: ||p' "$src")
if [ ${#expected[@]} -eq 0 ]; then
  grep -q '^// expect: compiles$' "$src" || fail "the source announces no outcome"
  [ $rc -eq 0 ] || fail "expected to compile"
  [ ! -s "$log" ] || fail "expected no diagnostics"
  echo "OK: $src compiles cleanly with $cxx"
  exit 0
fi

[ $rc -ne 0 ] || fail "expected to fail"
errors=$(grep -E ': (fatal )?error: ' "$log")
for text in "${expected[@]}"; do
  grep -qF -- "$text" <<<"$errors" || fail "no error says: $text"
done
count=$(grep -c '' <<<"$errors")
[ "$count" -eq ${#expected[@]} ] || fail "$count errors, expected ${#expected[@]}"
if grep -q '/detail/[^:]*:[0-9]*:[0-9]*: error' <<<"$errors"; then
  fail "an error comes from inside the SDK's detail/ headers"
fi
echo "OK: $src fails with exactly the ${#expected[@]} expected errors ($cxx)"
