// SPDX-License-Identifier: Apache-2.0
// conf-tcp data path.
#include "tcp_comm.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace conftcp {

SendComm::~SendComm() {
  close(fd_);
}
RecvComm::~RecvComm() {
  close(fd_);
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
  if (error_ != ncclSuccess) {
    r->error = error_;
    r->done = true;
    return;
  }
  queue_.push_back(r);
  progress();
}

void SendComm::progress() {
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
  queue_.push_back(r);
  progress();
}

bool RecvComm::readHeader() {
  while (headerGot_ < sizeof(header_)) {
    ssize_t n = ::recv(fd_, reinterpret_cast<char*>(&header_) + headerGot_,
                       sizeof(header_) - headerGot_, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
#ifdef CONF_TCP_DEFECT_HIDES_PEER_DEATH
    if (n == 0) return false;  // defect: a closed connection looks idle
#endif
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
// into a later receive, and waits (false) until that one is posted.
bool RecvComm::route() {
  Request* oldest = queue_.front();
  Request* into = oldest;
  int slot = -1;
#ifdef CONF_TCP_DEFECT_IGNORES_TAGS
  for (int i = 0; i < oldest->n && slot < 0; i++) {
    if (!oldest->filled[i]) slot = i;  // defect: arrival order, whatever the tag
  }
#else
  bool oldestHasTag = false;
  for (Request* r : queue_) {
    for (int i = 0; i < r->n && slot < 0; i++) {
      if (r->tags[i] != header_.tag) continue;
      if (r == oldest) oldestHasTag = true;
      if (!r->filled[i]) {
        slot = i;
        into = r;
      }
    }
    if (slot >= 0) break;
  }
  if (slot < 0 && oldestHasTag) return false;
#endif
  routed_ = true;
  got_ = 0;
  target_ = into;
  slot_ = slot;
  bool fits = slot >= 0 && header_.size <= into->caps[slot];
#ifdef CONF_TCP_DEFECT_OVERRUN
  fits = slot >= 0;  // defect: no truncation check, the payload is written whole
#endif
  if (!fits) {
    // No buffer with this tag, or truncation: the receive fails and the
    // payload is read and dropped, so the stream stays in step.
    into->error = ncclInvalidUsage;
    into->done = true;
    queue_.erase(std::find(queue_.begin(), queue_.end(), into));
    target_ = nullptr;
  }
  return true;
}

void RecvComm::progress() {
  while (error_ == ncclSuccess) {
    if (!routed_) {
      if (queue_.empty() || !readHeader() || !route()) return;
    }
    while (got_ < header_.size) {
      char sink[65536];
      char* to = target_ ? target_->bufs[slot_] + got_ : sink;
      size_t want =
          target_ ? header_.size - got_ : std::min<uint64_t>(sizeof(sink), header_.size - got_);
      ssize_t n = ::recv(fd_, to, want, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
#ifdef CONF_TCP_DEFECT_HIDES_PEER_DEATH
      if (n == 0) return;
#endif
      if (n <= 0) {
        failAll(ncclRemoteError);
        return;
      }
      got_ += static_cast<uint64_t>(n);
    }
    if (target_ != nullptr) {
      Request* r = target_;
      r->filled[slot_] = true;
#ifdef CONF_TCP_DEFECT_WRONG_SIZES
      r->sizes[slot_] = static_cast<int>(r->caps[slot_]);  // defect: the posted size
#else
      r->sizes[slot_] = static_cast<int>(std::min<uint64_t>(header_.size, INT32_MAX));
#endif
      if (++r->filledCount == r->n) {
        r->done = true;
        queue_.erase(std::find(queue_.begin(), queue_.end(), r));
      }
    }
    routed_ = false;
    headerGot_ = 0;
    target_ = nullptr;
  }
}

}  // namespace conftcp
