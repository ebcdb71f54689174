// SPDX-License-Identifier: Apache-2.0
// ncclnet-bench: raw TCP, the number to beat.
#include "tcp_peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

namespace ncclnet::bench {

namespace {

bool sendAll(int fd, const char* p, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool recvAll(int fd, char* p, size_t size) {
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void noDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

std::unique_ptr<TcpPeer> TcpPeer::open(const std::string& host, int streams, size_t maxSize,
                                       Pair& pair, std::string* why) {
  std::unique_ptr<TcpPeer> peer(new TcpPeer());
  peer->host_ = host;
  peer->buffer_.assign(std::max<size_t>(maxSize, 1), 1);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    *why = "--tcp-host must be an IPv4 address";
    return nullptr;
  }
  if (pair.isChild()) {
    int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    socklen_t len = sizeof(addr);
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listener, streams) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        !pair.send(&addr.sin_port, sizeof(addr.sin_port))) {
      *why = std::string("listen: ") + std::strerror(errno);
      return nullptr;
    }
    for (int i = 0; i < streams; i++) {
      int fd = ::accept(listener, nullptr, nullptr);
      if (fd < 0) break;
      int index = 0;  // the connector names each socket, so stripes line up
      if (!recvAll(fd, reinterpret_cast<char*>(&index), sizeof(index)) || index < 0 ||
          index >= streams) {
        ::close(fd);
        break;
      }
      noDelay(fd);
      if (peer->fds_.empty()) peer->fds_.assign(streams, -1);
      peer->fds_[index] = fd;
    }
    ::close(listener);
  } else {
    if (!pair.recv(&addr.sin_port, sizeof(addr.sin_port))) {
      *why = "no port from the peer";
      return nullptr;
    }
    for (int i = 0; i < streams; i++) {
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
          !sendAll(fd, reinterpret_cast<const char*>(&i), sizeof(i))) {
        *why = std::string("connect: ") + std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return nullptr;
      }
      noDelay(fd);
      peer->fds_.push_back(fd);
    }
  }
  for (int fd : peer->fds_) {
    if (fd < 0) {
      *why = "not every baseline connection arrived";
      return nullptr;
    }
  }
  if (static_cast<int>(peer->fds_.size()) != streams) {
    *why = "not every baseline connection arrived";
    return nullptr;
  }
  return peer;
}

TcpPeer::~TcpPeer() {
  for (int fd : fds_) ::close(fd);
}

std::string TcpPeer::describe() const {
  return "raw TCP, " + std::to_string(fds_.size()) + " stream" + (fds_.size() > 1 ? "s" : "") +
         " (" + host_ + ")";
}

bool TcpPeer::stream(bool sender, size_t size, int iters, int) {
  int streams = static_cast<int>(fds_.size());
  size_t share = (size + streams - 1) / streams;
  std::atomic<bool> ok{true};
  auto run = [&](int k) {
    size_t offset = std::min(size, share * k);
    size_t length = std::min(share, size - offset);
    if (length == 0) return;
    char* p = buffer_.data() + offset;
    for (int i = 0; i < iters && ok; i++) {
      bool moved = sender ? sendAll(fds_[k], p, length) : recvAll(fds_[k], p, length);
      if (!moved) ok = false;
    }
  };
  if (size == 0) return true;  // nothing to move: TCP has no empty messages
  std::vector<std::thread> helpers;
  for (int k = 1; k < streams; k++) helpers.emplace_back(run, k);
  run(0);
  for (auto& t : helpers) t.join();
  return ok;
}

bool TcpPeer::pingpong(bool initiator, size_t size, int iters) {
  int fd = fds_[0];
  char* p = buffer_.data();
  for (int i = 0; i < iters; i++) {
    bool ok = initiator ? sendAll(fd, p, size) && recvAll(fd, p, size)
                        : recvAll(fd, p, size) && sendAll(fd, p, size);
    if (!ok) return false;
  }
  return true;
}

}  // namespace ncclnet::bench
