// SPDX-License-Identifier: Apache-2.0
// sdk-abi-probe: a plugin that only records what reaches it. Every comm it
// returns is a ProbeComm, so a test holding the comm pointer (through any
// table, the host's view or the checker: none of them wraps comms) reads
// exactly what the plugin was given. It never touches a buffer.
#pragma once

#include <cstddef>

#include "ncclnet/detail/abi_versions.hpp"

namespace ncclnet::probe {

struct ProbeComm {
  int calls = 0;    // regMr, isend and irecv calls that reached the plugin
  size_t size = 0;  // the last regMr or isend size
  int n = 0;        // the last irecv's n, and its first sizes
  size_t sizes[kMaxGroupedRecvs] = {};
  int trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF;  // a sendComm's, from its context
};

}  // namespace ncclnet::probe
