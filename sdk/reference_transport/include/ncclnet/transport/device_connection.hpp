// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): what the device side of a connection
// sees (NCCL's ncclConnInfo for a net connector). A device peer reads and
// writes only through these addresses; all of them are device-side
// addresses (equal to the CPU ones in the CPU build).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ncclnet/abi/net_device.h"
#include "ncclnet/transport/conn_mem.hpp"
#include "ncclnet/transport/constants.hpp"

namespace ncclnet::transport {

enum class Direction { Send, Recv };
inline const char* directionName(Direction d) {
  return d == Direction::Send ? "send" : "recv";
}

struct DeviceConnection {
  Direction direction = Direction::Send;
  SendMem* sendMem = nullptr;           // head
  RecvMem* recvMem = nullptr;           // tail, connFifo
  char* buffs[kNumProtocols] = {};      // nullptr: no buffer for that protocol
  size_t stepSize[kNumProtocols] = {};  // bytes per step slot
  bool offsetMode = false;              // shared: SIMPLE steps live at connFifo.offset in the pool
  size_t p2pChunkSize = 0;              // shared: bytes per pool slot
  bool hasNetDeviceHandle = false;      // UNPACK receive: the plugin's device handle
  ncclNetDeviceHandle_v12_t netDeviceHandle = {};
  void* mhandles[kNumProtocols] = {};  // getDeviceMr results
  // The kernel's own step counter (ncclConnInfo.step): advanced only by the
  // device peer, carried from one operation to the next.
  uint64_t step = 0;
};

}  // namespace ncclnet::transport
