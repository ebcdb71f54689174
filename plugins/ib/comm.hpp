// SPDX-License-Identifier: Apache-2.0
// sdk-ib: send and receive comms and NCCL's receiver-driven protocol.
//
//   receiver irecv(n buffers): posts one receive per QP, fills n
//     clear-to-send entries (address, size, rkey, tag, sequence) and RDMA
//     WRITEs them into the sender's CTS FIFO slot (sequence % 32).
//   sender isend: reads its FIFO slot; once every one of the slot's n sends
//     is posted, RDMA WRITEs each payload (on one QP, or split across all),
//     writes the n sender sizes into the receiver's sizes array, and ends
//     every QP it used with a WRITE_WITH_IMM carrying the sequence
//     (send_plan.hpp: which QPs, and when the payload carries the immediate).
//   the receive completes when every used QP's WRITE_WITH_IMM has consumed
//     its receive; the sizes it reports are the sender's. A sender size above
//     the posted size is truncation: no payload is written, both sides
//     report ncclInvalidUsage.
//   iflush, after a receive into GPU memory: a 1-byte RDMA READ of the
//     received buffer on a QP connected to itself; its completion means the
//     HCA's writes before it have reached the GPU (flush.cc).
//   a fatal async event on a comm's QP, CQ, port or HCA fails its next call
//     (async_events.hpp).
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "async_events.hpp"
#include "endpoint.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"
#include "ncclnet/request_pool.hpp"
#include "ncclnet/oob_channel.hpp"
#include "ncclnet/result_policy.hpp"
#include "send_plan.hpp"

namespace ncclnet::ib {

constexpr int kSlots = NCCL_NET_MAX_REQUESTS;

// One clear-to-send entry. `idx` is last: the FIFO write places it last, so
// a sender that sees the expected idx sees the whole entry.
struct CtsEntry {
  uint64_t addr;
  uint64_t size;
  uint32_t rkey;
  uint32_t nreqs;
  int32_t tag;
  uint32_t reserved;
  uint64_t idx;  // fifo sequence + 1; 0 never matches
};
static_assert(sizeof(CtsEntry) == 40, "CTS entries are written by RDMA: fixed layout");

// What regMr and regMrDmaBuf return: one reference on the HCA's
// registration cache, dropped when the SDK destroys the handle (after
// deregMr, or at teardown, before the HCA closes).
class MrHandle {
 public:
  MrHandle(Hca& hca, ibv_mr* mr, bool gpu) : hca(hca), mr(mr), gpu(gpu) {}
  ~MrHandle() { hca.mrs->release(mr); }
  MrHandle(const MrHandle&) = delete;
  MrHandle& operator=(const MrHandle&) = delete;

  bool covers(const void* data, size_t size) const {
    auto p = reinterpret_cast<uintptr_t>(data);
    auto base = reinterpret_cast<uintptr_t>(mr->addr);
    return size == 0 || (p >= base && p - base <= mr->length && size <= mr->length - (p - base));
  }

  Hca& hca;
  ibv_mr* const mr;
  const bool gpu;  // registered as NCCL_PTR_CUDA: receives into it need a flush
};

struct Request {
  bool isSend = false;
  bool isFlush = false;
  bool done = false;
  int n = 0;
  uint64_t seq = 0;
  size_t capacity[kMaxRecvs] = {};  // receive: posted sizes
  size_t size = 0;                  // send: bytes
  int tag = 0;
  int sizes[kMaxRecvs] = {};
  ncclResult_t error = ncclSuccess;
  std::string errorText;
};

// A registered, page-aligned block the transport itself owns.
class LocalBuffer {
 public:
  LocalBuffer(Hca& hca, size_t size);
  ~LocalBuffer();
  LocalBuffer(const LocalBuffer&) = delete;
  LocalBuffer& operator=(const LocalBuffer&) = delete;
  bool ok() const { return mr_ != nullptr; }
  void* data() const { return data_; }
  ibv_mr* mr() const { return mr_; }

