// SPDX-License-Identifier: Apache-2.0
// sdk-socket: an owned file descriptor and the few socket calls every other
// file needs, all non-blocking.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>
#include <utility>

namespace ncclnet::socket {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// The outcome of one non-blocking transfer attempt.
enum class Io { Moved, WouldBlock, Closed, Failed };

// send()/recv() without blocking and without SIGPIPE; `*moved` is the byte
// count (only for Io::Moved). EINTR is retried.
Io sendSome(int fd, const void* data, size_t size, size_t* moved);
Io recvSome(int fd, void* data, size_t size, size_t* moved);
// sendmsg() of `count` ranges in order, as one call; the same outcomes.
Io sendSomeV(int fd, const iovec* ranges, int count, size_t* moved);

// A fresh non-blocking TCP socket of `family` with close-on-exec.
Fd openStreamSocket(int family);

// Options every connection gets: TCP_NODELAY (headers must not wait for
// Nagle), keepalive and TCP_USER_TIMEOUT bounding how long a dead peer stays
// unnoticed, and optional fixed buffer sizes.
void tuneSocket(int fd, int peerTimeoutMs, int bufferBytes);

}  // namespace ncclnet::socket
