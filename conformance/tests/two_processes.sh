#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The multi-node path on one machine: world rank 1 is an agent started like
# mpirun would start it on a second node; rank 0 coordinates. Both meet at a
# TCP rendezvous, and every scenario's ranks alternate between the two.
#   two_processes.sh <ncclnet-conformance> <plugin> <json report>
# The rendezvous port is picked from the pid; when another process already
# holds it (rank 0 cannot listen), the agent is stopped and the next port
# tried, so a busy port fails neither the test nor its time bound.
set -u
bin=$1 plugin=$2 json=$3
log=$(mktemp) && status=$(mktemp) || exit 1
trap 'rm -f "$log" "$status"' EXIT
rc=1
for attempt in 1 2 3 4 5; do
  port=$((20000 + ($$ * 7 + attempt * 7919) % 20000))
  "$bin" --plugin "$plugin" --rank 1 --size 2 --rendezvous "127.0.0.1:$port" &
  agent=$!
  # Streamed (tee) so that a run killed by the test's time bound still shows it.
  {
    "$bin" --plugin "$plugin" --rank 0 --size 2 --rendezvous "127.0.0.1:$port" --json "$json" \
      --gtest_filter='*/Connect.*:*/Data.*:*/Grouped.*:*/Faults.*'
    echo $? >"$status"
  } 2>&1 | tee "$log"
  rc=$(cat "$status")
  if [ "$rc" -ne 0 ] && grep -q "cannot listen on" "$log"; then
    kill "$agent" 2>/dev/null
    wait "$agent" 2>/dev/null
    echo "two_processes.sh: port $port is taken; trying another" >&2
    continue
  fi
  if [ "$rc" -ne 0 ]; then
    # Rank 0 failed: the agent may still wait for it; it does not decide the result.
    kill "$agent" 2>/dev/null
    wait "$agent" 2>/dev/null
  else
    wait "$agent" || rc=1
  fi
  exit "$rc"
done
exit "$rc"
