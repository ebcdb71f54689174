// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the control socket's byte queues and the data sockets' drivers.
#include "connection_sockets.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ncclnet::socket {

namespace {
// Receive buffer for control bytes: many headers and small inline payloads
// arrive in one recv() call.
constexpr size_t kRxBytes = 256 << 10;
}  // namespace

ConnectionSockets::ConnectionSockets(Fd control, std::vector<Fd> data, Shape shape, bool sending,
                                     Logger log, std::string what)
    : shape_(shape),
      health_(log, std::move(what)),
      control_(std::move(control)),
      rx_(kRxBytes),
      receiving_(!sending) {
  int count = static_cast<int>(data.size());
  for (int i = 0; i < count; i++) {
    streams_.push_back(std::make_unique<Stream>(std::move(data[i]), sending, i, &health_));
  }
  plan_.resize(count);
  // Stream i belongs to thread i % nThreads: consecutive stripes of one
  // message land on different threads.
  int nThreads = shape_.fitToCores ? shape_.census->claim(shape_.nThreads) : shape_.nThreads;
  for (int t = 0; t < nThreads && t < count; t++) {
    std::vector<Stream*> mine;
    for (int i = t; i < count; i += nThreads) mine.push_back(streams_[i].get());
    workers_.push_back(
        std::make_unique<Worker>(std::move(mine), shape_.patience, shape_.census.get(), &health_));
  }
  if (shape_.fitToCores) shape_.census->release(nThreads);  // the workers count themselves now
}

ConnectionSockets::~ConnectionSockets() {
  workers_.clear();  // joins: no thread touches a stream past this line
  if (shape_.closing && health_.ok()) shape_.closing->park(std::move(control_));
}

void ConnectionSockets::queueControl(const void* bytes, size_t size) {
  if (size == 0) return;
  const auto* p = static_cast<const uint8_t*>(bytes);
  if (!txRanges_.empty() && txRanges_.back().outside == nullptr) {
    txRanges_.back().size += size;  // the last range ends where tx_ ends
  } else {
    txRanges_.push_back(TxRange{nullptr, tx_.size(), size});
  }
  tx_.insert(tx_.end(), p, p + size);
  txQueuedTotal_ += size;
}

void ConnectionSockets::queueControlInPlace(const void* bytes, size_t size) {
  if (size == 0) return;
  txRanges_.push_back(TxRange{static_cast<const uint8_t*>(bytes), 0, size});
  txQueuedTotal_ += size;
}

void ConnectionSockets::flushControl() {
  if (peerClosed_) {  // nobody reads clear-to-sends any more
    dropControlQueue();
    return;
  }
  // One sendmsg() takes headers and the inline payloads between them
  // straight from where they are.
  constexpr int kMaxRanges = 64;
  iovec ranges[kMaxRanges];
  while (!txRanges_.empty() && health_.ok()) {
    int count = 0;
    for (auto it = txRanges_.begin(); it != txRanges_.end() && count < kMaxRanges; ++it) {
      const uint8_t* base = it->outside != nullptr ? it->outside : tx_.data() + it->offset;
      size_t skip = count == 0 ? txFrontSent_ : 0;
      ranges[count++] = iovec{const_cast<uint8_t*>(base + skip), it->size - skip};
    }
    size_t moved = 0;
    Io io = count == 1 ? sendSome(control_.get(), ranges[0].iov_base, ranges[0].iov_len, &moved)
                       : sendSomeV(control_.get(), ranges, count, &moved);
    if (io == Io::Moved) {
      txSentTotal_ += moved;
      while (moved > 0) {
        size_t left = txRanges_.front().size - txFrontSent_;
        if (moved < left) {
          txFrontSent_ += moved;
          break;
        }
        moved -= left;
        txRanges_.pop_front();
        txFrontSent_ = 0;
      }
      if (txRanges_.empty()) tx_.clear();
    } else if (io == Io::WouldBlock) {
      return;
    } else if (io == Io::Closed) {
      onControlClosed("send");
    } else {
      health_.fail(Failure::kPeerGone, "control socket: send failed: %s", std::strerror(errno));
    }
  }
}

void ConnectionSockets::onControlClosed(const char* call) {
  if (!receiving_) {
    health_.fail(Failure::kPeerGone, "control socket: connection closed by the peer (%s)", call);
    return;
  }
  peerClosed_ = true;
  dropControlQueue();
}

void ConnectionSockets::dropControlQueue() {
  txRanges_.clear();
  tx_.clear();
  txFrontSent_ = 0;
}

void ConnectionSockets::fillControl() {
  if (rxHead_ == rxTail_) rxHead_ = rxTail_ = 0;
  if (rxTail_ == rx_.size() && rxHead_ > 0) {  // make room at the end
    std::memmove(rx_.data(), rx_.data() + rxHead_, rxTail_ - rxHead_);
    rxTail_ -= rxHead_;
    rxHead_ = 0;
  }
  while (rxTail_ < rx_.size() && health_.ok()) {
    size_t moved = 0;
    Io io = recvSome(control_.get(), rx_.data() + rxTail_, rx_.size() - rxTail_, &moved);
    if (io == Io::Moved) {
      rxTail_ += moved;
      if (rxTail_ < rx_.size()) return;  // a short read: the socket is empty
    } else if (io == Io::WouldBlock) {
      return;
    } else if (io == Io::Closed) {
      onControlClosed("recv");
      return;
    } else {
      health_.fail(Failure::kPeerGone, "control socket: recv failed: %s", std::strerror(errno));
    }
  }
}

size_t ConnectionSockets::readControlInto(char* at, size_t size) {
  if (rxHead_ != rxTail_ || !health_.ok()) return 0;
  size_t moved = 0;
  Io io = recvSome(control_.get(), at, size, &moved);
  if (io == Io::Moved) return moved;
  if (io == Io::Closed) {
    onControlClosed("recv");
  } else if (io == Io::Failed) {
    health_.fail(Failure::kPeerGone, "control socket: recv failed: %s", std::strerror(errno));
  }
  return 0;
}

void ConnectionSockets::queueStripes(const Landing& landing, Pending* pending) {
  int count = static_cast<int>(streams_.size());
  int n = planStripes(landing.size, count, shape_.minTaskBytes, nextStream_, plan_.data());
  nextStream_ = (nextStream_ + n) % count;
  // Every task is counted before the first is queued: a helper may finish
  // one at once, and `pending` must not reach zero in between.
  pieces_.clear();
  for (int i = 0; i < n; i++) {
    const Stripe& s = plan_[i];
    for (size_t offset = s.offset, end = s.offset + s.length; offset < end;) {
      size_t run = 0;
      char* at = landing.at(offset, &run);
      run = std::min(run, end - offset);
      pieces_.push_back(Piece{s.stream, at, run});
      offset += run;
    }
  }
  pending->add(static_cast<int>(pieces_.size()));
  int nThreads = static_cast<int>(workers_.size());
  for (const Piece& piece : pieces_) {
    streams_[piece.stream]->push(piece.at, piece.size, pending);
    if (nThreads > 0) workers_[piece.stream % nThreads]->wake();
  }
  driveStreams();
}

void ConnectionSockets::driveStreams() {
  // With helper threads the data sockets are theirs alone: NCCL serves every
  // comm of a process from one progress thread, and if it copied stripes in
  // test() (whenever a helper sleeps) it would become the bottleneck that no
  // thread or socket count relieves. Without helpers it moves everything.
  if (!workers_.empty()) return;
  bool moved = false;
  for (auto& stream : streams_) stream->progress(&moved);
}

}  // namespace ncclnet::socket
