// SPDX-License-Identifier: Apache-2.0
// sdk-socket: receives announce their buffers (clear-to-send), then take
// headers, inline payloads and stripes in the sender's order.
#include "recv_comm.hpp"

#include <algorithm>
#include <cstring>

namespace ncclnet::socketnet {

RecvComm::RecvComm(std::unique_ptr<CommCore> core) : core_(std::move(core)) {}

ncclResult_t RecvComm::irecv(int n, void** data, size_t* sizes, int* tags, void** request) {
  Health& health = core_->health();
  // NCCL may have stored NCCL_NET_OPTIONAL_RECV_COMPLETION in *request: it is
  // always overwritten below.
  *request = nullptr;
  if (n < 1 || n > kMaxRecvs || data == nullptr || sizes == nullptr || tags == nullptr) {
    NCCLNET_WARN(health.log(), "%s: irecv with n=%d (1..%d) or NULL arrays", health.what().c_str(),
                 n, kMaxRecvs);
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(core_->mutex());
  if (!health.ok()) return health.error();
  RecvRequest* r = pool_.acquire();
  if (r == nullptr) {  // NCCL_NET_MAX_REQUESTS in flight: NCCL retries later
    pump();
    return health.error();
  }
  r->kind = RequestKind::Recv;
  r->comm = this;
  r->n = n;
  ClearToSend cts;
  cts.n = n;
  for (int i = 0; i < n; i++) {
    r->data[i] = static_cast<char*>(data[i]);
    r->capacity[i] = data[i] == nullptr ? 0 : sizes[i];
    r->tags[i] = tags[i];
    cts.sizes[i] = r->capacity[i];
    cts.tags[i] = tags[i];
  }
  uint8_t frame[kCtsBytes];
  encodeCts(cts, frame);
  core_->queueControl(frame, sizeof(frame));
  matching_.push_back(r);
  pump();
  *request = static_cast<RequestBase*>(r);
  return ncclSuccess;
}

ncclResult_t RecvComm::test(RecvRequest* r, int* done, int* sizes) {
  std::lock_guard<std::mutex> lock(core_->mutex());
  if (!pool_.owns(r)) {
    NCCLNET_WARN(core_->health().log(), "%s: test: %p is not a live receive request of this comm",
                 core_->health().what().c_str(), static_cast<void*>(r));
    return ncclInvalidArgument;
  }
  pump();
  *done = 0;
  if (r->matchedSlots == r->n && r->remaining.value.load(std::memory_order_acquire) == 0) {
    *done = 1;
    if (sizes != nullptr) std::copy(r->sizes, r->sizes + r->n, sizes);
    ncclResult_t res = r->error;
    pool_.release(r);
    return res;
  }
  ncclResult_t res = core_->health().error();
  if (res != ncclSuccess) pool_.release(r);
  return res;
}

void RecvComm::pump() {
  core_->flushControl();
  Health& health = core_->health();
  while (health.ok()) {
    size_t available = core_->rxSize();
    bool wantsMore = inlineLeft_ > 0 ? available == 0 : available < kHeaderBytes;
    if (wantsMore) {
      core_->fillControl();
      if (core_->rxSize() == available) break;  // the socket is empty
      continue;
    }
    if (inlineLeft_ > 0) {
      size_t take = std::min(inlineLeft_, available);
      std::memcpy(inlineAt_, core_->rxData(), take);
      core_->consume(take);
      inlineAt_ += take;
      inlineLeft_ -= take;
      if (inlineLeft_ == 0) inlineFor_->remaining.value.fetch_sub(1, std::memory_order_acq_rel);
      continue;
    }
    DataHeader h;
    if (!decodeHeader(core_->rxData(), &h)) {
      health.fail(ncclRemoteError, "control socket: malformed header (protocol desynchronized)");
      break;
    }
    core_->consume(kHeaderBytes);
    if (!onHeader(h)) break;
  }
  core_->driveStreams();
}

bool RecvComm::onHeader(const DataHeader& h) {
  Health& health = core_->health();
  if (matching_.empty()) {
    health.fail(ncclRemoteError,
                "the peer sent a %llu-byte message with no receive posted "
                "(protocol error)",
                static_cast<unsigned long long>(h.size));
    return false;
  }
  if (h.ahead >= matching_.size()) {
    health.fail(ncclRemoteError, "header names receive %d of %zu outstanding (protocol error)",
                h.ahead, matching_.size());
    return false;
  }
  RecvRequest* r = matching_[h.ahead];
  int slot = h.slot;
  if (slot >= r->n || r->slotMatched[slot]) {
    health.fail(ncclRemoteError, "header names buffer %d of a %d-buffer receive (protocol error)",
                slot, r->n);
    return false;
  }
  r->slotMatched[slot] = true;
  r->matchedSlots++;
  if (h.flags & kFlagTruncated) {
    NCCLNET_WARN(health.log(),
                 "%s: message truncated: the peer sent %llu bytes (tag %d) to a "
                 "%zu-byte receive buffer; nothing was written, the receive fails with "
                 "ncclInvalidUsage",
                 health.what().c_str(), static_cast<unsigned long long>(h.size), h.tag,
                 r->capacity[slot]);
    r->error = ncclInvalidUsage;
    r->sizes[slot] = 0;
  } else if (h.size > r->capacity[slot] || h.tag != r->tags[slot]) {
    // The sender checks this before sending; reaching here means a broken
    // peer, and the only safe answer is to stop reading.
    health.fail(ncclRemoteError,
                "header of %llu bytes with tag %d for a %zu-byte buffer with tag "
                "%d (protocol error)",
                static_cast<unsigned long long>(h.size), h.tag, r->capacity[slot], r->tags[slot]);
    return false;
  } else {
    r->sizes[slot] = static_cast<int>(h.size);
    if ((h.flags & kFlagInline) && h.size > 0) {
      r->remaining.value.fetch_add(1, std::memory_order_acq_rel);
      inlineAt_ = r->data[slot];
      inlineLeft_ = h.size;
      inlineFor_ = r;
    } else if (h.size > 0) {
      core_->queueStripes(r->data[slot], h.size, &r->remaining.value);
    }
  }
  // Retired in posting order, as the sender does, so `ahead` stays in step.
  while (!matching_.empty() && matching_.front()->matchedSlots == matching_.front()->n) {
    matching_.pop_front();
  }
  return true;
}

}  // namespace ncclnet::socketnet
