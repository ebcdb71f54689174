// SPDX-License-Identifier: Apache-2.0
// sdk-ofi: idle foreign connections to the endpoint's port (see stray.hpp).
#include "stray.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace ncclnet::ofi {

std::unique_ptr<StraySweeper> StraySweeper::forAddress(const std::vector<uint8_t>& address,
                                                       int idleMs, const Logger& log) {
  if (idleMs <= 0 || address.size() < sizeof(sa_family_t)) return nullptr;
  sa_family_t family;
  std::memcpy(&family, address.data(), sizeof(family));
  uint16_t port = 0;
  if (family == AF_INET && address.size() >= sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, address.data(), sizeof(in));
    port = ntohs(in.sin_port);
  } else if (family == AF_INET6 && address.size() >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address.data(), sizeof(in6));
    port = ntohs(in6.sin6_port);
  }
  if (port == 0) return nullptr;
  return std::make_unique<StraySweeper>(address, port, idleMs, log);
}

bool StraySweeper::isOurs(const void* sa, size_t length) const {
  sa_family_t family;
  std::memcpy(&family, sa, sizeof(family));
  if (family == AF_INET && length >= sizeof(sockaddr_in)) {
    sockaddr_in mine, theirs;
    std::memcpy(&mine, local_.data(), sizeof(mine));
    std::memcpy(&theirs, sa, sizeof(theirs));
    return theirs.sin_port == mine.sin_port &&
           (mine.sin_addr.s_addr == INADDR_ANY || theirs.sin_addr.s_addr == mine.sin_addr.s_addr);
  }
  if (family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    sockaddr_in6 mine, theirs;
    std::memcpy(&mine, local_.data(), sizeof(mine));
    std::memcpy(&theirs, sa, sizeof(theirs));
    return theirs.sin6_port == mine.sin6_port &&
           (IN6_IS_ADDR_UNSPECIFIED(&mine.sin6_addr) ||
            std::memcmp(&theirs.sin6_addr, &mine.sin6_addr, sizeof(in6_addr)) == 0);
  }
  return false;
}

bool StraySweeper::isStray(int fd) const {
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) return false;
  if (!isOurs(&local, length)) return false;
  int listening = 0;
  length = sizeof(listening);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || listening) {
    return false;
  }
  tcp_info info{};
  length = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return false;
  // Kernels before 4.1 do not report bytes received: never guess.
  if (length < offsetof(tcp_info, tcpi_bytes_received) + sizeof(info.tcpi_bytes_received)) {
    return false;
  }
  // For a socket that never received data, last_data_recv counts from the
  // handshake: it is the connection's age.
  return info.tcpi_bytes_received == 0 &&
         info.tcpi_last_data_recv >= static_cast<uint32_t>(idleMs_);
}

int StraySweeper::sweep() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  int closed = 0;
  int own = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    int fd = std::atoi(entry->d_name);
    if (fd == own) continue;
    char link[64];
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    ssize_t n = readlink(path.c_str(), link, sizeof(link) - 1);
    if (n <= 0) continue;
    link[n] = '\0';
    if (std::strncmp(link, "socket:", 7) != 0) continue;
    if (!isStray(fd)) continue;
    if (shutdown(fd, SHUT_RDWR) == 0) closed++;
  }
  closedir(dir);
  if (closed == 0) return 0;
  int64_t nowMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  if (lastWarnMs_ < 0 || nowMs - lastWarnMs_ >= 60000) {
    lastWarnMs_ = nowMs;
    NCCLNET_WARN(log_,
                 "shut down %d TCP connections to port %u that sent nothing for %d ms "
                 "(NCCLNET_OFI_STRAY_TIMEOUT_MS; further ones within a minute are logged as INFO)",
                 closed, port_, idleMs_);
  } else {
    NCCLNET_INFO(log_, NCCL_NET, "shut down %d more idle TCP connections to port %u", closed,
                 port_);
  }
  return closed;
}

}  // namespace ncclnet::ofi
