#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The progress line is redrawn (\r and ESC[K) only on a terminal nobody asked
# to keep quiet: on a pseudo-terminal it is there, with --no-progress or $CI
# set it is not.
#   progress_redraw.sh <ncclnet-conformance> <plugin.so>
set -euo pipefail
bin=$1 plugin=$2
command -v script >/dev/null || { echo "progress_redraw: needs script(1) (util-linux)"; exit 1; }
run_on_pty() {  # ENV-ASSIGNMENTS EXTRA-ARGS -> the bytes the terminal saw
  script -qec "env -u CI $1 '$bin' --plugin '$plugin' --gtest_filter='Properties.*' $2" /dev/null
}
redraws() { grep -c $'\033\\[K' || true; }

n=$(run_on_pty "" "" | redraws)
[ "$n" -gt 0 ] || { echo "FAIL: no progress redraw on a terminal"; exit 1; }
echo "terminal: $n lines redrawn"
n=$(run_on_pty "" "--no-progress" | redraws)
[ "$n" -eq 0 ] || { echo "FAIL: --no-progress still redraws ($n)"; exit 1; }
echo "--no-progress: none"
n=$(run_on_pty "CI=true" "" | redraws)
[ "$n" -eq 0 ] || { echo "FAIL: CI=true still redraws ($n)"; exit 1; }
echo "CI=true: none"
