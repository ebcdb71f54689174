#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test.
# Two more jobs run first (docs/fuzzing.md), each when its variable is 1:
#   NCCLNET_CI_FUZZ        scripts/fuzz.sh (every fuzzer's smoke run; CI sets it)
#   NCCLNET_CI_SANITIZERS  scripts/sanitize.sh (ASan + UBSan, then TSan)
# The main ctest runs last, so its summary closes the output. All of them
# run; the exit status is non-zero if any failed. Two more variables choose
# the main ctest's tests by label (cmake/NcclnetTestLabels.cmake):
#   NCCLNET_TEST_LABELS       only these (ctest -L REGEX)
#   NCCLNET_TEST_SKIP_LABELS  all but these (ctest -LE REGEX; .ci/run: long)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
status=0
if [ "${NCCLNET_CI_FUZZ:-0}" = 1 ]; then "$root/scripts/fuzz.sh" || status=1; fi
if [ "${NCCLNET_CI_SANITIZERS:-0}" = 1 ]; then "$root/scripts/sanitize.sh" || status=1; fi
"$root/scripts/build.sh" "$@"
select=()
if [ -n "${NCCLNET_TEST_LABELS:-}" ]; then select+=(-L "$NCCLNET_TEST_LABELS"); fi
if [ -n "${NCCLNET_TEST_SKIP_LABELS:-}" ]; then
  select+=(-LE "$NCCLNET_TEST_SKIP_LABELS")
  echo "test.sh: skipping the tests labelled '$NCCLNET_TEST_SKIP_LABELS':" \
    "$(cd "$build" && ctest -N -L "$NCCLNET_TEST_SKIP_LABELS" | sed -n 's/^Total Tests: //p') of them"
fi
(cd "$build" && ctest --output-on-failure -j "$(nproc)" --timeout 900 "${select[@]}") || status=1
exit $status
