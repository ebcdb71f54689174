// SPDX-License-Identifier: Apache-2.0
// sdk-socket: non-blocking socket helpers.
#include "fd.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <cerrno>

namespace ncclnet::socket {

namespace {

Io classify(ssize_t n, size_t* moved, bool receiving) {
  if (n > 0) {
    *moved = static_cast<size_t>(n);
    return Io::Moved;
  }
  if (n == 0 && receiving) return Io::Closed;  // orderly shutdown by the peer
  if (n == 0) return Io::WouldBlock;           // sending 0 bytes: nothing happened
  if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::WouldBlock;
  if (errno == EPIPE || errno == ECONNRESET) return Io::Closed;
  return Io::Failed;
}

}  // namespace

Io sendSome(int fd, const void* data, size_t size, size_t* moved) {
  ssize_t n;
  do {
    n = ::send(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return classify(n, moved, false);
}

Io sendSomeV(int fd, const iovec* ranges, int count, size_t* moved) {
  msghdr message{};
  message.msg_iov = const_cast<iovec*>(ranges);
  message.msg_iovlen = static_cast<size_t>(count);
  ssize_t n;
  do {
    n = ::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return classify(n, moved, false);
}

Io recvSome(int fd, void* data, size_t size, size_t* moved) {
  ssize_t n;
  do {
    n = ::recv(fd, data, size, MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  return classify(n, moved, true);
}

Fd openStreamSocket(int family) {
  return Fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
}

void tuneSocket(int fd, int peerTimeoutMs, int bufferBytes) {
  // Failures are harmless here (e.g. an option the kernel lacks): the
  // connection still works, only less tuned, so they are ignored.
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  // Keepalive probes while idle, TCP_USER_TIMEOUT while data is unacked:
  // together they bound how long a vanished peer goes unnoticed.
  int idle = std::max(1, peerTimeoutMs / 3000);
  int interval = std::max(1, peerTimeoutMs / 6000);
  int count = 3;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  unsigned userTimeout = static_cast<unsigned>(peerTimeoutMs);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeout, sizeof(userTimeout));
  if (bufferBytes > 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufferBytes, sizeof(bufferBytes));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufferBytes, sizeof(bufferBytes));
  }
}

}  // namespace ncclnet::socket
