#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs busy_threads under the sampler and checks its report: one section per
# thread under the name it set, CPU in proportion to what it burned, and the
# function it burned it in at the top of its list.
#   check_report.sh SAMPLER_SO BUSY_THREADS
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
LD_PRELOAD=$1 NCCLNET_SAMPLER_OUT=$dir NCCLNET_SAMPLER_HZ=1000 "$2"
report=$(cat "$dir"/sampler.*.txt)
echo "$report"
fail() { echo "FAIL: $*"; exit 1; }
cpu_of() { echo "$report" | sed -n "s/^thread [0-9]* \"$1\": \([0-9.]*\) s CPU.*/\1/p"; }
heavy=$(cpu_of "heavy worker")
light=$(cpu_of "light worker")
[ -n "$heavy" ] || fail "no section for the thread named 'heavy worker'"
[ -n "$light" ] || fail "no section for the thread named 'light worker'"
# 600 ms and 200 ms of CPU, on a loaded CI machine too: generous bounds.
awk -v h="$heavy" -v l="$light" 'BEGIN { exit !(h > 0.3 && h < 0.9 && l > 0.08 && l < 0.4 && h > 1.5 * l) }' ||
  fail "CPU seconds heavy=$heavy light=$light, expected about 0.6 and 0.2"
first_self() { echo "$report" | grep -A1 "^thread [0-9]* \"$1\"" | sed -n 2p; }
first_self "heavy worker" | grep -q "spinHeavy" || fail "heavy worker's top function is not spinHeavy"
first_self "light worker" | grep -q "spinLight" || fail "light worker's top function is not spinLight"
# The stack is walked past the function: the thread's start is on it.
echo "$report" | grep -A40 "\"heavy worker\"" | grep -q "total *100.0%.*startSampled" ||
  fail "the callers of spinHeavy are missing from its 'total' list"
echo PASS
