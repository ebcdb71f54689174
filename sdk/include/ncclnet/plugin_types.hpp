// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the two SDK types in a plugin class's signatures, on both
// forms of the class. <ncclnet/plugin.hpp> says when each is made and how
// long it lives.
#pragma once

#include <cstdint>

#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet {

// What a plugin gets when it is created.
struct InitArgs {
  Logger logger;                              // prefix "NET/<kName>"
  ncclProfilerCallback_t profiler = nullptr;  // NULL before v10
  // NCCL called init through a table whose init carries the profiler
  // callback (v10+). NCCL then always passes one: a plugin may call it
  // without a NULL check.
  bool abiHasProfiler = false;
};

// The communicator a listen, connect or setNetAttr is for, as far as the
// calling version tells: owned by the SDK, and shared by the communicators
// of one traffic class when an older NCCL drives the plugin.
struct CommContext {
  uint64_t commId = 0;
  int trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF;
};

}  // namespace ncclnet

#pragma GCC visibility pop
