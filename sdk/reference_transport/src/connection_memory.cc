// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk (reference transport): a connection's memory — planning the
// map (which bank each buffer lives in), backing it, initialising the
// control words, and registering each buffer with the plugin.
#include <unistd.h>

#include <new>
#include <string>

#include "transport_state.hpp"

namespace ncclnet::transport::detail {

// NCCL's placement rules:
//  * dedicated buffers (ring/tree): send LL always in host memory, send
//    LL128/SIMPLE and every receive buffer in device memory when GDR is used;
//  * shared (p2p): SIMPLE is the local rank's pool (device memory with GDR),
//    LL only with NCCL_ALLOC_P2P_NET_LL_BUFFERS (host), no LL128;
//  * the control words always in host memory.
ncclResult_t TransportState::planMap(ConnectionState& c) {
  ConnectMap& map = c.map;
  bool gdr = c.spec.useGdr;
  if (!c.shared) {
    for (int p = 0; p < kNumProtocols; p++) {
      bool device = gdr && (c.direction == Direction::Recv || p != index(Protocol::LL));
      map.buffs[p] = map.reserve(device ? Bank::Device : Bank::Host, config.buffSizes[p]);
      c.buffSizes[p] = config.buffSizes[p];
    }
  } else {
    size_t poolSize = static_cast<size_t>(config.p2pnChannels) * kSharedSteps * config.p2pChunkSize;
    if (config.allocP2pNetLLBuffers) {
      map.buffs[index(Protocol::LL)] =
          map.reserve(Bank::Host, config.buffSizes[index(Protocol::LL)]);
      c.buffSizes[index(Protocol::LL)] = config.buffSizes[index(Protocol::LL)];
    }
    map.buffs[index(Protocol::Simple)] =
        map.reserve(gdr ? Bank::SharedDevice : Bank::SharedHost, poolSize);
    c.buffSizes[index(Protocol::Simple)] = poolSize;
  }
  map.sendMem = map.reserve(Bank::Host, sizeof(SendMem));
  map.recvMem = map.reserve(Bank::Host, sizeof(RecvMem));
  return ncclSuccess;
}

ncclResult_t TransportState::allocateMap(ConnectionState& c) {
  ConnectMap& map = c.map;
  RT_CHECK(log, memory->allocHost(map.bank(Bank::Host).size, &c.hostBank));
  map.attach(Bank::Host, c.hostBank.cpu(), c.hostBank.gpu(), c.hostBank.size());
  if (map.bank(Bank::Device).size > 0) {
    RT_CHECK(log, memory->allocDevice(map.bank(Bank::Device).size, &c.deviceBank));
    map.attach(Bank::Device, c.deviceBank.cpu(), c.deviceBank.gpu(), c.deviceBank.size());
  }
  if (c.shared) {
    SharedPool* pool = nullptr;
    RT_CHECK(log, acquirePool(c, &pool));
    c.pool = pool;
    Bank bank = pool->device ? Bank::SharedDevice : Bank::SharedHost;
    map.attach(bank, pool->memory.cpu(), pool->memory.gpu(), pool->memory.size());
  }
  for (int p = 0; p < kNumProtocols; p++) c.buffers[p] = map.cpu(map.buffs[p]);

  // Control words: constructed in place in the (zeroed) host bank, the
  // fifo entries first and the counters last. The proxy and the device peer
  // get these addresses through their mutex-guarded queues, whose lock
  // orders every store here before their first load. The counters are
  // stored with release all the same, like every later publication of them
  // (conn_mem.hpp): the initial head and tail publish the entries stored
  // before them, as each later value does.
  c.sendMem = new (map.cpu(map.sendMem)) SendMem();
  c.recvMem = new (map.cpu(map.recvMem)) RecvMem();
  for (ConnFifoEntry& e : c.recvMem->connFifo) {
    e.size.store(kFifoEmpty, std::memory_order_relaxed);
    e.offset.store(kFifoNoOffset, std::memory_order_relaxed);
    e.mode.store(int32_t(c.shared ? FifoMode::Offset : FifoMode::Normal),
                 std::memory_order_relaxed);
  }
  // A shared send connection starts with no credit: the proxy hands out
  // each step together with its pool offset (head = base + posted - kSteps).
  bool noCredit = c.direction == Direction::Send && c.shared;
  c.sendMem->head.store(noCredit ? static_cast<uint64_t>(-kSteps) : 0, std::memory_order_release);
  c.recvMem->tail.store(0, std::memory_order_release);
  return ncclSuccess;
}

// Each buffer is registered with this connection's comm (a shared pool is
// registered again by every connection that uses it, as NCCL does): host
// buffers with regMr(NCCL_PTR_HOST), device buffers with regMrDmaBuf when
// the connection uses DMA-BUF (decided at setup), else regMr(NCCL_PTR_CUDA).
// Then getDeviceMr translates each one when the connection has a device
// side that needs it: send with a device handle, receive on a non-HOST
// device.
ncclResult_t TransportState::registerBuffers(ConnectionState& c) {
  for (int p = 0; p < kNumProtocols; p++) {
    if (c.buffers[p] == nullptr) continue;
    bool device = ConnectMap::isDevice(c.map.buffs[p]);
    if (device && c.useDmaBuf) {
      RT_CHECK(log, registerDmaBuf(c, c.buffers[p], c.buffSizes[p],
                                   protocolName(static_cast<Protocol>(p)), &c.mhandles[p]));
    } else {
      int type = device ? memory->devicePtrType() : NCCL_PTR_HOST;
      RT_CHECK(log, net.regMr(c.netComm, c.buffers[p], c.buffSizes[p], type, &c.mhandles[p]));
      (device ? deviceRegistrations : hostRegistrations)++;
    }
    bool wantsDeviceMr = c.direction == Direction::Send ? c.deviceHandle != nullptr
                                                        : c.netDeviceType != NCCL_NET_DEVICE_HOST;
    if (wantsDeviceMr && net.provides(host::Optional::GetDeviceMr)) {
      RT_CHECK(log, net.getDeviceMr(c.netComm, c.mhandles[p], &c.device.mhandles[p]));
    }
  }
  return ncclSuccess;
}

// One buffer through DMA-BUF: the provider exports the pages around it, the
// plugin registers [data, data + size) at its offset in that fd, and the fd
// is closed at once (the plugin holds its own reference), as NCCL does.
ncclResult_t TransportState::registerDmaBuf(ConnectionState& c, void* data, size_t size,
                                            const char* what, void** mhandle) {
  int fd = -1;
  uint64_t offset = 0;
  std::string why;
  if (!memory->exportDmaBuf(data, size, &fd, &offset, &why)) {
    NCCLNET_WARN(log, "DMA-BUF export of the %s buffer (%zu bytes at %p) failed: %s", what, size,
                 data, why.c_str());
    return ncclSystemError;
  }
  ncclResult_t res =
      net.regMrDmaBuf(c.netComm, data, size, memory->devicePtrType(), offset, fd, mhandle);
  ::close(fd);
  RT_CHECK(log, res);
  dmaBufRegistrations++;
  return ncclSuccess;
}

ncclResult_t TransportState::acquirePool(ConnectionState& c, SharedPool** out) {
  auto key = std::make_tuple(c.spec.tpLocalRank, int(c.direction), c.spec.useGdr);
  std::unique_ptr<SharedPool>& pool = pools[key];
  if (!pool) {
    auto created = std::make_unique<SharedPool>();
    size_t size = static_cast<size_t>(config.p2pnChannels) * kSharedSteps * config.p2pChunkSize;
    ncclResult_t res = c.spec.useGdr ? memory->allocDevice(size, &created->memory)
                                     : memory->allocHost(size, &created->memory);
    if (res != ncclSuccess) {
      pools.erase(key);
      RT_CHECK(log, res);
    }
    created->device = c.spec.useGdr;
    pool = std::move(created);
  }
  pool->refs++;
  *out = pool.get();
  return ncclSuccess;
}

}  // namespace ncclnet::transport::detail
