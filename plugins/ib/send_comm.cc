// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the sender side — reading clear-to-send entries, writing the
// payloads, completing sends.
#include <arpa/inet.h>

#include <algorithm>
#include <cinttypes>

#include "comm.hpp"

namespace sdkib {
namespace {

constexpr uint32_t kSenderMaxInline = kMaxRecvs * sizeof(int64_t);  // the sizes record

template <class T>
T loadRelaxed(const T* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}

// A consistent copy of an entry whose idx was seen (acquire) already.
CtsEntry readEntry(const CtsEntry* e) {
  CtsEntry copy;
  copy.addr = loadRelaxed(&e->addr);
  copy.size = loadRelaxed(&e->size);
  copy.rkey = loadRelaxed(&e->rkey);
  copy.nreqs = loadRelaxed(&e->nreqs);
  copy.tag = loadRelaxed(&e->tag);
  copy.reserved = 0;
  copy.idx = loadRelaxed(&e->idx);
  return copy;
}

}  // namespace

SendComm::SendComm(const IbvApi& api, const Port& port, ncclnet::Logger log, RequestIndex& index)
    : CommBase(api, port, log, index) {}

bool SendComm::setup(const Config& config, std::string* why) {
  // Per QP and message slot: up to n payload WRITEs, the sizes record and
  // the WRITE_WITH_IMM.
  QpSizes sizes{static_cast<uint32_t>(kSlots * (kMaxRecvs + 2)), 1, kSenderMaxInline};
  if (!ep.create(config.qpsPerConnection, sizes, why)) return false;
  fifo_ = std::make_unique<LocalBuffer>(*ep.port().hca, sizeof(CtsEntry) * kSlots * kMaxRecvs);
  if (!fifo_->ok()) {
    *why = "cannot allocate and register the CTS FIFO";
    return false;
  }
  return true;
}

void SendComm::describe(const Config& config, ConnInfo* info) const {
  ep.describe(config, info);
  info->addr = reinterpret_cast<uintptr_t>(fifo_->data());
  info->rkey = fifo_->mr()->rkey;
}

const CtsEntry* SendComm::slot(uint64_t seq) const {
  return static_cast<const CtsEntry*>(fifo_->data()) + (seq % kSlots) * kMaxRecvs;
}

ncclResult_t SendComm::isend(void* data, size_t size, int tag, MrHandle* mh, void** request) {
  *request = nullptr;
  if (failed_ != ncclSuccess) return failed_;
  const CtsEntry* entries = slot(head_);
  const uint64_t expected = head_ + 1;
  if (__atomic_load_n(&entries[0].idx, __ATOMIC_ACQUIRE) != expected) return ncclSuccess;
  uint32_t nreqs = loadRelaxed(&entries[0].nreqs);
  if (nreqs < 1 || nreqs > kMaxRecvs) {
    NCCLNET_WARN(log_, "isend: CTS entry %" PRIu64 " from %s announces %u receives (max %d)", head_,
                 peer.c_str(), nreqs, kMaxRecvs);
    return failed_ = ncclInternalError;
  }
  for (uint32_t r = 1; r < nreqs; r++) {  // the rest of the slot may still be landing
    if (__atomic_load_n(&entries[r].idx, __ATOMIC_ACQUIRE) != expected) return ncclSuccess;
  }
  if (inflight_[head_ % kSlots].pending > 0) return ncclSuccess;  // slot's last use unfinished
  int r = -1;
  for (uint32_t i = 0; i < nreqs; i++) {
    if (pending_.reqs[i] == nullptr && loadRelaxed(&entries[i].tag) == tag) {
      r = static_cast<int>(i);
      break;
    }
  }
  // No free buffer for this tag in the oldest receive: the send runs ahead
  // of the other tags (shared comms) and belongs to a later receive. Retry
  // once this one has all its sends, as NCCL's IB transport does.
  if (r < 0) return ncclSuccess;
  Request* req = pool_.acquire();
  if (req == nullptr) return ncclSuccess;
  index_.add(req, this);
  req->isSend = true;
  req->n = 1;
  req->size = size;
  req->tag = tag;
  req->seq = head_;
  uint64_t posted = loadRelaxed(&entries[r].size);
  if (size > posted) {
    req->error = ncclInvalidUsage;
    req->errorText = "message truncated: sent " + std::to_string(size) + " bytes to a " +
                     std::to_string(posted) + "-byte receive (tag " + std::to_string(tag) + ")";
  }
  pending_.reqs[r] = req;
  pending_.data[r] = data;
  pending_.lkey[r] = mh != nullptr ? mh->mr->lkey : 0;
  pending_.posted++;
  *request = req;
  if (pending_.posted < static_cast<int>(nreqs)) return ncclSuccess;  // grouped: wait for all
  ncclResult_t res = postSlot(entries, static_cast<int>(nreqs));
  pending_ = Pending{};
  head_++;
  return res;
}

ncclResult_t SendComm::postSlot(const CtsEntry* fifoEntries, int nreqs) {
  CtsEntry entries[kMaxRecvs];
  for (int r = 0; r < nreqs; r++) entries[r] = readEntry(&fifoEntries[r]);
  InFlight& flight = inflight_[head_ % kSlots];
  flight.nreqs = nreqs;
  flight.pending = ep.nqps();
  for (int r = 0; r < nreqs; r++) {
    flight.reqs[r] = pending_.reqs[r];
    sizesRecord_[r] = static_cast<int64_t>(pending_.reqs[r]->size);
  }
  const int nqps = ep.nqps();
  for (int q = 0; q < nqps; q++) {
    ibv_send_wr wrs[kMaxRecvs + 2] = {};
    ibv_sge sges[kMaxRecvs + 1] = {};
    int count = 0;
    for (int r = 0; r < nreqs; r++) {
      const Request* req = pending_.reqs[r];
      if (req->error != ncclSuccess || req->size == 0) continue;  // truncated: nothing lands
      // Each QP carries one contiguous share, aligned so LL128 lines stay whole.
      uint64_t share = (req->size + nqps - 1) / nqps;
      share = (share + kSplitAlign - 1) / kSplitAlign * kSplitAlign;
      uint64_t offset = share * q;
      if (offset >= req->size) continue;
      uint64_t length = std::min<uint64_t>(share, req->size - offset);
      sges[count] = {reinterpret_cast<uintptr_t>(pending_.data[r]) + offset,
                     static_cast<uint32_t>(length), pending_.lkey[r]};
      wrs[count].opcode = IBV_WR_RDMA_WRITE;
      wrs[count].sg_list = &sges[count];
      wrs[count].num_sge = 1;
      wrs[count].wr.rdma.remote_addr = entries[r].addr + offset;
      wrs[count].wr.rdma.rkey = entries[r].rkey;
      count++;
    }
    if (q == 0) {  // the sizes the receiver reports, ahead of QP 0's immediate
      sges[count] = {reinterpret_cast<uintptr_t>(sizesRecord_),
                     static_cast<uint32_t>(nreqs * sizeof(int64_t)), 0};
      wrs[count].opcode = IBV_WR_RDMA_WRITE;
      wrs[count].send_flags = IBV_SEND_INLINE;
      wrs[count].sg_list = &sges[count];
      wrs[count].num_sge = 1;
      wrs[count].wr.rdma.remote_addr =
          remoteSizes_ + (head_ % kSlots) * kMaxRecvs * sizeof(int64_t);
      wrs[count].wr.rdma.rkey = remoteSizesRkey_;
      count++;
    }
    ibv_send_wr& last = wrs[count++];
    last.wr_id = head_;
    last.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    last.send_flags = IBV_SEND_SIGNALED;
    last.imm_data = htonl(static_cast<uint32_t>(head_));
    last.wr.rdma.remote_addr = remoteSizes_;
    last.wr.rdma.rkey = remoteSizesRkey_;
    for (int i = 0; i + 1 < count; i++) wrs[i].next = &wrs[i + 1];
    ibv_send_wr* bad = nullptr;
    int rc = IbvApi::postSend(ep.qp(q), wrs, &bad);
    if (rc != 0) {
      NCCLNET_WARN(log_, "isend: ibv_post_send to %s failed: %s", peer.c_str(), strerror(rc));
      return failed_ = ncclSystemError;
    }
  }
  return ncclSuccess;
}

ncclResult_t SendComm::test(Request* r, int* done, int* sizes) {
  *done = 0;
  ncclResult_t res = drain([this](const ibv_wc& wc) {
    if (wc.opcode != IBV_WC_RDMA_WRITE) return;
    InFlight& flight = inflight_[wc.wr_id % kSlots];
    if (flight.pending > 0 && --flight.pending == 0) {
      for (int i = 0; i < flight.nreqs; i++) flight.reqs[i]->done = true;
      flight = InFlight{};
    }
  });
  if (res != ncclSuccess) return res;
  if (!r->done) return ncclSuccess;
  *done = 1;
  if (sizes != nullptr) sizes[0] = static_cast<int>(r->size);
  ncclResult_t error = r->error;
  if (error != ncclSuccess)
    NCCLNET_WARN(log_, "isend to %s: %s", peer.c_str(), r->errorText.c_str());
  index_.remove(r);
  pool_.release(r);
  return error;
}

}  // namespace sdkib
