// SPDX-License-Identifier: Apache-2.0
// sdk-socket: receives announce their buffers (clear-to-send), then take
// headers, inline payloads and stripes in the sender's order. A small
// message may come before its receive is posted (eager): it is held until
// then.
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
// Clear-to-sends that only return credit wait for this many to go out
// together (well below what the sender may have unpaired: kEagerMessages).
constexpr size_t kDeferredFrames = 32;

void copyInto(const Landing& to, const char* from, size_t size) {
  for (size_t offset = 0; offset < size;) {
    size_t run = 0;
    char* at = to.at(offset, &run);
    run = std::min(run, size - offset);
    std::memcpy(at, from + offset, run);
    offset += run;
  }
}
}  // namespace

RecvComm::InlineTarget RecvComm::inlineInto(const Landing& to, RecvRequest* request) {
  InlineTarget target;
  target.active = true;
  target.to = to;
  target.request = request;
  return target;
}

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
  // A message already in the socket is read first: held, it fills this
  // receive at once, and the clear-to-send can wait (announce).
  if (held_.empty()) pump();
  size_t claimed = claimHeld(r);
  bool filled = r->matchedSlots == r->n;
  announce(frame, filled, claimed);
  if (filled) {
    core_->flushControl();  // what announce queued, if anything
  } else {
    matching_.push_back(r);
    pump();
  }
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
  bool settled = r->matchedSlots == r->n && matching_.empty() && !inline_.active;
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
    size_t inlineLeft = inline_.active ? inline_.to.size - inline_.done : 0;
    bool wantsMore = inline_.active ? available == 0 : available < kHeaderBytes;
    if (wantsMore && inlineLeft >= kDirectInlineBytes) {
      // The rest of a large inline payload goes straight into its buffer.
      size_t run = 0;
      char* at = inline_.to.at(inline_.done, &run);
      size_t got = core_->readControlInto(at, std::min(inlineLeft, run));
      if (got == 0) break;  // the socket is empty (or failed)
      inline_.done += got;
      if (inline_.done == inline_.to.size) finishInline();
      continue;
    }
    if (wantsMore) {
      core_->fillControl();
      if (core_->rxSize() == available) break;  // the socket is empty
      continue;
    }
    if (inline_.active) {
      size_t run = 0;
      char* at = inline_.to.at(inline_.done, &run);
      size_t take = std::min({inlineLeft, available, run});
      std::memcpy(at, core_->rxData(), take);
      core_->consume(take);
      inline_.done += take;
      if (inline_.done == inline_.to.size) finishInline();
      continue;
    }
    DataHeader h;
    if (!decodeHeader(core_->rxData(), &h)) {
      health.fail(Failure::kPeerMisbehaved,
                  "control socket: malformed header (protocol desynchronized)");
      break;
    }
    core_->consume(kHeaderBytes);
    if (!onHeader(h)) break;
  }
  // The sender closed after its last send: the messages it sent are all
  // read by now, and a receive still waiting for one waits in vain.
  if (health.ok() && core_->peerClosed() && (!matching_.empty() || inline_.active)) {
    health.fail(Failure::kPeerGone,
                "the sender closed the connection while a receive waited for a message");
  }
  core_->driveStreams();
}

bool RecvComm::findBuffer(int tag, RecvRequest** out, int* slotOut) const {
  for (RecvRequest* r : matching_) {
    for (int slot = 0; slot < r->n; slot++) {
      if (!r->slotMatched[slot] && r->tags[slot] == tag) {
        *out = r;
        *slotOut = slot;
        return true;
      }
    }
  }
  return false;
}

bool RecvComm::onHeader(const DataHeader& h) {
  Health& health = core_->health();
  bool carriesPayload = (h.flags & kFlagInline) && h.size > 0;
  if ((h.flags & kFlagEager) && h.size > 0 && !carriesPayload) {
    health.fail(Failure::kPeerMisbehaved,
                "an eager header of %llu bytes without its payload (protocol error)",
                static_cast<unsigned long long>(h.size));
    return false;
  }
  RecvRequest* r = nullptr;
  int slot = 0;
  if (!findBuffer(h.tag, &r, &slot)) {
    if (h.flags & kFlagEager) return hold(h);
    health.fail(Failure::kPeerMisbehaved,
                "the peer sent a %llu-byte message with tag %d and no receive posted for it "
                "(protocol error)",
                static_cast<unsigned long long>(h.size), h.tag);
    return false;
  }
  if (h.flags & kFlagTruncated) {
    // The sender refused it against this buffer's size: nothing follows.
    if (fill(r, slot, h.size, h.tag)) {
      health.fail(Failure::kPeerMisbehaved,
                  "a refused %llu-byte message (tag %d) would fit its %zu-byte buffer "
                  "(protocol error)",
                  static_cast<unsigned long long>(h.size), h.tag, r->capacity[slot]);
      return false;
    }
  } else if (!(h.flags & kFlagEager) && h.size > r->capacity[slot]) {
    // The sender checked this against the clear-to-send; reaching here
    // means a broken peer, and the only safe answer is to stop reading.
    health.fail(Failure::kPeerMisbehaved,
                "header of %llu bytes with tag %d for a %zu-byte buffer (protocol error)",
                static_cast<unsigned long long>(h.size), h.tag, r->capacity[slot]);
    return false;
  } else if (!fill(r, slot, h.size, h.tag)) {
    if (carriesPayload) {  // read and dropped
      discard_.resize(h.size);
      inline_ = inlineInto(Landing{discard_.data(), nullptr, nullptr, h.size}, nullptr);
    }
  } else if (carriesPayload) {
    r->remaining.add(1);
    inline_ = inlineInto(landing(r, slot, h.size), r);
  } else if (h.size > 0) {
    core_->queueStripes(landing(r, slot, h.size), &r->remaining);
  }
  retireFilledReceives();
  return true;
}

