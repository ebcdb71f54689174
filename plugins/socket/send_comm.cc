// SPDX-License-Identifier: Apache-2.0
// sdk-socket: a send goes out as a header (with the payload inline when
// small) and striped data. Small sends leave at once (eager); the others wait
// for the receiver's clear-to-send, which also tells the sender the size of
// the buffer, so that a send too large for it is refused before a byte moves.
#include "send_comm.hpp"

#include <algorithm>
#include <climits>
#include <vector>

namespace ncclnet::socket {

namespace {
constexpr const char* kSendStages[3] = {"waiting for clear-to-send", "matched to last byte sent",
                                        "last byte to test()"};
}  // namespace

SendComm::SendComm(std::unique_ptr<ConnectionSockets> core, size_t inlineBytes,
                   TimelineOptions timeline)
    : core_(std::move(core)),
      inlineBytes_(inlineBytes),
      timeline_(std::move(timeline), kSendStages) {
  timeline_.nameTrace("send", core_->controlFd());
}

SendComm::~SendComm() {
  timeline_.report(core_->health().log(), core_->health().what());
  // Helper threads may still be finishing stripes of requests in pool_
  // (a comm closed mid-transfer): they stop before the requests go.
  core_.reset();
}

ncclResult_t SendComm::isend(void* data, size_t size, int tag, void** request) {
  Health& health = core_->health();
  if (size > static_cast<size_t>(INT_MAX) || (data == nullptr && size > 0)) {
    NCCLNET_WARN(health.log(),
                 "%s: isend of %zu bytes at %p: sizes above INT_MAX (test() "
                 "reports int) and NULL buffers are not accepted",
                 health.what().c_str(), size, data);
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(core_->mutex());
  CallClock clock(timeline_);
  if (!health.ok()) return health.error();
  SendRequest* r = pool_.acquire();
  if (r == nullptr) {  // every request in flight: NCCL retries later
    *request = nullptr;
    pump();
    return health.error();
  }
  r->data = static_cast<char*>(data);
  r->size = size;
  r->tag = tag;
  if (timeline_.enabled()) r->postedNs = steadyNowNs();
  if (waitingForCts_ == 0 && mayGoEager(size)) {
    sendEager(r);
    unpaired_.push_back(Unpaired{nullptr, tag, size});
  } else {
    unpaired_.push_back(Unpaired{r, tag, size});
    waitingForCts_++;
  }
  pump();
  *request = static_cast<RequestBase*>(r);
  return ncclSuccess;
}

ncclResult_t SendComm::test(SendRequest* r, int* done, int* size) {
  std::lock_guard<std::mutex> lock(core_->mutex());
  CallClock clock(timeline_);
  if (!pool_.owns(r)) {
    NCCLNET_WARN(core_->health().log(), "%s: test: %p is not a live send request of this comm",
                 core_->health().what().c_str(), static_cast<void*>(r));
    return ncclInvalidArgument;
  }
  // Done once its stripes moved and its header left the control queue: a
  // header still queued would wait for the next call on this comm, which
  // NCCL need not make once every send reported done.
  auto finished = [&] {
    return r->headerQueued && r->remaining.drained() && core_->controlSent() >= r->controlEnd;
  };
  // A finished send needs no system call (a small send is usually finished
  // by its own isend), and a send whose header is out only waits for helper
  // threads: while no other send waits for a clear-to-send either, the
  // control socket is left alone, since NCCL's progress thread tests every
  // comm of the process in turn and each call delays the others. The
  // requests still pending pump when they are tested.
  if (!finished() &&
      (!r->headerQueued || waitingForCts_ > 0 || !core_->progressesWithoutCaller())) {
    pump();
  }
  *done = 0;
  if (finished()) {
    *done = 1;
    if (timeline_.enabled()) {
      timeline_.add(r->postedNs, r->matchedNs, r->remaining.drainedAtNs.load(), steadyNowNs(),
                    r->size);
    }
    if (size != nullptr) *size = static_cast<int>(r->size);
    ncclResult_t res = r->error;
    pool_.release(r);
    return res;
  }
  ncclResult_t res = core_->health().error();
  if (res != ncclSuccess) {
    // The comm is dead: nothing will pair the send or reuse the slot.
    auto gone = std::remove_if(unpaired_.begin(), unpaired_.end(),
                               [r](const Unpaired& u) { return u.request == r; });
    unpaired_.erase(gone, unpaired_.end());
    pool_.release(r);
  }
  return res;
}

bool SendComm::wantsClearToSends() const {
  return waitingForCts_ > 0 || eagerUnpaired_ > kEagerCredit / 2 ||
         unpaired_.size() > kEagerMessages / 2;
}

void SendComm::pump() {
  core_->flushControl();
  if (!wantsClearToSends()) {
    core_->driveStreams();
    return;
  }
  core_->fillControl();
  while (core_->rxSize() >= kCtsBytes) {
    PostedRecv posted;
    if (!decodeCts(core_->rxData(), &posted.cts)) {
      core_->health().fail(Failure::kPeerMisbehaved,
                           "control socket: malformed clear-to-send frame "
                           "(protocol desynchronized)");
      return;
    }
    core_->consume(kCtsBytes);
    posted_.push_back(posted);
  }
  matchSends();
  core_->flushControl();
  core_->driveStreams();
}

bool SendComm::takeBuffer(int tag, size_t* capacity) {
  for (PostedRecv& p : posted_) {
    for (int i = 0; i < p.cts.n; i++) {
      if (!p.filled[i] && p.cts.tags[i] == tag) {
        p.filled[i] = true;
        *capacity = p.cts.sizes[i];
        while (!posted_.empty() && posted_.front().complete()) posted_.pop_front();
        return true;
      }
    }
  }
  return false;
}

// The contract's matching: each send, in posting order, takes the first
// unfilled buffer with its tag in the oldest receive that has one, so the
// k-th send of a tag fills the k-th buffer of that tag. A send whose tag has
// no such buffer yet waits, and later sends with that tag wait behind it:
// when several ranks share one comm, one rank may run a step ahead of
// another (NCCL's IB plugin answers such a send with a NULL request; here it
// is already queued, so it waits for the next receive). Sends of one tag
// leave in posting order, so the receiver pairs them the same way.
//
// A small send does not wait: while every send before it has left, it
// leaves at once with its payload, and the receiver holds it until its
// receive is posted. Its clear-to-send, when it comes, returns the credit.
void SendComm::matchSends() {
  Health& health = core_->health();
  std::vector<int> waitingTags;
  bool earlierWaits = false;  // a send before this one has not left
  for (auto it = unpaired_.begin(); it != unpaired_.end() && health.ok();) {
    SendRequest* r = it->request;
    bool left = r == nullptr;
    if (std::find(waitingTags.begin(), waitingTags.end(), it->tag) == waitingTags.end()) {
      size_t capacity = 0;
      if (takeBuffer(it->tag, &capacity)) {
        if (left) {
          returnCredit(*it, capacity);
        } else {
          waitingForCts_--;
          sendPaired(r, capacity);
        }
        it = unpaired_.erase(it);
        continue;
      }
      waitingTags.push_back(it->tag);
    }
    if (!left && !earlierWaits && mayGoEager(it->size)) {
      waitingForCts_--;
      sendEager(r);
      it->request = nullptr;
      left = true;
    }
    if (!left) earlierWaits = true;
    ++it;
  }
}

bool SendComm::mayGoEager(size_t size) const {
  return size <= kEagerBytes && eagerUnpaired_ + size <= kEagerCredit &&
         unpaired_.size() < kEagerMessages;
}

void SendComm::sendEager(SendRequest* r) {
  eagerUnpaired_ += r->size;
  if (timeline_.enabled()) r->matchedNs = steadyNowNs();
  sendHeader(r, kFlagEager | (r->size > 0 ? kFlagInline : 0));
}

void SendComm::returnCredit(const Unpaired& send, size_t capacity) {
  eagerUnpaired_ -= send.size;
  if (send.size > capacity) {
    Health& health = core_->health();
    NCCLNET_WARN(health.log(),
                 "%s: message truncated: a %zu-byte send (tag %d) left before its %zu-byte "
                 "receive was posted; the receive fails with ncclInvalidUsage",
                 health.what().c_str(), send.size, send.tag, capacity);
  }
}

void SendComm::sendPaired(SendRequest* r, size_t capacity) {
  Health& health = core_->health();
  if (timeline_.enabled()) r->matchedNs = steadyNowNs();
  if (r->size > capacity) {
    NCCLNET_WARN(health.log(),
                 "%s: message truncated: send of %zu bytes (tag %d) exceeds the "
                 "%zu-byte receive buffer; nothing is sent, both requests fail with "
                 "ncclInvalidUsage",
                 health.what().c_str(), r->size, r->tag, capacity);
    r->error = resultOf(Failure::kTruncated);
    sendHeader(r, kFlagTruncated);
  } else if (r->size <= inlineBytes_) {
    sendHeader(r, r->size > 0 ? kFlagInline : 0);
  } else {
    sendHeader(r, 0);
    // The header first: the receiver queues its stripes only once it has
    // read it, so it should not wait while helpers here are woken.
    core_->flushControl();
    // The comm died (this socket or a helper's): no stripe may go out,
    // since NCCL may free the buffer once test() reports the error, and
    // the send must fail rather than look done with its stripes unsent.
    if (!health.ok()) {
      r->error = health.error();
      return;
    }
    core_->queueStripes(Landing{r->data, nullptr, nullptr, r->size}, &r->remaining);
  }
}

void SendComm::sendHeader(SendRequest* r, uint8_t flags) {
  DataHeader h;
  h.size = r->size;
  h.tag = r->tag;
  h.flags = flags;
  uint8_t bytes[kHeaderBytes];
  encodeHeader(h, bytes);
  core_->queueControl(bytes, sizeof(bytes));
  // Inline payloads go out from NCCL's buffer, in the same sendmsg() as
  // their header: the send is done once the queue has handed them to the
  // kernel, and NCCL keeps the buffer until then.
  if (flags & kFlagInline) core_->queueControlInPlace(r->data, r->size);
  r->controlEnd = core_->controlQueued();
  r->headerQueued = true;
}

}  // namespace ncclnet::socket
