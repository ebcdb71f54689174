// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: a network namespace of the process's own.
#include "ncclnet/testing/private_network.hpp"

#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ncclnet::testing {

bool enterPrivateNetwork(std::string* why) {
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

void enterPrivateNetworkOrSkip(const char* who) {
  std::string why;
  if (enterPrivateNetwork(&why)) return;
  std::fprintf(stderr, "%s: skipped, needs a private network: %s\n", who, why.c_str());
  std::exit(kSkipExitCode);
}

}  // namespace ncclnet::testing