bool RecvComm::fill(RecvRequest* r, int slot, size_t size, int tag) {
  r->slotMatched[slot] = true;
  r->matchedSlots++;
  if (timeline_.enabled()) r->matchedNs = steadyNowNs();
  bool fits = size <= r->capacity[slot];
  if (!fits) {
    NCCLNET_WARN(core_->health().log(),
                 "%s: message truncated: a %zu-byte message (tag %d) for a %zu-byte receive "
                 "buffer; nothing was written, the receive fails with ncclInvalidUsage",
                 core_->health().what().c_str(), size, tag, r->capacity[slot]);
    r->error = resultOf(Failure::kTruncated);
  }
  r->sizes[slot] = fits ? static_cast<int>(size) : 0;
  if (unpack_) unpack_->trim(&r->pages, fits ? size : 0);  // a shorter message: fewer pages
  return fits;
}

bool RecvComm::hold(const DataHeader& h) {
  Health& health = core_->health();
  // One message in held_ may be a claimed one whose payload still arrives.
  if (heldBytes_ + h.size > kEagerCredit || held_.size() > kEagerMessages) {
    health.fail(Failure::kPeerMisbehaved,
                "the peer sent more eager messages (%zu, %llu bytes) than it may before their "
                "receives are posted (%zu, %zu bytes; protocol error)",
                held_.size() + 1, static_cast<unsigned long long>(heldBytes_ + h.size),
                kEagerMessages, kEagerCredit);
    return false;
  }
  Held held;
  held.tag = h.tag;
  held.size = h.size;
  // Its own size: many tiny messages (NCCL's LL flags) must not each pin
  // the largest an eager message can be.
  if (h.size > 0) held.bytes.reset(new char[h.size]);
  held.arrived = h.size == 0;
  heldBytes_ += h.size;
  auto at = held_.insert(held_.end(), std::move(held));
  if (!at->arrived) {
    inline_ = inlineInto(Landing{at->bytes.get(), nullptr, nullptr, h.size}, nullptr);
    inline_.toHeld = true;
    inline_.held = at;
  }
  return true;
}

void RecvComm::announce(const uint8_t* frame, bool filled, size_t heldBytes) {
  // A receive that held messages filled needs nothing from the sender: its
  // frame only returns credit, so it waits to go out with others (one
  // send() for many receives) until enough credit is held back or a
  // receive needs its sender. Frames keep their order.
  deferredCts_.insert(deferredCts_.end(), frame, frame + kCtsBytes);
  deferredCredit_ += heldBytes;
  bool enough =
      deferredCts_.size() >= kDeferredFrames * kCtsBytes || deferredCredit_ >= kEagerCredit / 4;
  if (filled && !enough) return;
  core_->queueControl(deferredCts_.data(), deferredCts_.size());
  deferredCts_.clear();
  deferredCredit_ = 0;
}

size_t RecvComm::claimHeld(RecvRequest* r) {
  size_t claimed = 0;
  for (int slot = 0; slot < r->n && !held_.empty(); slot++) {
    auto it = std::find_if(held_.begin(), held_.end(), [&](const Held& held) {
      return held.claimedBy == nullptr && !held.dropped && held.tag == r->tags[slot];
    });
    if (it == held_.end()) continue;
    heldBytes_ -= it->size;
    claimed += it->size;
    if (!fill(r, slot, it->size, it->tag)) {
      it->dropped = true;
    } else {
      it->claimedBy = r;
      it->slot = slot;
      r->remaining.add(1);
    }
    if (it->arrived) settleHeld(it);
  }
  return claimed;
}

void RecvComm::settleHeld(HeldList::iterator held) {
  if (held->claimedBy != nullptr) {
    RecvRequest* r = held->claimedBy;
    copyInto(landing(r, held->slot, held->size), held->bytes.get(), held->size);
    r->remaining.finishOne();
  } else if (!held->dropped) {
    return;  // still waits for its receive
  }
  held_.erase(held);
}

void RecvComm::finishInline() {
  InlineTarget done = inline_;
  inline_ = InlineTarget{};
  if (done.toHeld) {
    done.held->arrived = true;
    settleHeld(done.held);
  } else if (done.request != nullptr) {
    done.request->remaining.finishOne();
  }
}

void RecvComm::retireFilledReceives() {
  // In posting order, as the sender pairs them.
  while (!matching_.empty() && matching_.front()->matchedSlots == matching_.front()->n) {
    matching_.pop_front();
  }
}

}  // namespace ncclnet::socket
