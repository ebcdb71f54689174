#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# ncclnet-churn must fail a plugin that leaks a descriptor per comm: exit
# status 5 (resources grew), with the descriptors named.
#   churn_catches_leak.sh <ncclnet-churn> <leaking plugin>
out=$("$1" --plugin "$2" --cycles 100 --warmup 10)
rc=$?
echo "$out"
[ "$rc" -eq 5 ] || { echo "expected exit status 5 (resources grew), got $rc"; exit 1; }
echo "$out" | grep -q "grew: fds +" || { echo "the verdict does not name the descriptors"; exit 1; }
