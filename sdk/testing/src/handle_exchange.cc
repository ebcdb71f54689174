// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: a connection between the two processes of a test.
#include "ncclnet/testing/handle_exchange.hpp"

#include "ncclnet/testing/net_polling.hpp"

namespace ncclnet::testing {

ncclResult_t listenAndAccept(PluginSession& s, Channel& peer, void** recvComm, double seconds) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listenComm = nullptr;
  ncclResult_t res = listenOn(s, handle, &listenComm);
  if (res != ncclSuccess) return res;
  res = peer.send(handle, sizeof(handle)) ? acceptFrom(s, listenComm, recvComm, seconds)
                                          : ncclSystemError;
  ncclResult_t closed = s.net().closeListen(listenComm);
  return res != ncclSuccess ? res : closed;
}

ncclResult_t receiveHandleAndConnect(PluginSession& s, Channel& peer, void** sendComm,
                                     double seconds) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  if (!peer.receive(handle, sizeof(handle), seconds)) return ncclTimeout;
  return connectTo(s, handle, sendComm, seconds);
}

}  // namespace ncclnet::testing
