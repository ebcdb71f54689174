// SPDX-License-Identifier: Apache-2.0
// A plugin connecting to its own listen in one process, polling connect and
// accept in turn as NCCL's two sides would: the check, after hostile input,
// that the listen still takes its real peer.
#pragma once

#include <chrono>
#include <cstring>

#include "ncclnet/host/net_view.hpp"

namespace ncclnet::testing {

// Null on success, else what failed. `handle` is the listen's (copied, as
// NCCL's connect may write into its buffer).
inline const char* connectToOwnListen(ncclnet::host::NetView& net, void* ctx, const char* handle,
                                      void* listenComm, std::chrono::steady_clock::duration limit) {
  char copy[NCCL_NET_HANDLE_MAXSIZE];
  std::memcpy(copy, handle, sizeof(copy));
  void* sendComm = nullptr;
  void* recvComm = nullptr;
  auto deadline = std::chrono::steady_clock::now() + limit;
  const char* why = nullptr;
  while (why == nullptr && (sendComm == nullptr || recvComm == nullptr)) {
    if (sendComm == nullptr && net.connect(ctx, 0, copy, &sendComm, nullptr) != ncclSuccess) {
      why = "the real peer's connect failed";
    } else if (recvComm == nullptr && net.accept(listenComm, &recvComm, nullptr) != ncclSuccess) {
      why = "accept of the real peer failed";
    } else if (std::chrono::steady_clock::now() > deadline) {
      why = "the real peer was not accepted in time";
    }
  }
  if (sendComm != nullptr) net.closeSend(sendComm);
  if (recvComm != nullptr) net.closeRecv(recvComm);
  return why;
}

}  // namespace ncclnet::testing
