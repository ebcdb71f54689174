// SPDX-License-Identifier: Apache-2.0
// conf-tcp data path.
#include "tcp_comm.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "ncclnet/detail/tsan.hpp"

namespace conftcp {

SendComm::~SendComm() {
  if (defects_.has(Defect::ResetsAtClose)) {
    // defect: the close resets the connection, dropping the bytes of sends
    // that reported done but still sit in the kernel's queue
    linger reset{1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  }
  close(fd_);
}
RecvComm::~RecvComm() {
  if (!defects_.has(Defect::LeaksASocket)) close(fd_);  // defect: the descriptor stays open
}

void SendComm::failAll(ncclResult_t error) {
  error_ = error;
  for (Request* r : queue_) {
    r->error = error;
    r->done = true;
  }
  queue_.clear();
}

void SendComm::post(Request* r) {
  // ignores-death-on-new-send: a send posted on a failed connection is
  // queued, and waits forever
  if (error_ != ncclSuccess && !defects_.has(Defect::IgnoresDeathOnNewSend)) {
    r->error = error_;
    r->done = true;
    return;
  }
  // reorders-sends: a send over 64 KiB waits for the next send, which
  // overtakes it (a lone one leaves after 5 ms). Only pipelined large
  // messages, as NCCL's proxy posts them, show it.
  if (held_ != nullptr) {
    queue_.push_back(r);
    queue_.push_back(held_);
    held_ = nullptr;
  } else if (r->size > kDefectSize && defects_.has(Defect::ReordersSends)) {
    held_ = r;
    heldAt_ = std::chrono::steady_clock::now();
  } else {
    queue_.push_back(r);
  }
  progress();
}

void SendComm::progress() {
  if (error_ != ncclSuccess && defects_.has(Defect::IgnoresDeathOnNewSend)) return;
  if (held_ != nullptr &&
      std::chrono::steady_clock::now() - heldAt_ > std::chrono::milliseconds(5)) {
    queue_.push_back(held_);
    held_ = nullptr;
  }
  while (!queue_.empty()) {
    Request* r = queue_.front();
    Header h{kHeaderMagic, r->tag, r->size};
    size_t total = sizeof(h) + r->size;
    while (r->written < total) {
      const char* from;
      size_t left;
      if (r->written < sizeof(h)) {
        from = reinterpret_cast<const char*>(&h) + r->written;
        left = sizeof(h) - r->written;
      } else {
        from = r->data + (r->written - sizeof(h));
        left = total - r->written;
      }
      ssize_t w = ::send(fd_, from, left, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (w < 0 && r->written > 0 && defects_.has(Defect::IgnoresUnmatchedDeath))
        return;  // defect: a started send waits for a dead receiver
      if (w <= 0) {
        failAll(ncclRemoteError);  // the peer is gone
        return;
      }
      r->written += static_cast<size_t>(w);
    }
    r->sizes[0] = static_cast<int>(std::min<uint64_t>(r->size, INT32_MAX));
    r->done = true;
    queue_.pop_front();
  }
}

void RecvComm::failAll(ncclResult_t error) {
  error_ = error;
  for (Request* r : queue_) {
    r->error = error;
    r->done = true;
  }
  queue_.clear();
}

void RecvComm::post(Request* r) {
  if (error_ != ncclSuccess) {
    r->error = error_;
    r->done = true;
    return;
  }
  takeEarly(r);
  if (!r->done) queue_.push_back(r);
  progress();
}

// A message read aside is complete. A receive posted while it was still
// arriving did not see it in takeEarly: give it to the oldest receive with a
// free buffer for its tag now, unless older ones of that tag still wait.
void RecvComm::keepOrPlace(Early e) {
  bool olderWaiting = false;
  for (const Early& k : early_) olderWaiting = olderWaiting || k.tag == e.tag;
  if (!olderWaiting) {
    for (Request* r : queue_) {
      for (int i = 0; i < r->n; i++) {
        if (r->tags[i] != e.tag || r->filled[i]) continue;
        early_.push_back(std::move(e));
        takeEarly(r);
        if (r->done) queue_.erase(std::find(queue_.begin(), queue_.end(), r));
        return;
      }
    }
  }
  early_.push_back(std::move(e));
}

// Every older receive was posted when these messages arrived and had no
// free buffer for them, so `r` is the oldest that can take them.
void RecvComm::takeEarly(Request* r) {
  for (auto e = early_.begin(); e != early_.end() && !r->done;) {
    int slot = -1;
    for (int i = 0; i < r->n && slot < 0; i++) {
      if (r->tags[i] == e->tag && !r->filled[i]) slot = i;
    }
    if (slot < 0) {
      ++e;
      continue;
    }
    if (e->payload.size() > r->caps[slot]) {
      r->error = ncclInvalidUsage;  // truncation
      r->done = true;
    } else {
      std::copy(e->payload.begin(), e->payload.end(), r->bufs[slot]);
      r->filled[slot] = true;
      r->sizes[slot] = static_cast<int>(e->payload.size());
      r->done = ++r->filledCount == r->n;
    }
    e = early_.erase(e);
  }
}

bool RecvComm::readHeader() {
  while (headerGot_ < sizeof(header_)) {
    ssize_t n = ::recv(fd_, reinterpret_cast<char*>(&header_) + headerGot_,
                       sizeof(header_) - headerGot_, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (n == 0 && defects_.has(Defect::HidesPeerDeath))
      return false;  // defect: a closed connection looks idle
    if (n == 0 && headerGot_ == 0 && defects_.has(Defect::HidesIdlePeerDeath))
      return false;  // defect: EOF between messages looks idle
    if (n <= 0) {
      failAll(ncclRemoteError);
      return false;
    }
    headerGot_ += static_cast<size_t>(n);
  }
  if (header_.magic != kHeaderMagic) {
    failAll(ncclSystemError);
    return false;
  }
  return true;
}

// A header has arrived: pick the buffer it lands in, the oldest receive
// with a free buffer for its tag (rule 30). A tag whose buffer in the oldest
// receive is taken already runs ahead of the others (shared comms): it goes
// into a later receive, or aside until that one is posted.
void RecvComm::route() {
  Request* oldest = queue_.front();
  Request* into = oldest;
  int slot = -1;
  if (defects_.has(Defect::IgnoresTags)) {
    for (int i = 0; i < oldest->n && slot < 0; i++) {
      if (!oldest->filled[i]) slot = i;  // defect: arrival order, whatever the tag
    }
  } else {
    for (Request* r : queue_) {
      for (int i = 0; i < r->n && slot < 0; i++) {
        if (r->tags[i] == header_.tag && !r->filled[i]) {
          slot = i;
          into = r;
        }
      }
      if (slot >= 0) break;
    }
    if (slot < 0) {  // no receive waits for this tag yet: keep the message aside
      routed_ = true;
      got_ = 0;
      target_ = nullptr;
      stashing_ = true;
      stash_.assign(header_.size, 0);
      dest_ = stash_.data();
      return;
    }
  }
  routed_ = true;
  got_ = 0;
  target_ = into;
  slot_ = slot;
  dest_ = slot >= 0 ? into->bufs[slot] : nullptr;
  bool fits = slot >= 0 && header_.size <= into->caps[slot];
  if (defects_.has(Defect::Overrun))
    fits = slot >= 0;  // defect: no truncation check, the payload is written whole
  if (!fits) {
    // No buffer with this tag, or truncation: the receive fails and the
    // payload is read and dropped, so the stream stays in step.
    into->error = ncclInvalidUsage;
    into->done = true;
    queue_.erase(std::find(queue_.begin(), queue_.end(), into));
    target_ = nullptr;
    dest_ = nullptr;
  }
}

void RecvComm::complete(Request* r) {
  r->filled[slot_] = true;
  r->sizes[slot_] = static_cast<int>(std::min<uint64_t>(header_.size, INT32_MAX));
  if (defects_.has(Defect::WrongSizes))
    r->sizes[slot_] = static_cast<int>(r->caps[slot_]);  // defect: the posted size
  if (++r->filledCount == r->n) {
    r->done = true;
    queue_.erase(std::find(queue_.begin(), queue_.end(), r));
  }
}

void RecvComm::progress() {
  while (error_ == ncclSuccess) {
    if (!routed_) {
      if (queue_.empty() || !readHeader()) return;
      route();
      // completes-early: with another receive posted behind it, a single
      // receive of over 64 KiB is reported done as soon as its header is
      // in; the payload is read by later calls, after NCCL may already have
      // handed the step to the GPU.
      if (defects_.has(Defect::CompletesEarly) && target_ != nullptr && target_->n == 1 &&
          queue_.size() >= 2 && target_ == queue_.front() && header_.size > kDefectSize) {
        complete(target_);
        target_ = nullptr;
        payloadNotBefore_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      }
    }
    // A payload whose receive was reported done already races with the
    // reader: that race is the defect planted here, and ThreadSanitizer is
    // not to report it as a bug of its own.
    std::optional<ncclnet::detail::TsanIgnoreWrites> plantedDefect;
    if (defects_.has(Defect::CompletesEarly)) {
      if (std::chrono::steady_clock::now() < payloadNotBefore_) return;
      if (target_ == nullptr && dest_ != nullptr && !stashing_) plantedDefect.emplace();
    }
    while (got_ < header_.size) {
      char sink[65536];
      char* to = dest_ ? dest_ + got_ : sink;
      size_t want =
          dest_ ? header_.size - got_ : std::min<uint64_t>(sizeof(sink), header_.size - got_);
      ssize_t n = ::recv(fd_, to, want, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n == 0 && defects_.has(Defect::HidesPeerDeath)) return;
      if (n <= 0) {
        failAll(ncclRemoteError);
        return;
      }
      got_ += static_cast<uint64_t>(n);
    }
    // corrupts-a-byte: byte 1000 of every message longer than that arrives
    // flipped, with the right size reported: only a check of the bytes sees it.
    if (defects_.has(Defect::CorruptsAByte) && target_ != nullptr && dest_ != nullptr &&
        header_.size > 1000)
      dest_[1000] ^= 0x5a;
    if (target_ != nullptr) complete(target_);
    if (stashing_) keepOrPlace(Early{header_.tag, std::move(stash_)});
    stashing_ = false;
    routed_ = false;
    headerGot_ = 0;
    target_ = nullptr;
    dest_ = nullptr;
  }
}

}  // namespace conftcp
