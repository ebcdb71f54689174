// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): user buffer registration — NCCL's
// sendProxyRegBuffer / recvProxyRegBuffer and ncclNetDeregBuffer. The proxy
// service thread registers on the connection's comm while the progress
// thread may be moving data on it (rule 40), so this takes only the setup
// lock, never the progress thread's.
#include <algorithm>

#include "transport_state.hpp"

namespace ncclnet::transport::detail {

ncclResult_t TransportState::registerUserBuffer(ConnectionState& c, void* data, size_t size,
                                                bool device, void** mhandle) {
  std::lock_guard<std::mutex> lock(setupMutex);
  if (!c.connected || c.netComm == nullptr) {
    NCCLNET_WARN(log, "registerBuffer: the connection is not connected yet");
    return ncclInvalidUsage;
  }
  // Device memory through DMA-BUF when the connection's buffers are (NCCL
  // tries regMrDmaBuf first there too), else regMr.
  if (device && c.useDmaBuf) {
    RT_CHECK(log, registerDmaBuf(c, data, size, "user", mhandle));
  } else {
    int type = device ? memory->devicePtrType() : NCCL_PTR_HOST;
    RT_CHECK(log, net.regMr(c.netComm, data, size, type, mhandle));
    (device ? deviceRegistrations : hostRegistrations)++;
  }
  // NCCL keeps no NULL handle (src/transport/net.cc netRegisterBuffer), so
  // it never deregisters one either.
  if (*mhandle != nullptr) c.userMhandles.push_back(*mhandle);
  return ncclSuccess;
}

ncclResult_t TransportState::deregisterUserBuffer(ConnectionState& c, void* mhandle) {
  std::lock_guard<std::mutex> lock(setupMutex);
  auto it = std::find(c.userMhandles.begin(), c.userMhandles.end(), mhandle);
  if (it == c.userMhandles.end()) {
    NCCLNET_WARN(log, "deregisterBuffer: %p is not a buffer registered on this connection",
                 mhandle);
    return ncclInvalidArgument;
  }
  c.userMhandles.erase(it);
  RT_CHECK(log, net.deregMr(c.netComm, mhandle));
  return ncclSuccess;
}

}  // namespace ncclnet::transport::detail
