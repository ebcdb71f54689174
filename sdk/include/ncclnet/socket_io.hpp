// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: an owned socket descriptor and the non-blocking calls every
// TCP-speaking plugin needs, whether TCP carries its data (sdk-socket) or
// only its out-of-band handshake (sdk-ib, any verbs or RDMA plugin): NCCL
// polls connect, accept and test and expects each to return at once, and a
// peer that dies must surface as an error, never as a SIGPIPE or a hang.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <string>
#include <utility>

namespace ncclnet {

// Owns one descriptor: closed when replaced or destroyed; moves, never copies.
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
  // Closes the descriptor held, if any, and holds `fd` instead.
  void reset(int fd = -1);
  // Gives the descriptor up without closing it.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// The outcome of one non-blocking transfer attempt.
enum class Io { Moved, WouldBlock, Closed, Failed };

// send()/recv() without blocking and without SIGPIPE; `*moved` is the byte
// count (only for Io::Moved). EINTR is retried; a reset or a broken pipe is
// Closed, as is an orderly shutdown seen by recv.
Io sendSome(int fd, const void* data, size_t size, size_t* moved);
Io recvSome(int fd, void* data, size_t size, size_t* moved);
// sendmsg() of `count` ranges in order, as one call; the same outcomes.
Io sendSomeV(int fd, const iovec* ranges, int count, size_t* moved);

// A fresh non-blocking TCP socket of `family` with close-on-exec.
Fd openStreamSocket(int family);

// How long a peer that vanished without closing (a host that died, a cable
// pulled) goes unnoticed on an idle connection: idle + probes * interval.
struct KeepAlive {
  int idleS;
  int intervalS;
  int probes;
};
// Socket options; failures are ignored (an option the kernel lacks leaves
// the connection working, only less tuned).
void setKeepAlive(int fd, const KeepAlive& keepAlive);
// How long sent data may stay unacknowledged before the kernel gives up.
void setUserTimeout(int fd, unsigned milliseconds);
void setNoDelay(int fd);
void setBufferSizes(int fd, int bytes);

// "1.2.3.4:port" / "::1:port" ("?:0" when the family is neither).
std::string addressString(const sockaddr_storage& addr);

}  // namespace ncclnet