 private:
  Hca& hca_;
  void* data_ = nullptr;
  ibv_mr* mr_ = nullptr;
};

// Shared by both comm kinds: the transport, the first error, and logging.
class CommBase {
 public:
  static constexpr int kLivenessCheckMs = 20;

  CommBase(const IbvApi& api, const Port& port, ncclnet::Logger log)
      : ep(api, port), log_(log), health_(std::make_shared<Health>()) {}
  virtual ~CommBase() = default;

  Endpoint ep;
  std::string peer;  // the handshake address, for messages
  // The handshake's TCP connection, kept for the comm's lifetime: nothing
  // is sent on it after the handshake, so it closes only when the peer
  // closes its comm or its process dies. An RC receiver with nothing of its
  // own to send never learns of a dead sender otherwise.
  Fd oob;

 protected:
  // The comm's first failure, its own or the one a fatal async event
  // reported (its line was logged then): every call returns it from then on.
  ncclResult_t status() const { return health_->code(); }
  // The comm's own failure: logs the line when it is the first and returns
  // the comm's code (the first failure's).
  ncclResult_t fail(Failure failure, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  // Records a failure whose line was logged already (completionError).
  ncclResult_t failLogged(ncclResult_t code, const char* reason) {
    health_->record(code, reason);
    return status();
  }
  // Whether the peer's end of `oob` has closed or keepalive gave up on it
  // (checked every kLivenessCheckMs at most).
  bool peerClosed();
  // Turns a failed completion into the comm's error: WARN with the status
  // string and a hint, ncclRemoteError for what the peer reported,
  // ncclSystemError for local failures.
  ncclResult_t completionError(const ibv_wc& wc);
  // The first failed completion: a flush explained by an async event (the
  // QP went to the error state) takes the event's result and no line;
  // anything else, completionError.
  ncclResult_t explainFailure(const ibv_wc& wc);
  // Drains the CQ, calling onSuccess for each good completion.
  template <class F>
  ncclResult_t drain(F&& onSuccess);

  ncclnet::Logger log_;
  std::shared_ptr<Health> health_;

 private:
  std::chrono::steady_clock::time_point nextLivenessCheck_{};
};

class SendComm : public CommBase {
 public:
  SendComm(const IbvApi& api, const Port& port, ncclnet::Logger log);
  bool setup(const Config& config, std::string* why);  // QPs, FIFO
  void describe(const Config& config, ConnInfo* info) const;
  void setRemote(const ConnInfo& remote) {
    remoteSizes_ = remote.addr;
    remoteSizesRkey_ = remote.rkey;
  }

  ncclResult_t isend(void* data, size_t size, int tag, const MrHandle* mh, Request** request);
  ncclResult_t test(Request& r, int* done, int* sizes);

  // How long writes in flight may still complete after the receiver's
  // handshake connection closed. A receiver that got the last message may
  // close at once, and the acknowledgement of that write travels apart from
  // the close (on a fabric, or softverbs' own link), so it can come second.
  static constexpr std::chrono::milliseconds kAcksAfterClose{2000};

 private:
  struct InFlight {
    Request* reqs[kMaxRecvs] = {};
    int nreqs = 0;
    int pending = 0;  // QPs whose WRITE_WITH_IMM has not completed
  };
  struct Pending {  // sends of the current slot, until all n are posted
    Request* reqs[kMaxRecvs] = {};
    const void* data[kMaxRecvs] = {};
    uint32_t lkey[kMaxRecvs] = {};
    int posted = 0;
  };
  const CtsEntry* slot(uint64_t seq) const;
  // isend found no clear-to-send entry for head_: still NULL while the
  // receiver lives; once its end of the handshake connection has closed (its
  // process died: it will never post one), the comm's error.
  ncclResult_t noClearToSend(const CtsEntry* entries);
  ncclResult_t postSlot(const CtsEntry* entries, int nreqs);

