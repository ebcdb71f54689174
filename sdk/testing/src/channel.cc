// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: the channel between the processes of a test.
#include "ncclnet/testing/channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "ncclnet/testing/deadline.hpp"

namespace ncclnet::testing {

Channel::~Channel() {
  close();
}

Channel::Channel(Channel&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

Channel& Channel::operator=(Channel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

bool Channel::makePair(Channel* a, Channel* b) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return false;
  *a = Channel(fds[0]);
  *b = Channel(fds[1]);
  return true;
}

void Channel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool writeAll(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  bool socket = true;
  while (size > 0) {
    // MSG_NOSIGNAL: a peer that died is a false return, not a SIGPIPE.
    ssize_t n = socket ? ::send(fd, p, size, MSG_NOSIGNAL) : ::write(fd, p, size);
    if (n < 0 && errno == ENOTSOCK && socket) {
      socket = false;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool Channel::send(const void* data, size_t size) {
  return writeAll(fd_, data, size);
}

bool Channel::receive(void* data, size_t size, double seconds) {
  auto* p = static_cast<char*>(data);
  Deadline deadline(seconds);
  while (size > 0) {
    if (deadline.expired()) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, deadline.remainingMs());
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return false;
    if (ready == 0) continue;  // the deadline check above ends it
    ssize_t n = ::read(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::string Channel::receiveRest(double seconds) {
  std::string text;
  Deadline deadline(seconds);
  while (!deadline.expired()) {
    pollfd pfd{fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, deadline.remainingMs());
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0) continue;
    char chunk[4096];
    ssize_t n = ::read(fd_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<size_t>(n));
  }
  return text;
}

bool Channel::signal() {
  char token = 1;
  return send(&token, 1);
}

bool Channel::waitSignal(double seconds) {
  char token = 0;
  return receive(&token, 1, seconds);
}

bool Channel::barrier(double seconds) {
  return signal() && waitSignal(seconds);
}

}  // namespace ncclnet::testing
