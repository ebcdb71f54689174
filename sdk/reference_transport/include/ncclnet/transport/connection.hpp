// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): one net connection, send or receive,
// for one (peer, channel, connIndex). Created by Transport::sendSetup /
// recvSetup; then connect()/accept() is polled until it stops returning
// ncclInProgress (the plugin's connect/accept never block); then the device
// side and proxy operations may use it. Destroying it deregisters its
// buffers, closes (or drops its reference on) its comm and releases its
// share of the p2p pool.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ncclnet/abi/net.h"
#include "ncclnet/transport/connect_map.hpp"
#include "ncclnet/transport/device_connection.hpp"

namespace ncclnet::transport {

namespace detail {
struct ConnectionState;
}

// The connect handle the receiver's listen produced (NCCL passes it through
// its bootstrap; tests pass it through memory or a pipe).
struct NetHandle {
  char bytes[NCCL_NET_HANDLE_MAXSIZE] = {};
};

// How NCCL's sendSetup/recvSetup describe a connection.
struct ConnectionSpec {
  int netDev = 0;
  int channelId = 0;
  int connIndex = 0;           // p2p connections use 1; ring/tree use 0
  bool graph = true;           // ring/tree (true) or p2p (false, shared-buffer candidate)
  int tpRank = 0;              // my rank: the tag of my sends
  int tpLocalRank = 0;         // my rank on this node: owns a p2p pool
  int tpRemoteRank = 0;        // the peer: the tag my receives expect; send-side shared-comm key
  int tpRemoteProxyRank = -1;  // recv: the rank whose proxy sends to me (-1: tpRemoteRank)
  bool useGdr = false;         // buffers in device memory (NCCL_PTR_CUDA)
  bool needFlush = false;      // recv: the platform needs iflush after GDR receives
};

class Connection {
 public:
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Send side: polls the plugin's connect with the receiver's handle.
  // ncclSuccess when connected, ncclInProgress to call again, or an error.
  ncclResult_t connect(const NetHandle& peerHandle);
  // Receive side: polls the plugin's accept.
  ncclResult_t accept();

  Direction direction() const;
  const ConnectionSpec& spec() const;
  bool connected() const;
  bool shared() const;              // SIMPLE steps live in the p2p pool
  bool usesSharedComm() const;      // the comm is shared with other connections
  bool needsProxyProgress() const;  // false: a device-offload plugin moves the data itself
  void* netComm() const;            // sendComm or recvComm, once connected
  const ConnectMap& map() const;
  // Valid once connected; the device peer's view of this connection.
  DeviceConnection* device();

  // User buffer registration (NCCL's sendProxyRegBuffer/recvProxyRegBuffer)
  // on this connection's comm, once connected: `device` says the buffer is
  // device memory (registered as the memory provider's device type).
  // Buffers still registered when the connection is destroyed are
  // deregistered first, as NCCL does before closing a comm.
  ncclResult_t registerBuffer(void* data, size_t size, bool device, void** mhandle);
  ncclResult_t deregisterBuffer(void* mhandle);
  std::string describe() const;

  detail::ConnectionState& state() { return *state_; }

 private:
  friend class Transport;
  explicit Connection(std::unique_ptr<detail::ConnectionState> state);
  std::unique_ptr<detail::ConnectionState> state_;
};

}  // namespace ncclnet::transport
