// SPDX-License-Identifier: Apache-2.0
// softverbs: the verbs objects. Each embeds the public libibverbs struct as
// its first member, so the pointer an application holds converts back.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "async.hpp"
#include "gpu.hpp"
#include "wire.hpp"

namespace softverbs {

class Device;

struct Context {
  verbs_context vctx;  // the application sees &vctx.context
  Device* device = nullptr;
  std::unique_ptr<AsyncQueue> async;  // behind vctx.context.async_fd
};

inline Context* contextOf(ibv_context* context) {
  return reinterpret_cast<Context*>(reinterpret_cast<char*>(context) -
                                    offsetof(verbs_context, context));
}

struct Pd {
  ibv_pd pd;
  int users = 0;  // MRs and QPs on it (guarded by the device lock)
};

struct Mr {
  ibv_mr mr;
  Pd* pd = nullptr;
  unsigned access = 0;
  std::unique_ptr<GpuMemory> gpu;  // set when the MR covers CUDA device memory

  bool covers(uint64_t addr, uint64_t length) const {
    uint64_t base = reinterpret_cast<uintptr_t>(mr.addr);
    return addr >= base && length <= mr.length && addr - base <= mr.length - length;
  }
};

// Completion queue: one lock of its own, taken after the device lock.
struct Cq {
  ibv_cq cq;
  std::mutex mutex;
  std::deque<ibv_wc> entries;
  int users = 0;  // QPs that send completions here (guarded by the device lock)

  void push(const ibv_wc& wc) {
    std::lock_guard<std::mutex> lock(mutex);
    entries.push_back(wc);
  }
};

// A send-queue entry from posting until the responder's verdict.
struct SendWqe {
  uint64_t wrId = 0;
  uint64_t seq = 0;
  ibv_wc_opcode opcode = IBV_WC_SEND;
  bool signaled = false;
  uint32_t byteLen = 0;
  ibv_wc_status localError = IBV_WC_SUCCESS;  // set when posting found a bad lkey
  std::vector<ibv_sge> readTargets;           // where an RDMA READ's data goes
};

struct RecvWqe {
  uint64_t wrId = 0;
  std::vector<ibv_sge> sges;
};

// An inbound request that needs a receive while none is posted. Real RC
// answers with RNR NAKs and retries (forever with rnr_retry 7); holding it
// has the same visible effect and keeps later requests in order behind it.
struct Inbound {
  PacketHeader header;
  std::vector<char> payload;
};

struct Qp {
  ibv_qp qp;
  Device* device = nullptr;
  Pd* pd = nullptr;
  Cq* sendCq = nullptr;
  Cq* recvCq = nullptr;
  ibv_qp_cap cap{};
  bool signalAll = true;
  unsigned access = 0;  // IBV_ACCESS_REMOTE_* granted to peers
  uint8_t port = 1;
  uint16_t pkeyIndex = 0;
  uint16_t pkey = 0xffff;  // the P_Key at pkeyIndex, carried by every request
  ibv_mtu mtu = IBV_MTU_1024;
  ibv_ah_attr ah{};
  uint32_t remoteDevice = 0;  // decoded from the destination GID
  uint32_t remoteQpn = 0;
  uint32_t rqPsn = 0;
  uint32_t sqPsn = 0;
  uint8_t timeout = 0;
  uint8_t retryCnt = 0;
  uint8_t rnrRetry = 0;
  uint8_t minRnrTimer = 0;
  uint8_t maxRdAtomic = 0;
  uint8_t maxDestRdAtomic = 0;
  uint64_t nextSeq = 1;
  bool sendHeld = false;  // a WR failed locally: later ones wait for the flush
  std::deque<SendWqe> sq;
  std::deque<RecvWqe> rq;
  std::deque<Inbound> held;
};

}  // namespace softverbs
