// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: non-blocking handshake sockets.
#include "ncclnet/oob_channel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ncclnet/interfaces.hpp"

namespace ncclnet {
namespace {

socklen_t lengthOf(const sockaddr_storage& addr) {
  return addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

std::string errorText(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

bool oobLocalAddress(const std::string& ifname, sockaddr_storage* out, std::string* why) {
  std::vector<Interface> found =
      findInterfaces(ifname, AF_UNSPEC, Loopback::LastResort, Logger(nullptr, "NET/oob"));
  if (found.empty()) {
    *why = ifname.empty() ? "no interface is running, not even lo"
                          : "no running interface matches NCCL_SOCKET_IFNAME=" + ifname;
    return false;
  }
  std::memset(out, 0, sizeof(*out));
  std::memcpy(out, &found.front().addr, found.front().addrLen);
  return true;
}

bool oobListen(const sockaddr_storage& addr, Fd* fd, sockaddr_storage* bound, std::string* why) {
  Fd s(::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s.valid()) {
    *why = errorText("socket");
    return false;
  }
  sockaddr_storage local = addr;
  if (local.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&local)->sin_port = 0;
  else
    reinterpret_cast<sockaddr_in6*>(&local)->sin6_port = 0;
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&local), lengthOf(local)) != 0) {
    *why = errorText("bind");
    return false;
  }
  if (::listen(s.get(), 128) != 0) {
    *why = errorText("listen");
    return false;
  }
  socklen_t len = sizeof(*bound);
  if (::getsockname(s.get(), reinterpret_cast<sockaddr*>(bound), &len) != 0) {
    *why = errorText("getsockname");
    return false;
  }
  *fd = std::move(s);
  return true;
}

bool oobConnectStart(const sockaddr_storage& addr, Fd* fd, std::string* why) {
  Fd s(::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s.valid()) {
    *why = errorText("socket");
    return false;
  }
  int one = 1;
  ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), lengthOf(addr)) != 0 &&
      errno != EINPROGRESS) {
    *why = errorText("connect") + " to " + addressString(addr);
    return false;
  }
  *fd = std::move(s);
  return true;
}

Progress oobConnectDone(const Fd& fd, std::string* why) {
  pollfd p{fd.get(), POLLOUT, 0};
  int n = ::poll(&p, 1, 0);
  if (n == 0) return Progress::kPending;
  int err = 0;
  socklen_t len = sizeof(err);
  if (n < 0 || ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    if (err != 0) errno = err;
    *why = errorText("connect");
    return Progress::kFailed;
  }
  return Progress::kDone;
}

Progress oobAccept(const Fd& listener, Fd* accepted, std::string* why) {
  int fd = -1;
  do {  // a connection reset while queued is gone: take the next one
    fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  } while (fd < 0 && (errno == EINTR || errno == ECONNABORTED));
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Progress::kPending;
    *why = errorText("accept");
    return Progress::kFailed;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  *accepted = Fd(fd);
  return Progress::kDone;
}

namespace {

// One step of moving `size - *offset` bytes with `io` (sendSome/recvSome).
template <typename Buffer, typename IoCall>
Progress moveAll(const Fd& fd, Buffer* buffer, size_t size, size_t* offset, IoCall io,
                 const char* what, std::string* why) {
  while (*offset < size) {
    size_t moved = 0;
    switch (io(fd.get(), buffer + *offset, size - *offset, &moved)) {
      case Io::Moved: *offset += moved; break;
      case Io::WouldBlock: return Progress::kPending;
      case Io::Closed: *why = "peer closed the handshake connection"; return Progress::kFailed;
      case Io::Failed: *why = errorText(what); return Progress::kFailed;
    }
  }
  return Progress::kDone;
}

}  // namespace

Progress oobSend(const Fd& fd, const void* buffer, size_t size, size_t* offset, std::string* why) {
  return moveAll(fd, static_cast<const char*>(buffer), size, offset, sendSome, "send", why);
}

Progress oobRecv(const Fd& fd, void* buffer, size_t size, size_t* offset, std::string* why) {
  return moveAll(fd, static_cast<char*>(buffer), size, offset, recvSome, "recv", why);
}

std::string oobPeer(const Fd& fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  return addressString(addr);
}

}  // namespace ncclnet
