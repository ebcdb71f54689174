// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): connecting a connection — NCCL's
// sendProxyConnect / recvProxyConnect: the non-blocking connect/accept
// (alone, or once per shared comm), device-handle negotiation, then the
// memory map.
#include "transport_state.hpp"

namespace ncclnet::transport::detail {

// NCCL's rule for the current UNPACK version: only a receive connection of
// an UNPACK v7 device gets a handle (preallocated, type and version set, for
// the plugin to fill in accept). Everyone else passes a pointer to NULL.
ncclResult_t TransportState::negotiateDeviceHandle(ConnectionState& c) {
  bool needsHandle = c.netDeviceType == NCCL_NET_DEVICE_UNPACK &&
                     c.netDeviceVersion == NCCL_NET_DEVICE_UNPACK_VERSION &&
                     c.direction == Direction::Recv;
  if (!needsHandle) {
    c.deviceHandle = nullptr;
    return ncclSuccess;
  }
  if (!c.ownedDeviceHandle) {
    c.ownedDeviceHandle = std::make_unique<ncclNetDeviceHandle_v12_t>();
    c.ownedDeviceHandle->netDeviceType = c.netDeviceType;
    c.ownedDeviceHandle->netDeviceVersion = c.netDeviceVersion;
  }
  c.deviceHandle = c.ownedDeviceHandle.get();
  return ncclSuccess;
}

ncclResult_t TransportState::connectSend(ConnectionState& c, const NetHandle& handle) {
  std::lock_guard<std::mutex> lock(setupMutex);
  if (c.connected) return ncclSuccess;
  if (!c.haveConnectHandle) {  // plugins keep connect state in the handle
    c.connectHandle = handle;
    c.haveConnectHandle = true;
  }
  RT_CHECK(log, negotiateDeviceHandle(c));
  ncclResult_t ret = ncclSuccess;
  if (c.sharedComm) {
    SharedComm& shared =
        comms[{int(Direction::Send), c.spec.netDev, c.spec.tpRemoteRank, c.spec.channelId}];
    if (shared.owner == nullptr) shared.owner = &c;  // only one connection connects
    if (shared.comm == nullptr && shared.owner == &c) {
      ret = net.connect(ctx, c.spec.netDev, c.connectHandle.bytes, &shared.comm, &c.deviceHandle);
    }
    if (ret == ncclSuccess && shared.comm != nullptr) {
      c.netComm = shared.comm;
      shared.refs++;
    }
  } else {
    ret = net.connect(ctx, c.spec.netDev, c.connectHandle.bytes, &c.netComm, &c.deviceHandle);
    if (ret != ncclSuccess && c.netComm != nullptr) {
      net.closeSend(c.netComm);
      c.netComm = nullptr;
    }
  }
  RT_CHECK(log, ret);
  if (c.netComm == nullptr) return ncclInProgress;
  return finishConnect(c);
}

ncclResult_t TransportState::acceptRecv(ConnectionState& c) {
  std::lock_guard<std::mutex> lock(setupMutex);
  if (c.connected) return ncclSuccess;
  RT_CHECK(log, negotiateDeviceHandle(c));
  ncclResult_t ret = ncclSuccess;
  if (c.sharedComm) {
    SharedComm& shared =
        comms[{int(Direction::Recv), c.spec.netDev, c.spec.tpRemoteProxyRank, c.spec.channelId}];
    if (shared.owner == nullptr) shared.owner = &c;  // only one connection accepts
    if (shared.comm == nullptr && shared.owner == &c) {
      ret = net.accept(c.listenComm, &shared.comm, &c.deviceHandle);
    }
    if (ret == ncclSuccess && shared.comm != nullptr) {
      c.netComm = shared.comm;
      shared.refs++;
    }
  } else {
    ret = net.accept(c.listenComm, &c.netComm, &c.deviceHandle);
  }
  RT_CHECK(log, ret);
  if (c.netComm == nullptr) return ncclInProgress;
  // The listen is done with, accepted or not (a connection that reuses a
  // shared comm never accepts on its own listen; NCCL closes it anyway).
  RT_CHECK(log, net.closeListen(c.listenComm));
  c.listenComm = nullptr;
  return finishConnect(c);
}

ncclResult_t TransportState::finishConnect(ConnectionState& c) {
  // Without a device handle the proxy must progress the connection; with
  // one, the plugin says (NCCL then installs no progress function).
  c.needsProxyProgress = c.deviceHandle == nullptr || c.deviceHandle->needsProxyProgress != 0;
  RT_CHECK(log, planMap(c));
  RT_CHECK(log, allocateMap(c));
  RT_CHECK(log, registerBuffers(c));

  DeviceConnection& d = c.device;
  d.direction = c.direction;
  d.sendMem = reinterpret_cast<SendMem*>(c.map.gpu(c.map.sendMem));
  d.recvMem = reinterpret_cast<RecvMem*>(c.map.gpu(c.map.recvMem));
  for (int p = 0; p < kNumProtocols; p++) {
    d.buffs[p] = c.map.gpu(c.map.buffs[p]);
    d.stepSize[p] = config.stepSize(static_cast<Protocol>(p));
  }
  d.offsetMode = c.shared;
  d.p2pChunkSize = config.p2pChunkSize;
  d.hasNetDeviceHandle = c.deviceHandle != nullptr;
  if (c.deviceHandle != nullptr) d.netDeviceHandle = *c.deviceHandle;
  c.connected = true;
  NCCLNET_INFO(log, NCCL_INIT | NCCL_NET, "Channel %02d/%d : %d -> %d [%s] via NET/%s/%d%s%s%s",
               c.spec.channelId, c.spec.connIndex,
               c.direction == Direction::Send ? c.spec.tpRank : c.spec.tpRemoteRank,
               c.direction == Direction::Send ? c.spec.tpRemoteRank : c.spec.tpRank,
               c.direction == Direction::Send ? "send" : "receive", net.name(), c.spec.netDev,
               c.spec.useGdr ? "/GDRDMA" : "", c.shared ? "/Shared" : "",
               c.sharedComm ? "/SharedComm" : "");
  return ncclSuccess;
}

}  // namespace ncclnet::transport::detail
