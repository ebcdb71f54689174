// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the receiver side — posting receives as clear-to-send entries,
// completing them with the sender's sizes.
#include <cinttypes>
#include <cstring>

#include "comm.hpp"

namespace ncclnet::ib {
namespace {

constexpr uint64_t kCtsWrId = ~0ull;  // completions of FIFO writes carry no request

}  // namespace

RecvComm::RecvComm(const IbvApi& api, const Port& port, ncclnet::Logger log)
    : CommBase(api, port, log) {}

bool RecvComm::setup(const Config& config, std::string* why) {
  split_ = config.splitDataOnQps;
  // QP 0 sends one FIFO write per receive; each QP takes one receive per
  // message for the sender's WRITE_WITH_IMM.
  constexpr uint32_t kCtsBytes = kMaxRecvs * sizeof(CtsEntry);
  QpSizes sizes{static_cast<uint32_t>(2 * kSlots), static_cast<uint32_t>(kSlots + 1),
                config.useInline ? kCtsBytes : 0u};
  ep.watchWith(health_, "receive comm from " + peer);
  if (!ep.create(config.qpsPerConnection, sizes, why)) return false;
  inlineCts_ = config.useInline;
  Hca& hca = *ep.port().hca;
  staging_ = std::make_unique<LocalBuffer>(hca, sizeof(CtsEntry) * kSlots * kMaxRecvs);
  sizes_ = std::make_unique<LocalBuffer>(hca, sizeof(int64_t) * kSlots * kMaxRecvs);
  if (!staging_->ok() || !sizes_->ok()) {
    *why = "cannot allocate and register the receive bookkeeping";
    return false;
  }
  return setupFlush(config, why);
}

void RecvComm::describe(const Config& config, ConnInfo* info) const {
  ep.describe(config, info);
  info->addr = reinterpret_cast<uintptr_t>(sizes_->data());
  info->rkey = sizes_->mr()->rkey;
}

ncclResult_t RecvComm::irecv(int n, void** data, const size_t* sizes, const int* tags,
                             MrHandle* const* mhandles, Request** request) {
  *request = nullptr;
  if (status() != ncclSuccess) return status();
  const int s = static_cast<int>(head_ % kSlots);
  if (slots_[s] != nullptr) return ncclSuccess;  // that slot's receive is not tested yet
  Request* req = pool_.acquire();
  if (req == nullptr) return ncclSuccess;
  // A receive on every QP the sender's message will use (send_plan.hpp).
  const int first = firstQpFor(head_, ep.nqps(), split_);
  const int used = usedQpsFor(ep.nqps(), split_);
  for (int q = first; q < first + used; q++) {
    ibv_recv_wr wr{};
    wr.wr_id = head_;
    ibv_recv_wr* bad = nullptr;
    int rc = IbvApi::postRecv(ep.qp(q), &wr, &bad);
    if (rc != 0) {
      pool_.release(req);
      return fail(Failure::kSystemCall, "irecv: ibv_post_recv failed: %s", strerror(rc));
    }
  }
  auto* record = static_cast<int64_t*>(sizes_->data()) + s * kMaxRecvs;
  for (int i = 0; i < kMaxRecvs; i++) record[i] = -1;  // "not reported"
  auto* cts = static_cast<CtsEntry*>(staging_->data()) + s * kMaxRecvs;
  for (int i = 0; i < n; i++) {
    cts[i].addr = reinterpret_cast<uintptr_t>(data[i]);
    cts[i].size = sizes[i];
    cts[i].rkey = mhandles[i] != nullptr ? mhandles[i]->mr->rkey : 0;
    cts[i].nreqs = static_cast<uint32_t>(n);
    cts[i].tag = tags[i];
    cts[i].reserved = 0;
    cts[i].idx = head_ + 1;
  }
  ibv_sge sge{reinterpret_cast<uintptr_t>(cts), static_cast<uint32_t>(n * sizeof(CtsEntry)),
              staging_->mr()->lkey};
  ibv_send_wr wr{};
  wr.wr_id = kCtsWrId;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;  // signalled so the send queue drains
  // Inline: the entries travel in the work request, the HCA reads no memory.
  if (inlineCts_ && sge.length <= ep.maxInline()) wr.send_flags |= IBV_SEND_INLINE;
  wr.wr.rdma.remote_addr = remoteFifo_ + s * kMaxRecvs * sizeof(CtsEntry);
  wr.wr.rdma.rkey = remoteFifoRkey_;
  ibv_send_wr* bad = nullptr;
  int rc = IbvApi::postSend(ep.qp(0), &wr, &bad);
  if (rc != 0) {
    pool_.release(req);
    return fail(Failure::kSystemCall, "irecv: FIFO write to %s failed: %s", peer.c_str(),
                strerror(rc));
  }
  req->n = n;
  req->seq = head_;
  for (int i = 0; i < n; i++) req->capacity[i] = sizes[i];
  slots_[s] = req;
  pending_[s] = used;
  head_++;
  *request = req;
  return ncclSuccess;
}

void RecvComm::finish(Request* r, int s) {
  const auto* record = static_cast<const int64_t*>(sizes_->data()) + s * kMaxRecvs;
  for (int i = 0; i < r->n; i++) {
    int64_t sent = record[i];
    if (sent < 0) {
      r->error = ncclInternalError;
      r->errorText = "the sender's size for buffer " + std::to_string(i) + " never arrived";
    } else if (static_cast<uint64_t>(sent) > r->capacity[i]) {
      r->error = ncclInvalidUsage;
      r->errorText = "message truncated: the sender sent " + std::to_string(sent) + " bytes to a " +
                     std::to_string(r->capacity[i]) + "-byte receive (buffer " + std::to_string(i) +
                     ")";
    }
    r->sizes[i] = static_cast<int>(sent < 0 ? 0 : std::min<uint64_t>(sent, r->capacity[i]));
  }
  r->done = true;
  slots_[s] = nullptr;
}

ncclResult_t RecvComm::test(Request& r, int* done, int* sizes) {
  *done = 0;
  if (status() != ncclSuccess) return status();
  if (r.isFlush) return testFlush(r, done);
  ncclResult_t res = drain([this](const ibv_wc& wc) {
    if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) return;  // FIFO writes: nothing to do
    int s = static_cast<int>(wc.wr_id % kSlots);
    if (slots_[s] != nullptr && --pending_[s] == 0) finish(slots_[s], s);
  });
  if (res != ncclSuccess) return res;
  if (!r.done) {
    if (peerClosed()) {
      return fail(Failure::kPeerGone,
                  "irecv from %s: the sender closed its connection (its process died?)",
                  peer.c_str());
    }
    return ncclSuccess;
  }
  *done = 1;
  if (sizes != nullptr) std::memcpy(sizes, r.sizes, sizeof(int) * r.n);
  ncclResult_t error = r.error;
  if (error != ncclSuccess) {
    NCCLNET_WARN(log_, "irecv from %s: %s", peer.c_str(), r.errorText.c_str());
  }
  pool_.release(&r);
  return error;
}

}  // namespace ncclnet::ib
