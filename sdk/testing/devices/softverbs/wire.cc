// SPDX-License-Identifier: Apache-2.0
// softverbs: socket I/O with deadlines, and ordered placement of writes.
#include "wire.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace softverbs {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPollStepMs = 50;

// Waits until `fd` is ready for `events`; false on stop or a stall.
bool waitReady(int fd, short events, const std::atomic<bool>& stop, Clock::time_point deadline) {
  while (!stop.load(std::memory_order_relaxed)) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, kPollStepMs);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
    if (Clock::now() > deadline) return false;
  }
  return false;
}

Clock::time_point deadlineAfter(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

bool sendAll(int fd, const void* data, size_t size, const std::atomic<bool>& stop,
             double stallSeconds) {
  const char* p = static_cast<const char*>(data);
  auto deadline = deadlineAfter(stallSeconds);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      deadline = deadlineAfter(stallSeconds);  // progress resets the stall clock
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!waitReady(fd, POLLOUT, stop, deadline)) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool recvAll(int fd, void* data, size_t size, const std::atomic<bool>& stop, double stallSeconds) {
  char* p = static_cast<char*>(data);
  auto deadline = deadlineAfter(stallSeconds);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      deadline = deadlineAfter(stallSeconds);
      continue;
    }
    if (n == 0) return false;  // the peer closed
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!waitReady(fd, POLLIN, stop, deadline)) return false;
      continue;
    }
    return false;
  }
  return true;
}

void placeAscending(void* dst, const void* src, size_t size) {
  // The bulk may land in any order; only its tail must land last, so the
  // last kOrderedTail bytes are stored one word at a time, each a release
  // store: a release orders every earlier write of this thread (the bulk,
  // the tail words below it) before it, so a reader that acquires any tail
  // word sees all bytes below that word. No separate fence is needed (and
  // ThreadSanitizer cannot model one).
  constexpr size_t kOrderedTail = 4096;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (size > kOrderedTail) {
    size_t bulk = size - kOrderedTail;
    std::memcpy(d, s, bulk);
    d += bulk;
    s += bulk;
    size = kOrderedTail;
  }
  while (size > 0 && (reinterpret_cast<uintptr_t>(d) & 7u) != 0) {
    __atomic_store_n(d++, *s++, __ATOMIC_RELEASE);
    size--;
  }
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, s, 8);
    __atomic_store_n(reinterpret_cast<uint64_t*>(d), word, __ATOMIC_RELEASE);
    d += 8;
    s += 8;
    size -= 8;
  }
  while (size > 0) {
    __atomic_store_n(d++, *s++, __ATOMIC_RELEASE);
    size--;
  }
}

}  // namespace softverbs
