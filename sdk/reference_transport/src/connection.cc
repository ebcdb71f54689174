// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): the Connection handle.
#include "ncclnet/transport/connection.hpp"

#include <cstdio>

#include "transport_state.hpp"

namespace ncclnet::transport {

Connection::Connection(std::unique_ptr<detail::ConnectionState> state) : state_(std::move(state)) {}

Connection::~Connection() {
  if (state_) state_->core->release(*state_);
}

ncclResult_t Connection::connect(const NetHandle& peerHandle) {
  if (state_->direction != Direction::Send) {
    NCCLNET_WARN(state_->core->log, "connect() on a receive connection; use accept()");
    return ncclInvalidUsage;
  }
  return state_->core->connectSend(*state_, peerHandle);
}

ncclResult_t Connection::accept() {
  if (state_->direction != Direction::Recv) {
    NCCLNET_WARN(state_->core->log, "accept() on a send connection; use connect()");
    return ncclInvalidUsage;
  }
  return state_->core->acceptRecv(*state_);
}

Direction Connection::direction() const {
  return state_->direction;
}
const ConnectionSpec& Connection::spec() const {
  return state_->spec;
}
bool Connection::connected() const {
  return state_->connected;
}
bool Connection::shared() const {
  return state_->shared;
}
bool Connection::usesSharedComm() const {
  return state_->sharedComm;
}
bool Connection::needsProxyProgress() const {
  return state_->needsProxyProgress;
}
void* Connection::netComm() const {
  return state_->netComm;
}
const ConnectMap& Connection::map() const {
  return state_->map;
}
DeviceConnection* Connection::device() {
  return state_->connected ? &state_->device : nullptr;
}

ncclResult_t Connection::registerBuffer(void* data, size_t size, bool device, void** mhandle) {
  return state_->core->registerUserBuffer(*state_, data, size, device, mhandle);
}
ncclResult_t Connection::deregisterBuffer(void* mhandle) {
  return state_->core->deregisterUserBuffer(*state_, mhandle);
}

std::string Connection::describe() const {
  char head[200];
  std::snprintf(head, sizeof(head), "%s ch %d conn %d rank %d peer %d%s%s\n",
                directionName(state_->direction), state_->spec.channelId, state_->spec.connIndex,
                state_->spec.tpRank, state_->spec.tpRemoteRank, state_->shared ? " shared" : "",
                state_->sharedComm ? " shared-comm" : "");
  return head + state_->map.describe();
}

}  // namespace ncclnet::transport
