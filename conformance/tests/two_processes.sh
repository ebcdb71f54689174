#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The multi-node path on one machine: world rank 1 is an agent started like
# mpirun would start it on a second node; rank 0 coordinates. Both meet at a
# TCP rendezvous, and every scenario's ranks alternate between the two.
#   two_processes.sh <ncclnet-conformance> <plugin> <json report>
set -u
bin=$1 plugin=$2 json=$3
port=$((20000 + $$ % 20000))
"$bin" --plugin "$plugin" --rank 1 --size 2 --rendezvous "127.0.0.1:$port" &
agent=$!
"$bin" --plugin "$plugin" --rank 0 --size 2 --rendezvous "127.0.0.1:$port" --json "$json" \
  --gtest_filter='*/Connect.*:*/Data.*:*/Grouped.*:*/Faults.*'
rc=$?
wait "$agent" || rc=1
exit "$rc"
