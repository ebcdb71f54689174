#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nccl-driver on a host without a GPU: each rank fails at once with CUDA's
# reason, the job is judged setup-failed (not "not proven", not a hang),
# and the run exits 1 within seconds. --mps without the MPS control
# program is refused before any rank starts. On a GPU host the jobs would
# run: skipped there (77), since the GPU run covers them.
set -u
driver=$1
if nvidia-smi -L >/dev/null 2>&1; then
  echo "a GPU is here: this test is for hosts without one"
  exit 77
fi
fail() { echo "FAILED: $*"; echo "--- output"; cat "$out"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
timeout 60 "$driver" --max-bytes 1K --timeout 30 >"$out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit status $rc, expected 1"
[ $(( $(date +%s) - start )) -lt 20 ] || fail "took $(( $(date +%s) - start )) s"
grep -Eq "^FAIL job round 1 \(.*\): setup-failed: rank [01]: exit 72: " "$out" || fail "no setup-failed verdict"
grep -q "^SUMMARY FAIL" "$out" || fail "no SUMMARY FAIL"

timeout 30 env PATH=/nonexistent "$driver" --mps --max-bytes 1K >"$out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--mps without nvidia-cuda-mps-control: exit $rc, expected 2"
grep -q "nccl-driver: --mps: nvidia-cuda-mps-control is not on PATH" "$out" || fail "no --mps reason"

timeout 30 "$driver" --ops allreduce,gossip >"$out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "unknown op: exit $rc, expected 2"
grep -q "^nccl-driver: --ops: unknown op 'gossip'; see nccl-driver --help$" "$out" ||
  fail "no reason for the unknown op"

timeout 30 "$driver" --frobnicate >"$out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "unknown option: exit $rc, expected 2"
[ "$(cat "$out")" = "nccl-driver: unknown argument '--frobnicate'; see nccl-driver --help" ] ||
  fail "not the one usage-error line"

timeout 30 "$driver" --help >"$out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "--help: exit $rc, expected 0"
grep -q "^usage: nccl-driver" "$out" || fail "--help: no usage line"
echo "ok"
