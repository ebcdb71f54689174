// SPDX-License-Identifier: Apache-2.0
// Control-channel framing and TCP helpers.
#include "harness/wire.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace conformance {

namespace {

constexpr size_t kHeader = 8;  // type, length
constexpr uint32_t kMaxBody = 64u << 20;

bool writeAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool resolve(const std::string& host, int port, sockaddr_storage* addr, socklen_t* len,
             std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = host.empty() ? AI_PASSIVE : 0;
  addrinfo* result = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &result);
  if (rc != 0 || result == nullptr) {
    *error = "cannot resolve '" + host + "': " + gai_strerror(rc);
    return false;
  }
  std::memcpy(addr, result->ai_addr, result->ai_addrlen);
  *len = result->ai_addrlen;
  freeaddrinfo(result);
  return true;
}

}  // namespace

double nowSeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

Writer& Writer::u32(uint32_t v) {
  data_.append(reinterpret_cast<const char*>(&v), sizeof(v));
  return *this;
}
Writer& Writer::u64(uint64_t v) {
  data_.append(reinterpret_cast<const char*>(&v), sizeof(v));
  return *this;
}
Writer& Writer::str(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  data_.append(s);
  return *this;
}

bool Reader::take(void* out, size_t n) {
  if (!ok_ || data_.size() - pos_ < n) {
    ok_ = false;
    return false;
  }
  std::memcpy(out, data_.data() + pos_, n);
  pos_ += n;
  return true;
}
uint32_t Reader::u32() {
  uint32_t v = 0;
  take(&v, sizeof(v));
  return v;
}
uint64_t Reader::u64() {
  uint64_t v = 0;
  take(&v, sizeof(v));
  return v;
}
std::string Reader::str() {
  uint32_t n = u32();
  if (!ok_ || data_.size() - pos_ < n) {
    ok_ = false;
    return "";
  }
  std::string s = data_.substr(pos_, n);
  pos_ += n;
  return s;
}

Channel::~Channel() {
  close();
}

void Channel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool Channel::send(Msg type, const std::string& body) {
  std::lock_guard<std::mutex> lock(sendMutex_);
  if (fd_ < 0) return false;
  uint32_t header[2] = {static_cast<uint32_t>(type), static_cast<uint32_t>(body.size())};
  return writeAll(fd_, reinterpret_cast<const char*>(header), kHeader) &&
         writeAll(fd_, body.data(), body.size());
}

bool Channel::next(Frame* out) {
  if (inbox_.size() < kHeader) return false;
  uint32_t header[2];
  std::memcpy(header, inbox_.data(), kHeader);
  if (inbox_.size() - kHeader < header[1]) return false;
  out->type = static_cast<Msg>(header[0]);
  out->body = inbox_.substr(kHeader, header[1]);
  inbox_.erase(0, kHeader + header[1]);
  return true;
}

bool Channel::readAvailable() {
  char chunk[65536];
  for (;;) {
    ssize_t r = ::recv(fd_, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (r > 0) {
      inbox_.append(chunk, static_cast<size_t>(r));
      if (inbox_.size() >= kHeader) {
        uint32_t length;
        std::memcpy(&length, inbox_.data() + 4, sizeof(length));
        if (length > kMaxBody) return false;  // not our protocol
      }
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

bool Channel::receive(Frame* out) {
  while (!next(out)) {
    char chunk[65536];
    ssize_t r = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    inbox_.append(chunk, static_cast<size_t>(r));
  }
  return true;
}

int listenTcp(const std::string& host, int port, int* boundPort, std::string* error) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (!resolve(host, port, &addr, &len, error)) return -1;
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 256) != 0) {
    *error = "cannot listen on " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  sockaddr_storage bound{};
  socklen_t boundLen = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &boundLen);
  *boundPort =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

int connectTcp(const std::string& host, int port, double timeoutSec, std::string* error) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  double deadline = nowSeconds() + timeoutSec;
  for (;;) {
    if (resolve(host, port, &addr, &len, error)) {
      int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return fd;
      }
      *error =
          "cannot connect to " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
      if (fd >= 0) ::close(fd);
    }
    if (nowSeconds() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

bool splitAddress(const std::string& address, std::string* host, int* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return false;
  char* end = nullptr;
  long p = std::strtol(address.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p <= 0 || p > 65535) return false;
  *host = address.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  *port = static_cast<int>(p);
  return true;
}

}  // namespace conformance
