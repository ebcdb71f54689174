// SPDX-License-Identifier: Apache-2.0
// sdk-ib: the sender side — reading clear-to-send entries, writing the
// payloads, completing sends.
#include <arpa/inet.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "comm.hpp"

namespace ncclnet::ib {
namespace {

constexpr uint32_t kRecordBytes = kMaxRecvs * sizeof(int64_t);  // one slot's sizes record

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

SendComm::SendComm(const IbvApi& api, const Port& port, ncclnet::Logger log)
    : CommBase(api, port, log) {}

bool SendComm::setup(const Config& config, std::string* why) {
  split_ = config.splitDataOnQps;
  adaptiveRouting_ = ep.port().adaptiveRouting;
  arThreshold_ = static_cast<uint64_t>(config.arThreshold);
  // Per QP and message slot: up to n payload WRITEs, the sizes record and
  // the WRITE_WITH_IMM.
  QpSizes sizes{static_cast<uint32_t>(kSlots * kMaxChain), 1, config.useInline ? kRecordBytes : 0u};
  ep.watchWith(health_, "send comm to " + peer);
  if (!ep.create(config.qpsPerConnection, sizes, why)) return false;
  inlineSizes_ = config.useInline && ep.maxInline() >= kRecordBytes;
  Hca& hca = *ep.port().hca;
  fifo_ = std::make_unique<LocalBuffer>(hca, sizeof(CtsEntry) * kSlots * kMaxRecvs);
  records_ = std::make_unique<LocalBuffer>(hca, size_t{kRecordBytes} * kSlots);
  if (!fifo_->ok() || !records_->ok()) {
    *why = "cannot allocate and register the CTS FIFO and sizes records";
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

ncclResult_t SendComm::isend(void* data, size_t size, int tag, const MrHandle* mh,
                             Request** request) {
  *request = nullptr;
  if (status() != ncclSuccess) return status();
  const CtsEntry* entries = slot(head_);
  const uint64_t expected = head_ + 1;
  if (__atomic_load_n(&entries[0].idx, __ATOMIC_ACQUIRE) != expected) return noClearToSend(entries);
  uint32_t nreqs = loadRelaxed(&entries[0].nreqs);
  if (nreqs < 1 || nreqs > kMaxRecvs) {
    return fail(Failure::kPeerMisbehaved,
                "isend: CTS entry %" PRIu64 " from %s announces %u receives (max %d)", head_,
                peer.c_str(), nreqs, kMaxRecvs);
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

ncclResult_t SendComm::noClearToSend(const CtsEntry* entries) {
  if (!peerClosed()) return ncclSuccess;  // NULL request: NCCL calls again
  // An entry written just before the receiver closed still counts.
  if (__atomic_load_n(&entries[0].idx, __ATOMIC_ACQUIRE) == head_ + 1) return ncclSuccess;
  return fail(Failure::kPeerGone,
              "isend to %s: the receiver closed its connection without posting a receive for "
              "message %" PRIu64 " (its process died?)",
              peer.c_str(), head_);
}

ncclResult_t SendComm::postSlot(const CtsEntry* fifoEntries, int nreqs) {
  const int s = static_cast<int>(head_ % kSlots);
  const int nqps = ep.nqps();
  auto* record = static_cast<int64_t*>(records_->data()) + s * kMaxRecvs;
  SlotPlan plan;
  plan.nreqs = nreqs;
  uint64_t largest = 0;
  for (int r = 0; r < nreqs; r++) {
    const CtsEntry entry = readEntry(&fifoEntries[r]);
    const Request* req = pending_.reqs[r];
    SlotPart& part = plan.parts[r];
    part.local = reinterpret_cast<uintptr_t>(pending_.data[r]);
    part.lkey = pending_.lkey[r];
    part.size = req->size;
    part.remote = entry.addr;
    part.rkey = entry.rkey;
    part.skip = req->error != ncclSuccess;  // truncated: nothing lands
    record[r] = static_cast<int64_t>(req->size);
    largest = std::max<uint64_t>(largest, req->size);
  }
  plan.sizes = ibv_sge{reinterpret_cast<uintptr_t>(record),
                       static_cast<uint32_t>(nreqs * sizeof(int64_t)), records_->mr()->lkey};
  plan.sizesInline = inlineSizes_;
  plan.sizesRemote = remoteSizes_ + static_cast<uint64_t>(s) * kMaxRecvs * sizeof(int64_t);
  plan.sizesRkey = remoteSizesRkey_;
  plan.wrId = head_;
  plan.imm = htonl(static_cast<uint32_t>(head_));
  plan.usedQps = usedQpsFor(nqps, split_);
  plan.separateImmediate = separateImmediate(nreqs, largest, adaptiveRouting_, arThreshold_);

  InFlight& flight = inflight_[s];
  flight.nreqs = nreqs;
  flight.pending = plan.usedQps;
  for (int r = 0; r < nreqs; r++) flight.reqs[r] = pending_.reqs[r];
  const int first = firstQpFor(head_, nqps, split_);
  for (int q = 0; q < plan.usedQps; q++) {
    ibv_send_wr wrs[kMaxChain];
    ibv_sge sges[kMaxChain];
    buildQpChain(plan, q, wrs, sges);
    ibv_send_wr* bad = nullptr;
    int rc = IbvApi::postSend(ep.qp(first + q), wrs, &bad);
    if (rc != 0) {
      return fail(Failure::kSystemCall, "isend: ibv_post_send to %s failed: %s", peer.c_str(),
                  strerror(rc));
    }
  }
  return ncclSuccess;
}

ncclResult_t SendComm::test(Request& r, int* done, int* sizes) {
  *done = 0;
  if (status() != ncclSuccess) return status();
  auto onCompletion = [this](const ibv_wc& wc) {
    if (wc.opcode != IBV_WC_RDMA_WRITE) return;
    InFlight& flight = inflight_[wc.wr_id % kSlots];
    if (flight.pending > 0 && --flight.pending == 0) {
      for (int i = 0; i < flight.nreqs; i++) flight.reqs[i]->done = true;
      flight = InFlight{};
    }
  };
  ncclResult_t res = drain(onCompletion);
  if (res != ncclSuccess) return res;
  if (!r.done && peerClosed()) {
    // The write's completion may have come in after the drain above and
    // before the receiver closed: look once more, and keep looking for
    // kAcksAfterClose before failing.
    res = drain(onCompletion);
    if (res != ncclSuccess) return res;
    auto now = std::chrono::steady_clock::now();
    if (closedSeenAt_ == std::chrono::steady_clock::time_point{}) closedSeenAt_ = now;
    if (!r.done && now - closedSeenAt_ >= kAcksAfterClose) {
      // A silent host ends here too, once keepalive gives up on the
      // handshake connection: posted writes to it may retry for long.
      return fail(Failure::kPeerGone,
                  "isend to %s: the receiver's connection closed or timed out with message "
                  "%" PRIu64 " in flight (its process or host died?)",
                  peer.c_str(), r.seq);
    }
  }
  if (!r.done) return ncclSuccess;
  *done = 1;
  if (sizes != nullptr) sizes[0] = static_cast<int>(r.size);
  ncclResult_t error = r.error;
  if (error != ncclSuccess)
    NCCLNET_WARN(log_, "isend to %s: %s", peer.c_str(), r.errorText.c_str());
  pool_.release(&r);
  return error;
}

}  // namespace ncclnet::ib
