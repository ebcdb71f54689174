// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport), internal: the state a Transport owns
// and a connection's resources (NCCL's sendNetResources/recvNetResources).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "ncclnet/host/net_view.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/transport/config.hpp"
#include "ncclnet/transport/connection.hpp"
#include "ncclnet/transport/memory.hpp"

namespace ncclnet::transport::detail {

class TransportState;
class ProgressEngine;

// Propagates an error with one line per frame, like NCCLCHECK.
#define RT_CHECK(logger, call)                                                            \
  do {                                                                                    \
    ncclResult_t rtCheckResult = (call);                                                  \
    if (rtCheckResult != ncclSuccess && rtCheckResult != ncclInProgress) {                \
      NCCLNET_WARN(logger, "%s:%d -> %d (%s)", __FILE__, __LINE__, rtCheckResult, #call); \
      return rtCheckResult;                                                               \
    }                                                                                     \
  } while (0)

// A p2p pool of one local rank and direction: p2pnChannels x kSharedSteps
// slots of p2pChunkSize bytes, shared by all that rank's p2p connections.
struct SharedPool {
  Allocation memory;
  bool device = false;
  int refs = 0;
  // Byte offset of shared slot `slot` (0..kSharedSteps-1) of `channel`.
  size_t offset(size_t chunkSize, int channel, int slot) const {
    return (static_cast<size_t>(channel) * kSharedSteps + slot) * chunkSize;
  }
};

// A net comm shared by the connections of one (netDev, remote rank,
// channel): the first connection to arrive connects (or accepts); the
// others wait for its comm and take a reference.
struct SharedComm {
  void* comm = nullptr;
  const void* owner = nullptr;
  int refs = 0;
};

struct ConnectionState {
  TransportState* core = nullptr;
  Direction direction = Direction::Send;
  ConnectionSpec spec;

  // From the device properties at setup.
  int maxRecvs = 1;
  ncclNetDeviceType netDeviceType = NCCL_NET_DEVICE_HOST;
  int netDeviceVersion = 0;
  bool useDmaBuf = false;   // device buffers go through regMrDmaBuf
  bool shared = false;      // p2p pool for SIMPLE
  bool sharedComm = false;  // comm reused through the SharedComm registry

  // Plugin objects.
  NetHandle listenHandle;   // recv: what listen produced
  NetHandle connectHandle;  // send: the peer's handle, passed again on every retry
  bool haveConnectHandle = false;
  void* listenComm = nullptr;
  void* netComm = nullptr;
  ncclNetDeviceHandle_v12_t* deviceHandle = nullptr;  // what connect/accept were given
  std::unique_ptr<ncclNetDeviceHandle_v12_t> ownedDeviceHandle;
  bool needsProxyProgress = true;
  bool connected = false;

  // Memory.
  ConnectMap map;
  Allocation hostBank;
  Allocation deviceBank;
  SharedPool* pool = nullptr;  // a reference held while connected
  SendMem* sendMem = nullptr;  // CPU addresses of the control words
  RecvMem* recvMem = nullptr;
  char* buffers[kNumProtocols] = {};
  size_t buffSizes[kNumProtocols] = {};
  void* mhandles[kNumProtocols] = {};
  std::vector<void*> userMhandles;  // registered user buffers, deregistered at release

  // Proxy: the first step of the next operation on this connection.
  uint64_t step = 0;

  DeviceConnection device;

  // Only touched by the progress thread once connected.
  size_t stepSize(Protocol p) const { return buffSizes[index(p)] / kSteps; }
};

class TransportState {
 public:
  TransportState(host::NetView& net, TransportConfig config, Logger logger,
                 std::shared_ptr<MemoryProvider> memory);
  ~TransportState();

  host::NetView& net;
  void* ctx = nullptr;
  bool initialized = false;
  const TransportConfig config;
  const Logger log;
  const std::shared_ptr<MemoryProvider> memory;
  std::unique_ptr<ProgressEngine> engine;

  // Setup and teardown run on callers' threads; this lock covers the pool
  // and comm registries and the plugin's setup calls.
  std::mutex setupMutex;
  std::map<std::tuple<int, int, bool>, std::unique_ptr<SharedPool>>
      pools;                                                   // (localRank, dir, device)
  std::map<std::tuple<int, int, int, int>, SharedComm> comms;  // (dir, netDev, remote, channel)
  int liveConnections = 0;

  // Registrations made (Transport::registrations).
  std::atomic<uint64_t> hostRegistrations{0};
  std::atomic<uint64_t> deviceRegistrations{0};
  std::atomic<uint64_t> dmaBufRegistrations{0};

  ncclResult_t connectSend(ConnectionState& c, const NetHandle& handle);
  ncclResult_t registerUserBuffer(ConnectionState& c, void* data, size_t size, bool device,
                                  void** mhandle);
  ncclResult_t deregisterUserBuffer(ConnectionState& c, void* mhandle);
  ncclResult_t acceptRecv(ConnectionState& c);
  void release(ConnectionState& c);

 private:
  ncclResult_t negotiateDeviceHandle(ConnectionState& c);
  ncclResult_t finishConnect(ConnectionState& c);
  ncclResult_t planMap(ConnectionState& c);
  ncclResult_t allocateMap(ConnectionState& c);
  ncclResult_t registerBuffers(ConnectionState& c);
  ncclResult_t registerDmaBuf(ConnectionState& c, void* data, size_t size, const char* what,
                              void** mhandle);
  ncclResult_t acquirePool(ConnectionState& c, SharedPool** out);
  void releasePool(ConnectionState& c);
  void releaseComm(ConnectionState& c);
};

}  // namespace ncclnet::transport::detail
