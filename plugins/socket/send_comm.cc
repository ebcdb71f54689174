// SPDX-License-Identifier: Apache-2.0
// sdk-socket: sends wait for the receiver's clear-to-send, then go out as a
// header (with the payload inline when small) and striped data.
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
  unmatched_.push_back(r);
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
    return r->matched && r->remaining.drained() && core_->controlSent() >= r->controlEnd;
  };
  // A finished send needs no system call (a small send is usually finished
  // by the isend that matched it), and a matched send only waits for helper
  // threads: while no other send waits for a clear-to-send either, the
  // control socket is left alone, since NCCL's progress thread tests every
  // comm of the process in turn and each call delays the others. The
  // requests still pending pump when they are tested.
  if (!finished() && (!r->matched || !unmatched_.empty() || !core_->progressesWithoutCaller())) {
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
  // The comm is dead: nothing will reuse the slot.
  if (res != ncclSuccess) pool_.release(r);
  return res;
}

void SendComm::pump() {
  core_->flushControl();
  core_->fillControl();
  while (core_->rxSize() >= kCtsBytes) {
    PostedRecv posted;
    if (!decodeCts(core_->rxData(), &posted.cts)) {
      core_->health().fail(ncclRemoteError,
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

// The contract's matching: each send, in posting order, takes the first
// unfilled buffer with its tag in the oldest receive that has one. A send
// whose tag has no such buffer yet waits, and later sends with that tag wait
// behind it: when several ranks share one comm, one rank may run a step
// ahead of another (NCCL's IB plugin answers such a send with a NULL
// request; here it is already queued, so it waits for the next receive).
void SendComm::matchSends() {
  Health& health = core_->health();
  std::vector<int> waitingTags;
  for (auto it = unmatched_.begin(); it != unmatched_.end() && health.ok();) {
    SendRequest* r = *it;
    if (std::find(waitingTags.begin(), waitingTags.end(), r->tag) != waitingTags.end()) {
      ++it;
      continue;
    }
    size_t ahead = 0;
    int slot = -1;
    for (; ahead < posted_.size() && slot < 0; ahead++) {
      const PostedRecv& p = posted_[ahead];
      for (int i = 0; i < p.cts.n && slot < 0; i++) {
        if (!p.filled[i] && p.cts.tags[i] == r->tag) slot = i;
      }
    }
    if (slot < 0) {
      waitingTags.push_back(r->tag);
      ++it;
      continue;
    }
    ahead--;  // the loop stepped past the receive it found
    it = unmatched_.erase(it);
    r->matched = true;
    if (timeline_.enabled()) r->matchedNs = steadyNowNs();
    PostedRecv& p = posted_[ahead];
    p.filled[slot] = true;
    if (r->size > p.cts.sizes[slot]) {
      NCCLNET_WARN(health.log(),
                   "%s: message truncated: send of %zu bytes (tag %d) exceeds the "
                   "%llu-byte receive buffer; nothing is sent, both requests fail with "
                   "ncclInvalidUsage",
                   health.what().c_str(), r->size, r->tag,
                   static_cast<unsigned long long>(p.cts.sizes[slot]));
      r->error = ncclInvalidUsage;
      sendHeader(r, ahead, slot, kFlagTruncated);
    } else if (r->size <= inlineBytes_) {
      sendHeader(r, ahead, slot, r->size > 0 ? kFlagInline : 0);
    } else {
      sendHeader(r, ahead, slot, 0);
      // The header first: the receiver queues its stripes only once it has
      // read it, so it should not wait while helpers here are woken.
      core_->flushControl();
      // The comm died (this socket or a helper's): no stripe may go out,
      // since NCCL may free the buffer once test() reports the error, and
      // the send must fail rather than look done with its stripes unsent.
      if (!health.ok()) {
        r->error = health.error();
        break;
      }
      core_->queueStripes(Landing{r->data, nullptr, nullptr, r->size}, &r->remaining);
    }
    // Retired after every header, exactly as the receiver does when it reads
    // one, so that `ahead` names the same receive on both ends.
    while (!posted_.empty() && posted_.front().complete()) posted_.pop_front();
  }
}

void SendComm::sendHeader(SendRequest* r, size_t ahead, int slot, uint8_t flags) {
  DataHeader h;
  h.ahead = static_cast<uint8_t>(ahead);
  h.size = r->size;
  h.tag = r->tag;
  h.slot = static_cast<uint8_t>(slot);
  h.flags = flags;
  uint8_t bytes[kHeaderBytes];
  encodeHeader(h, bytes);
  core_->queueControl(bytes, sizeof(bytes));
  // Inline payloads go out from NCCL's buffer, in the same sendmsg() as
  // their header: the send is done once the queue has handed them to the
  // kernel, and NCCL keeps the buffer until then.
  if (flags & kFlagInline) core_->queueControlInPlace(r->data, r->size);
  r->controlEnd = core_->controlQueued();
}

}  // namespace ncclnet::socket
