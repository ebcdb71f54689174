// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): freeing a connection — NCCL's
// sendProxyFree / recvProxyFree: deregister, drop the pool, close (or
// unreference) the comm, close a listen that was never used.
#include "progress_engine.hpp"
#include "transport_state.hpp"

namespace ncclnet::transport::detail {

namespace {
void warnIfFailed(const Logger& log, ncclResult_t res, const char* what) {
  if (res != ncclSuccess) NCCLNET_WARN(log, "teardown: %s returned %d", what, res);
}
}  // namespace

void TransportState::releasePool(ConnectionState& c) {
  if (c.pool == nullptr) return;
  for (auto it = pools.begin(); it != pools.end(); ++it) {
    if (it->second.get() != c.pool) continue;
    if (--it->second->refs == 0) pools.erase(it);
    break;
  }
  c.pool = nullptr;
}

void TransportState::releaseComm(ConnectionState& c) {
  bool send = c.direction == Direction::Send;
  if (!c.sharedComm) {
    if (c.netComm != nullptr) {
      warnIfFailed(log, send ? net.closeSend(c.netComm) : net.closeRecv(c.netComm), "close");
    }
    c.netComm = nullptr;
    return;
  }
  int remote = send ? c.spec.tpRemoteRank : c.spec.tpRemoteProxyRank;
  auto it = comms.find({int(c.direction), c.spec.netDev, remote, c.spec.channelId});
  if (it == comms.end()) return;
  SharedComm& shared = it->second;
  if (c.netComm != nullptr) shared.refs--;
  // The last user closes it; an owner that never finished connecting
  // leaves the entry for nobody, so it is removed too.
  bool abandoned = shared.comm == nullptr && shared.owner == &c;
  if ((shared.comm != nullptr && shared.refs == 0) || abandoned) {
    if (shared.comm != nullptr) {
      warnIfFailed(log, send ? net.closeSend(shared.comm) : net.closeRecv(shared.comm), "close");
    }
    comms.erase(it);
  } else if (shared.owner == &c) {
    shared.owner = nullptr;
  }
  c.netComm = nullptr;
}

void TransportState::release(ConnectionState& c) {
  if (engine) engine->cancel(&c);
  std::lock_guard<std::mutex> lock(setupMutex);
  if (c.connected) {
    for (void* mhandle : c.userMhandles) {
      warnIfFailed(log, net.deregMr(c.netComm, mhandle), "deregMr of a user buffer");
    }
    c.userMhandles.clear();
    for (int p = 0; p < kNumProtocols; p++) {
      if (c.mhandles[p] != nullptr)
        warnIfFailed(log, net.deregMr(c.netComm, c.mhandles[p]), "deregMr");
      c.mhandles[p] = nullptr;
    }
  }
  releasePool(c);
  releaseComm(c);
  if (c.listenComm != nullptr) warnIfFailed(log, net.closeListen(c.listenComm), "closeListen");
  c.listenComm = nullptr;
  c.connected = false;
  liveConnections--;
}

}  // namespace ncclnet::transport::detail
