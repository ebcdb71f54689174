// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the SDK's types in an RMA class's signatures
// (<ncclnet/rma.hpp>).
#pragma once

#include <cstdint>

#include "ncclnet/abi/gin_common.h"
#include "ncclnet/plugin_types.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet {

// ncclRmaConfig_v14_t: what one createContext asks for. rankStride > 1:
// NCCL only targets ranks at multiples of it.
struct RmaConfig {
  int nContexts = 1;
  int trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF;
  int rankStride = 1;
};

// The remote atomic of an iputSignal: add `value` to the 64-bit word at
// `offset` in the target's registration `mhandle`, modulo 2^64, atomically
// with respect to every other signal. Strong: visible only after this
// put's payload and every earlier put on the same context to the same
// rank; weak: after this put's payload only.
struct RmaSignal {
  uint64_t offset = 0;
  void* mhandle = nullptr;
  uint64_t value = 0;
  uint32_t op = NCCL_GIN_SIGNAL_OP_ADD;  // as NCCL passed it; value is final
  bool strong = true;
};

}  // namespace ncclnet

#pragma GCC visibility pop
