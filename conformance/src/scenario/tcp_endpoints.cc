// SPDX-License-Identifier: Apache-2.0
// Listening TCP sockets of this process, from procfs.
#include "scenario/tcp_endpoints.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace conformance {

namespace {

constexpr const char* kListenState = "0A";  // TCP_LISTEN in /proc/net/tcp

std::set<unsigned long> socketInodes() {
  std::set<unsigned long> inodes;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return inodes;
  while (dirent* entry = readdir(dir)) {
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    char target[64];
    ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    unsigned long inode = 0;
    if (std::sscanf(target, "socket:[%lu]", &inode) == 1) inodes.insert(inode);
  }
  closedir(dir);
  return inodes;
}

// procfs prints each 32-bit word of the address in host byte order.
std::string decodeAddress(const std::string& hex, bool v6) {
  unsigned char raw[16];
  size_t words = v6 ? 4 : 1;
  if (hex.size() != words * 8) return "";
  for (size_t w = 0; w < words; w++) {
    uint32_t word = static_cast<uint32_t>(std::strtoul(hex.substr(w * 8, 8).c_str(), nullptr, 16));
    std::memcpy(raw + w * 4, &word, 4);
  }
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, raw, text, sizeof(text));
  return text;
}

void scan(const char* table, bool v6, const std::set<unsigned long>& mine,
          std::set<TcpEndpoint>* out) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the column titles
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
    unsigned long inode = 0;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (!fields || state != kListenState || !mine.count(inode)) continue;
    size_t colon = local.find(':');
    if (colon == std::string::npos) continue;
    TcpEndpoint e;
    e.address = decodeAddress(local.substr(0, colon), v6);
    e.port = static_cast<uint16_t>(std::strtoul(local.substr(colon + 1).c_str(), nullptr, 16));
    if (!e.address.empty()) out->insert(e);
  }
}

}  // namespace

std::set<TcpEndpoint> listeningEndpoints() {
  std::set<unsigned long> mine = socketInodes();
  std::set<TcpEndpoint> out;
  scan("/proc/self/net/tcp", false, mine, &out);
  scan("/proc/self/net/tcp6", true, mine, &out);
  return out;
}

std::vector<TcpEndpoint> newEndpoints(const std::set<TcpEndpoint>& before,
                                      const std::set<TcpEndpoint>& after) {
  std::vector<TcpEndpoint> out;
  for (const TcpEndpoint& e : after) {
    if (!before.count(e)) out.push_back(e);
  }
  return out;
}

std::string encodeEndpoints(const std::vector<TcpEndpoint>& endpoints) {
  std::string out;
  for (const TcpEndpoint& e : endpoints) {
    if (!out.empty()) out += ',';
    out += e.address + '|' + std::to_string(e.port);
  }
  return out;
}

std::vector<TcpEndpoint> decodeEndpoints(const std::string& text) {
  std::vector<TcpEndpoint> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t bar = item.rfind('|');
    if (bar == std::string::npos) continue;
    out.push_back({item.substr(0, bar),
                   static_cast<uint16_t>(std::strtoul(item.substr(bar + 1).c_str(), nullptr, 10))});
  }
  return out;
}

int connectTcp(const TcpEndpoint& e, double timeoutSec) {
  sockaddr_storage storage{};
  socklen_t len = 0;
  bool v6 = e.address.find(':') != std::string::npos;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(e.port);
    if (inet_pton(AF_INET6, e.address.c_str(), &a->sin6_addr) != 1) return -1;
    if (IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr)) a->sin6_addr = in6addr_loopback;
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(e.port);
    if (inet_pton(AF_INET, e.address.c_str(), &a->sin_addr) != 1) return -1;
    if (a->sin_addr.s_addr == htonl(INADDR_ANY)) a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*a);
  }
  int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&storage), len) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  int error = 0;
  socklen_t errorLen = sizeof(error);
  if (poll(&p, 1, static_cast<int>(timeoutSec * 1000)) != 1 ||
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &errorLen) != 0 || error != 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

uint16_t closedLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) close(fd);  // never listened on: a connect to it is refused
  return port;
}

std::vector<size_t> portOffsets(const char* bytes, size_t size, uint16_t port) {
  std::vector<size_t> out;
  unsigned char hi = static_cast<unsigned char>(port >> 8), lo = static_cast<unsigned char>(port);
  for (size_t i = 0; i + 1 < size; i++) {
    if (static_cast<unsigned char>(bytes[i]) == hi &&
        static_cast<unsigned char>(bytes[i + 1]) == lo)
      out.push_back(i);
  }
  return out;
}

std::vector<TcpEndpoint> announcedIn(const char* handle, size_t size,
                                     const std::vector<TcpEndpoint>& endpoints) {
  std::vector<TcpEndpoint> out;
  for (const TcpEndpoint& e : endpoints) {
    if (!portOffsets(handle, size, e.port).empty()) out.push_back(e);
  }
  return out.empty() ? endpoints : out;
}

}  // namespace conformance