  bool split_ = false;            // NCCL_IB_SPLIT_DATA_ON_QPS
  bool inlineSizes_ = false;      // NCCL_IB_USE_INLINE, and the QPs accept it
  bool adaptiveRouting_ = false;  // the port's NCCL_IB_ADAPTIVE_ROUTING
  uint64_t arThreshold_ = 0;
  std::unique_ptr<LocalBuffer> fifo_;
  // int64 [kSlots][kMaxRecvs]: each slot's sizes record, read by the HCA
  // after posting unless inline (a slot is reused only once completed).
  std::unique_ptr<LocalBuffer> records_;
  uint64_t remoteSizes_ = 0;
  uint32_t remoteSizesRkey_ = 0;
  uint64_t head_ = 0;
  Pending pending_;
  InFlight inflight_[kSlots];
  // When test() first found the receiver's handshake connection closed
  // with writes in flight (zero: not yet).
  std::chrono::steady_clock::time_point closedSeenAt_{};
  ncclnet::RequestPool<Request> pool_{static_cast<size_t>(kSlots * kMaxRecvs)};
};

class RecvComm : public CommBase {
 public:
  RecvComm(const IbvApi& api, const Port& port, ncclnet::Logger log);
  bool setup(const Config& config, std::string* why);  // QPs, CTS staging, sizes
  void describe(const Config& config, ConnInfo* info) const;
  void setRemote(const ConnInfo& remote) {
    remoteFifo_ = remote.addr;
    remoteFifoRkey_ = remote.rkey;
  }

  ncclResult_t irecv(int n, void** data, const size_t* sizes, const int* tags,
                     MrHandle* const* mhandles, Request** request);
  // A NULL request when nothing needs flushing: host memory, nothing
  // received, or flushing disabled (NCCL_GDR_FLUSH_DISABLE).
  ncclResult_t iflush(int n, void** data, const int* sizes, MrHandle* const* mhandles,
                      Request** request);
  ncclResult_t test(Request& r, int* done, int* sizes);

 private:
  void finish(Request* r, int slot);

  bool split_ = false;      // NCCL_IB_SPLIT_DATA_ON_QPS
  bool inlineCts_ = false;  // NCCL_IB_USE_INLINE
  // The flush QP, when the port can register GPU memory (flush.cc).
  bool setupFlush(const Config& config, std::string* why);
  ncclResult_t testFlush(Request& r, int* done);

  std::unique_ptr<LocalBuffer> staging_;  // CTS entries, the source of the FIFO writes
  std::unique_ptr<LocalBuffer> sizes_;    // int64 [kSlots][kMaxRecvs], written by the sender
  uint64_t remoteFifo_ = 0;
  uint32_t remoteFifoRkey_ = 0;
  uint64_t head_ = 0;
  Request* slots_[kSlots] = {};
  int pending_[kSlots] = {};
  ncclnet::RequestPool<Request> pool_{static_cast<size_t>(kSlots)};
  // Declared before the QP, so destroyed after it: a READ still in flight
  // must find no QP rather than a freed sink.
  std::unique_ptr<LocalBuffer> flushSink_;  // where the flush READs land
  std::unique_ptr<Endpoint> flushEp_;       // one RC QP connected to itself
  ncclnet::RequestPool<Request> flushPool_{static_cast<size_t>(kSlots)};
};

}  // namespace ncclnet::ib

namespace ncclnet::ib {

template <class F>
ncclResult_t CommBase::drain(F&& onSuccess) {
  constexpr int kBatch = 16;
  ibv_wc wcs[kBatch];
  while (status() == ncclSuccess) {
    int n = IbvApi::pollCq(ep.cq(), kBatch, wcs);
    if (n < 0) {
      fail(Failure::kSystemCall, "ibv_poll_cq failed (%d) on the connection to %s", n,
           peer.c_str());
      break;
    }
    for (int i = 0; i < n; i++) {
      if (wcs[i].status != IBV_WC_SUCCESS) {
        // The first failure explains; the flushes that follow do not.
        if (status() == ncclSuccess) failLogged(explainFailure(wcs[i]), "a failed completion");
        continue;
      }
      onSuccess(wcs[i]);
    }
    if (n < kBatch) break;
  }
  return status();
}

}  // namespace ncclnet::ib
