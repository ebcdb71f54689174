// SPDX-License-Identifier: Apache-2.0
// sdk-socket: receives announce their buffers (clear-to-send), then take
// headers, inline payloads and stripes in the sender's order.
#include "recv_comm.hpp"

#include <algorithm>
#include <cstring>

namespace ncclnet::socket {

namespace {
// From this many bytes of an inline payload still to come (with nothing
// buffered), they are read into the receive buffer directly; below it, one
// read into the control buffer may also bring the next messages.
constexpr size_t kDirectInlineBytes = 16 << 10;
constexpr const char* kRecvStages[3] = {"waiting for the header", "header to last byte received",
                                        "last byte to test()"};
}  // namespace

RecvComm::RecvComm(std::unique_ptr<ConnectionSockets> core, TimelineOptions timeline)
    : core_(std::move(core)), timeline_(std::move(timeline), kRecvStages) {
  timeline_.nameTrace("recv", core_->controlFd());
}

RecvComm::~RecvComm() {
  timeline_.report(core_->health().log(), core_->health().what());
  // Helper threads may be writing into bounce pages: they stop before the
  // pages go back to the pool for another comm.
  core_.reset();
}

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
  if (unpack_ && n != 1) {
    NCCLNET_WARN(health.log(), "%s: irecv with n=%d on an UNPACK comm (maxRecvs is 1)",
                 health.what().c_str(), n);
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(core_->mutex());
  CallClock clock(timeline_);
  if (!health.ok()) return health.error();
  size_t capacity = data[0] == nullptr ? 0 : sizes[0];
  if (unpack_ && !fitsBouncePages(capacity)) return ncclInvalidUsage;
  RecvRequest* r = pool_.acquire();
  if (r != nullptr && unpack_ && !reservePages(r, capacity)) {
    pool_.release(r);
    r = nullptr;
  }
  if (r == nullptr) {  // no request (or no bounce pages) free: NCCL retries later
    pump();
    return health.error();
  }
  r->n = n;
  if (timeline_.enabled()) r->postedNs = steadyNowNs();
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
  CallClock clock(timeline_);
  if (!pool_.owns(r)) {
    NCCLNET_WARN(core_->health().log(), "%s: test: %p is not a live receive request of this comm",
                 core_->health().what().c_str(), static_cast<void*>(r));
    return ncclInvalidArgument;
  }
  // Once every header is read and no inline payload is being copied, only
  // helper threads finish this receive: the control socket is left alone,
  // as for sends. Not while later receives wait for their headers: reading
  // those now lets the helpers go on with the next message's stripes.
  // A receive the last call already filled (one recv() often brings the
  // headers and inline payloads of several small messages) needs none.
  auto finished = [&] { return r->matchedSlots == r->n && r->remaining.drained(); };
  bool settled = r->matchedSlots == r->n && matching_.empty() && inlineFor_ == nullptr;
  if (!finished() && (!settled || !core_->progressesWithoutCaller())) pump();
  *done = 0;
  if (r->reported) {
    NCCLNET_WARN(core_->health().log(),
                 "%s: test: receive %p was already reported done; it waits for irecvConsumed",
                 core_->health().what().c_str(), static_cast<void*>(r));
    return ncclInvalidArgument;
  }
  if (finished()) {
    *done = 1;
    if (timeline_.enabled()) {
      size_t bytes = 0;
      for (int i = 0; i < r->n; i++) bytes += static_cast<size_t>(r->sizes[i]);
      timeline_.add(r->postedNs, r->matchedNs, r->remaining.drainedAtNs.load(), steadyNowNs(),
                    bytes);
    }
    if (sizes != nullptr) std::copy(r->sizes, r->sizes + r->n, sizes);
    ncclResult_t res = r->error;
    if (unpack_ && res == ncclSuccess) {
      // The scatter list goes out before NCCL hears of the data: its proxy
      // then advances the tail the kernel waits for.
      unpack_->publish(r->seq, r->pages, static_cast<size_t>(r->sizes[0]));
      r->reported = true;
    } else {
      retire(r);
    }
    return res;
  }
  ncclResult_t res = core_->health().error();
  if (res != ncclSuccess) retire(r);
  return res;
}

ncclResult_t RecvComm::consumed(void* request) {
  // Host mode: NCCL's buffers held the data. unpack_ is set before accept
  // returns the comm and never changes, so no lock is needed to read it.
  if (!unpack_) return ncclSuccess;
  std::lock_guard<std::mutex> lock(core_->mutex());
  CallClock clock(timeline_);
  auto* r = static_cast<RecvRequest*>(static_cast<RequestBase*>(request));
  if (request == nullptr || !pool_.owns(r) || !r->reported) {
    NCCLNET_WARN(core_->health().log(),
                 "%s: irecvConsumed: %p is not a receive of this comm that test() reported done",
                 core_->health().what().c_str(), request);
    return ncclInvalidArgument;
  }
  retire(r);
  return ncclSuccess;
}

void RecvComm::enableUnpack(std::unique_ptr<unpack::Receiver> receiver) {
  std::lock_guard<std::mutex> lock(core_->mutex());
  unpack_ = std::move(receiver);
}

bool RecvComm::fitsBouncePages(size_t capacity) const {
  size_t limit = std::min(unpack_->arenaPages(), unpack::kMaxPagesPerReceive) * unpack::kPageBytes;
  if (capacity <= limit) return true;
  NCCLNET_WARN(core_->health().log(),
               "%s: irecv of %zu bytes on an UNPACK comm: one receive holds at most %zu bytes "
               "of bounce pages (the advertised maxP2pBytes/maxCollBytes)",
               core_->health().what().c_str(), capacity, limit);
  return false;
}

bool RecvComm::reservePages(RecvRequest* r, size_t capacity) {
  // The queue has 16 slots, reused by receive seq + 16: a slot is free once
  // the kernel consumed the receive before.
  if (unconsumed_ >= unpack::kQueueDepth || !unpack_->reserve(capacity, &r->pages)) return false;
  r->seq = nextSeq_++;
  unconsumed_++;
  return true;
}

void RecvComm::retire(RecvRequest* r) {
  if (unpack_) {
    unpack_->release(&r->pages);
    unconsumed_--;
  }
  pool_.release(r);
}

Landing RecvComm::landing(RecvRequest* r, int slot, size_t size) const {
  if (!unpack_) return Landing{r->data[slot], nullptr, nullptr, size};
  return Landing{nullptr, unpack_.get(), &r->pages, size};
}

void RecvComm::pump() {
  core_->flushControl();
  Health& health = core_->health();
  while (health.ok()) {
    size_t available = core_->rxSize();
    size_t inlineLeft = inlineFor_ != nullptr ? inlineTo_.size - inlineDone_ : 0;
    bool wantsMore = inlineLeft > 0 ? available == 0 : available < kHeaderBytes;
    if (wantsMore && inlineLeft >= kDirectInlineBytes) {
      // The rest of a large inline payload goes straight into its buffer.
      size_t run = 0;
      char* at = inlineTo_.at(inlineDone_, &run);
      size_t got = core_->readControlInto(at, std::min(inlineLeft, run));
      if (got == 0) break;  // the socket is empty (or failed)
      inlineDone_ += got;
      if (inlineDone_ == inlineTo_.size) {
        inlineFor_->remaining.finishOne();
        inlineFor_ = nullptr;
      }
      continue;
    }
    if (wantsMore) {
      core_->fillControl();
      if (core_->rxSize() == available) break;  // the socket is empty
      continue;
    }
    if (inlineLeft > 0) {
      size_t run = 0;
      char* at = inlineTo_.at(inlineDone_, &run);
      size_t take = std::min({inlineLeft, available, run});
      std::memcpy(at, core_->rxData(), take);
      core_->consume(take);
      inlineDone_ += take;
      if (inlineDone_ == inlineTo_.size) {
        inlineFor_->remaining.finishOne();
        inlineFor_ = nullptr;
      }
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
  if (timeline_.enabled()) r->matchedNs = steadyNowNs();
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
    if (unpack_) unpack_->trim(&r->pages, 0);
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
    if (unpack_) unpack_->trim(&r->pages, h.size);  // a shorter message: fewer pages
    if ((h.flags & kFlagInline) && h.size > 0) {
      r->remaining.add(1);
      inlineTo_ = landing(r, slot, h.size);
      inlineDone_ = 0;
      inlineFor_ = r;
    } else if (h.size > 0) {
      core_->queueStripes(landing(r, slot, h.size), &r->remaining);
    }
  }
  // Retired in posting order, as the sender does, so `ahead` stays in step.
  while (!matching_.empty() && matching_.front()->matchedSlots == matching_.front()->n) {
    matching_.pop_front();
  }
  return true;
}

}  // namespace ncclnet::socket
