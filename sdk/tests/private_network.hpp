// SPDX-License-Identifier: Apache-2.0
// Moves the calling process into a network namespace of its own with only
// loopback up, for programs that let made-up bytes choose addresses (the
// plugins' handshake fuzzers): whatever address they invent, nothing
// outside this process's namespace is ever reached.
#pragma once

#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace ncclnet::testing {

// True once the process is alone in a new namespace with `lo` up; false
// with the reason in *why (typically: not root, so no CAP_SYS_ADMIN). Call
// it before any thread starts: unshare moves only the calling thread.
inline bool enterPrivateNetwork(std::string* why) {
  if (::unshare(CLONE_NEWNET) != 0) {
    *why = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
    return false;
  }
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  if (up) {
    request.ifr_flags |= IFF_UP;
    up = ::ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  }
  if (!up) *why = std::string("bringing lo up: ") + std::strerror(errno);
  ::close(fd);
  return up;
}

}  // namespace ncclnet::testing
