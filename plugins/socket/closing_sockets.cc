// SPDX-License-Identifier: Apache-2.0
// sdk-socket: parked control sockets (closing_sockets.hpp).
#include "closing_sockets.hpp"

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>

namespace ncclnet::socket {

namespace {
// Reads and drops what the receiver sent (a bounded amount per call: a
// receiver may keep announcing receives); true once its end is closed.
bool receiverGone(int fd) {
  char frames[4096];
  for (int reads = 0; reads < 16; reads++) {
    size_t moved = 0;
    Io io = recvSome(fd, frames, sizeof(frames), &moved);
    if (io != Io::Moved) return io != Io::WouldBlock;
  }
  return false;
}

// Bytes the kernel still holds for the receiver: sent but not acknowledged.
int unacknowledged(int fd) {
  int bytes = 0;
  return ioctl(fd, SIOCOUTQ, &bytes) == 0 ? bytes : 0;
}
}  // namespace

ClosingSockets::~ClosingSockets() {
  auto deadline = std::chrono::steady_clock::now() + kFinalLinger;
  for (Parked& p : parked_) {
    int fd = p.fd.get();
    while (!receiverGone(fd) && unacknowledged(fd) > 0 &&
           std::chrono::steady_clock::now() < deadline) {
      pollfd readable{fd, POLLIN, 0};
      ::poll(&readable, 1, 5);
    }
  }
}

void ClosingSockets::park(Fd control) {
  ::shutdown(control.get(), SHUT_WR);
  std::lock_guard<std::mutex> lock(mutex_);
  // Swept whenever the list doubled since the last sweep: NCCL closes all
  // of a communicator's comms at once, and a sweep per close would cost a
  // system call per parked socket each time.
  if (parked_.size() >= std::max<size_t>(kSweepAtLeast, 2 * afterSweep_)) sweepLocked();
  parked_.push_back(Parked{std::move(control), std::chrono::steady_clock::now()});
}

void ClosingSockets::sweep() {
  std::lock_guard<std::mutex> lock(mutex_);
  sweepLocked();
}

size_t ClosingSockets::parked() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return parked_.size();
}

void ClosingSockets::sweepLocked() {
  auto now = std::chrono::steady_clock::now();
  auto done = std::remove_if(parked_.begin(), parked_.end(), [&](Parked& p) {
    return receiverGone(p.fd.get()) || now - p.since > kParkedLimit;
  });
  parked_.erase(done, parked_.end());
  afterSweep_ = parked_.size();
}

}  // namespace ncclnet::socket
