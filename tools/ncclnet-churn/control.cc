// SPDX-License-Identifier: Apache-2.0
// ncclnet-churn: the control link between the ranks.
#include "control.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "ncclnet/testing/channel.hpp"

namespace ncclnet::churn {

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double secondsLeft(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

bool toAddress(const std::string& host, int port, sockaddr_in* out) {
  *out = sockaddr_in{};
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<uint16_t>(port));
  if (host.empty()) {
    out->sin_addr.s_addr = htonl(INADDR_ANY);
    return true;
  }
  return inet_pton(AF_INET, host.c_str(), &out->sin_addr) == 1;
}

void noDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

Control::~Control() {
  if (fd_ >= 0) close(fd_);
  if (listenFd_ >= 0) close(listenFd_);
}

bool Control::listen(const std::string& host, int port, std::string* why) {
  sockaddr_in addr;
  if (!toAddress(host, port, &addr)) {
    *why = "'" + host + "' is not an IPv4 address";
    return false;
  }
  listenFd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (listenFd_ < 0 || bind(listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listenFd_, 1) != 0) {
    *why = "cannot listen on " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
    return false;
  }
  socklen_t len = sizeof(addr);
  getsockname(listenFd_, reinterpret_cast<sockaddr*>(&addr), &len);
  boundPort_ = ntohs(addr.sin_port);
  return true;
}

bool Control::accept(double seconds, std::string* why) {
  pollfd p{listenFd_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(seconds * 1000)) != 1) {
    *why = "rank 1 did not connect within " + std::to_string(static_cast<int>(seconds)) + " s";
    return false;
  }
  fd_ = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd_ < 0) {
    *why = std::string("accept: ") + std::strerror(errno);
    return false;
  }
  noDelay(fd_);
  return true;
}

bool Control::connect(const std::string& host, int port, double seconds, std::string* why) {
  sockaddr_in addr;
  if (!toAddress(host, port, &addr)) {
    *why = "'" + host + "' is not an IPv4 address";
    return false;
  }
  Clock::time_point deadline = after(seconds);
  while (secondsLeft(deadline) > 0) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      noDelay(fd_);
      return true;
    }
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    // Rank 0 may not listen yet: it loads the plugin first.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *why = "cannot reach rank 0 at " + host + ":" + std::to_string(port) + " within " +
         std::to_string(static_cast<int>(seconds)) + " s";
  return false;
}

bool Control::send(const void* data, size_t size) {
  return ncclnet::testing::writeAll(fd_, data, size);
}

bool Control::recv(void* data, size_t size, double seconds) {
  Clock::time_point deadline = after(seconds);
  char* p = static_cast<char*>(data);
  while (size > 0) {
    double left = secondsLeft(deadline);
    pollfd pfd{fd_, POLLIN, 0};
    if (left <= 0 || poll(&pfd, 1, static_cast<int>(left * 1000) + 1) == 0) return false;
    ssize_t n = ::recv(fd_, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool splitHostPort(const std::string& text, std::string* host, int* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  char* end = nullptr;
  long p = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p < 0 || p > 65535 || colon + 1 == text.size()) return false;
  *host = text.substr(0, colon);
  *port = static_cast<int>(p);
  return true;
}

}  // namespace ncclnet::churn
