// SPDX-License-Identifier: Apache-2.0
// Owned descriptors and non-blocking socket calls (socket_io.hpp).
#include "ncclnet/socket_io.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>

namespace ncclnet {

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

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

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

void setKeepAlive(int fd, const KeepAlive& keepAlive) {
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &keepAlive.idleS, sizeof(keepAlive.idleS));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &keepAlive.intervalS, sizeof(keepAlive.intervalS));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &keepAlive.probes, sizeof(keepAlive.probes));
}

void setUserTimeout(int fd, unsigned milliseconds) {
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &milliseconds, sizeof(milliseconds));
}

void setNoDelay(int fd) {
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

void setBufferSizes(int fd, int bytes) {
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

std::string addressString(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace ncclnet
