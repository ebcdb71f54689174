// SPDX-License-Identifier: Apache-2.0
// sdk-socket: listen, connect and accept as resumable state machines.
#include "connect.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

namespace ncclnet::socket {

namespace {

// Pause between attempts when the listener refuses or is unreachable (it may
// not be listening yet on a slow host): short, since the deadline bounds it.
constexpr auto kRetryPause = std::chrono::milliseconds(50);

bool retryable(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
         err == ECONNRESET || err == EAGAIN;
}

// Options every connection gets: TCP_NODELAY (headers must not wait for
// Nagle), keepalive and TCP_USER_TIMEOUT bounding how long a dead peer stays
// unnoticed (keepalive probes while idle, the user timeout while data is
// unacknowledged), and optional fixed buffer sizes.
void tuneSocket(int fd, int peerTimeoutMs, int bufferBytes) {
  setNoDelay(fd);
  setKeepAlive(fd,
               KeepAlive{std::max(1, peerTimeoutMs / 3000), std::max(1, peerTimeoutMs / 6000), 3});
  setUserTimeout(fd, static_cast<unsigned>(peerTimeoutMs));
  if (bufferBytes > 0) setBufferSizes(fd, bufferBytes);
}

int elapsedMs(Clock::time_point since) {
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count());
}

}  // namespace

uint64_t randomId() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof(value), 0) == sizeof(value) && value != 0) return value;
  std::random_device device;  // getrandom is missing only on very old kernels
  value = (static_cast<uint64_t>(device()) << 32) | device();
  return value != 0 ? value : 1;
}

// ---- listen / accept --------------------------------------------------------

ListenComm::ListenComm(Fd fd, const Config& config, const Logger& log, uint64_t cookie,
                       std::string where)
    : fd_(std::move(fd)), config_(config), log_(log), cookie_(cookie), where_(std::move(where)) {}

ncclResult_t ListenComm::open(const Interface& itf, const Config& config, const Logger& log,
                              std::unique_ptr<ListenComm>* out, ListenHandle* handle) {
  Fd fd = openStreamSocket(itf.addr.ss_family);
  if (!fd.valid()) {
    NCCLNET_WARN(log, "listen on %s: socket() failed: %s", itf.name.c_str(), std::strerror(errno));
    return ncclSystemError;
  }
  if (config.socketBufferBytes > 0) {  // accepted sockets inherit it (window scaling)
    tuneSocket(fd.get(), config.peerTimeoutMs, config.socketBufferBytes);
  }
  sockaddr_storage addr = itf.addr;
  if (addr.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&addr)->sin_port = 0;
  } else {
    reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = 0;
  }
  socklen_t len = itf.addrLen;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(fd.get(), SOMAXCONN) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    NCCLNET_WARN(log, "listen on %s (%s): %s", itf.name.c_str(), itf.address.c_str(),
                 std::strerror(errno));
    return ncclSystemError;
  }
  handle->addr = addr;
  handle->addrLen = len;
  handle->cookie = randomId();
  handle->nThreads = static_cast<uint16_t>(config.nThreads);
  handle->nSocksPerThread = static_cast<uint16_t>(config.nSocksPerThread);
  handle->minTaskBytes = static_cast<uint32_t>(config.minTaskBytes);
  std::string where = itf.name + " " + describeAddress(reinterpret_cast<sockaddr*>(&addr));
  out->reset(new ListenComm(std::move(fd), config, log, handle->cookie, where));
  NCCLNET_INFO(log, NCCL_NET, "listening on %s (%d threads x %d sockets per comm)", where.c_str(),
               config.nThreads, config.nSocksPerThread);
  return ncclSuccess;
}

ncclResult_t ListenComm::accept(std::unique_ptr<RecvComm>* out) {
  takeNewSockets();
  readHellos();
  dropStale();
  int expected = config_.streams() + 1;
  for (auto it = groups_.begin(); it != groups_.end(); ++it) {
    Group& g = it->second;
    if (g.count < expected) continue;
    Fd control = std::move(g.sockets[0]);
    std::vector<Fd> data;
    for (int i = 1; i < expected; i++) data.push_back(std::move(g.sockets[i]));
    Shape shape{config_.nThreads,     config_.minTaskBytes,     config_.patience(),
                config_.helperCensus, config_.threadsAutomatic, nullptr};
    auto core = std::make_unique<ConnectionSockets>(std::move(control), std::move(data), shape,
                                                    false, log_, "recvComm from " + g.peer);
    NCCLNET_INFO(log_, NCCL_NET,
                 "accepted a connection from %s on %s (%d data sockets, %d helper threads)",
                 g.peer.c_str(), where_.c_str(), expected - 1, core->helperThreads());
    groups_.erase(it);
    *out = std::make_unique<RecvComm>(std::move(core), config_.timelineOptions());
    return ncclSuccess;
  }
  return ncclSuccess;
}

void ListenComm::takeNewSockets() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof(peer);
    int fd = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&peer), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
        NCCLNET_WARN_LIMITED(log_, strays_, "accept on %s: %s", where_.c_str(),
                             std::strerror(errno));
      }
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    tuneSocket(fd, config_.peerTimeoutMs, 0);
    Arrival a;
    a.fd = Fd(fd);
    a.since = Clock::now();
    a.peer = describeAddress(reinterpret_cast<sockaddr*>(&peer));
    arrivals_.push_back(std::move(a));
  }
}

void ListenComm::refuse(Arrival& a, const char* why) {
  NCCLNET_WARN_LIMITED(log_, strays_, "refused a connection from %s on %s: %s", a.peer.c_str(),
                       where_.c_str(), why);
  a.fd.reset();
}

void ListenComm::readHellos() {
  for (Arrival& a : arrivals_) {
    while (a.fd.valid() && a.got < kHelloBytes) {
      size_t moved = 0;
      Io io = recvSome(a.fd.get(), a.hello + a.got, kHelloBytes - a.got, &moved);
      if (io == Io::Moved) {
        a.got += moved;
      } else if (io == Io::WouldBlock) {
        break;
      } else {
        NCCLNET_INFO(log_, NCCL_NET, "a connection from %s on %s closed before its hello",
                     a.peer.c_str(), where_.c_str());
        a.fd.reset();
      }
    }
    if (!a.fd.valid() || a.got < kHelloBytes) continue;
    Hello hello;
    WireVerdict verdict = decodeHello(a.hello, cookie_, &hello);
    if (verdict != WireVerdict::kOk) {
      refuse(a, kHelloStamp.explain(verdict, a.hello, kHelloBytes, "a field out of range").c_str());
      continue;
    }
    if (hello.streams != config_.streams() || hello.nThreads != config_.nThreads) {
      refuse(a, "its socket or thread count differs from this listen's handle");
      continue;
    }
    Group& g = groups_[hello.connectionId];
    if (g.sockets.empty()) {
      g.sockets.resize(hello.streams + 1);
      g.since = a.since;
      g.peer = a.peer;
    }
    if (g.sockets[hello.index].valid()) {
      refuse(a, "a second socket with the same index for one connect");
      continue;
    }
    g.sockets[hello.index] = std::move(a.fd);
    g.count++;
  }
  arrivals_.erase(std::remove_if(arrivals_.begin(), arrivals_.end(),
                                 [](const Arrival& a) { return !a.fd.valid(); }),
                  arrivals_.end());
}

void ListenComm::dropStale() {
  int limit = config_.handshakeTimeoutMs;
  for (Arrival& a : arrivals_) {
    if (elapsedMs(a.since) > limit) {
      NCCLNET_WARN_LIMITED(log_, strays_,
                           "dropped a connection from %s on %s: no complete hello within %d ms",
                           a.peer.c_str(), where_.c_str(), limit);
      a.fd.reset();
    }
  }
  arrivals_.erase(std::remove_if(arrivals_.begin(), arrivals_.end(),
                                 [](const Arrival& a) { return !a.fd.valid(); }),
                  arrivals_.end());
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (elapsedMs(it->second.since) > limit) {
      NCCLNET_WARN_LIMITED(log_, strays_,
                           "dropped a partial connection from %s on %s: %d of %zu sockets arrived "
                           "within %d ms",
                           it->second.peer.c_str(), where_.c_str(), it->second.count,
                           it->second.sockets.size(), limit);
      it = groups_.erase(it);
    } else {
      ++it;
    }
  }
}

// ---- connect ------------------------------------------------------------------

Connector::Connector(const ListenHandle& handle, const Config& config, const Logger& log)
    : handle_(handle),
      config_(config),
      log_(log),
      where_(describeAddress(reinterpret_cast<const sockaddr*>(&handle.addr))),
      deadline_(Clock::now() + std::chrono::milliseconds(config.connectTimeoutMs)) {
  int drivers = handle.nThreads > 0 ? handle.nThreads : 1;
  int streams = drivers * handle.nSocksPerThread;
  uint64_t connectionId = randomId();
  links_.resize(streams + 1);
  for (int i = 0; i <= streams; i++) {
    Hello hello;
    hello.cookie = handle.cookie;
    hello.connectionId = connectionId;
    hello.index = static_cast<uint16_t>(i);
    hello.streams = static_cast<uint16_t>(streams);
    hello.nThreads = handle.nThreads;
    encodeHello(hello, links_[i].hello);
  }
}

void Connector::retryLater(Link& link, int err) {
  link.fd.reset();
  link.stage = Stage::Start;
  link.sent = 0;
  link.retryAt = Clock::now() + kRetryPause;
  lastError_ = err;
}

ncclResult_t Connector::advance(Link& link) {
  const sockaddr* addr = reinterpret_cast<const sockaddr*>(&handle_.addr);
  if (link.stage == Stage::Start) {
    if (Clock::now() < link.retryAt) return ncclSuccess;
    link.fd = openStreamSocket(addr->sa_family);
    if (!link.fd.valid()) {
      NCCLNET_WARN(log_, "connect to %s: socket() failed: %s", where_.c_str(),
                   std::strerror(errno));
      return ncclSystemError;
    }
    bool isData = &link != &links_[0];
    tuneSocket(link.fd.get(), config_.peerTimeoutMs, isData ? config_.socketBufferBytes : 0);
    if (::connect(link.fd.get(), addr, handle_.addrLen) == 0) {
      link.stage = Stage::Hello;
    } else if (errno == EINPROGRESS) {
      link.stage = Stage::Connecting;
    } else if (retryable(errno)) {
      retryLater(link, errno);
      return ncclSuccess;
    } else {
      NCCLNET_WARN(log_, "connect to %s: %s", where_.c_str(), std::strerror(errno));
      return ncclSystemError;
    }
  }
  if (link.stage == Stage::Connecting) {
    pollfd p{link.fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, 0) <= 0) return ncclSuccess;  // still in progress
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(link.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err == 0) {
      link.stage = Stage::Hello;
    } else if (retryable(err)) {
      retryLater(link, err);
      return ncclSuccess;
    } else {
      NCCLNET_WARN(log_, "connect to %s: %s", where_.c_str(), std::strerror(err));
      return ncclSystemError;
    }
  }
  if (link.stage == Stage::Hello) {
    while (link.sent < kHelloBytes) {
      size_t moved = 0;
      Io io = sendSome(link.fd.get(), link.hello + link.sent, kHelloBytes - link.sent, &moved);
      if (io == Io::WouldBlock) return ncclSuccess;
      if (io != Io::Moved) {
        retryLater(link, errno);
        return ncclSuccess;
      }
      link.sent += moved;
    }
    link.stage = Stage::Done;
  }
  return ncclSuccess;
}

ncclResult_t Connector::step(std::unique_ptr<SendComm>* out) {
  bool done = true;
  for (Link& link : links_) {
    ncclResult_t res = advance(link);
    if (res != ncclSuccess) return res;
    done = done && link.stage == Stage::Done;
  }
  if (!done) {
    if (Clock::now() < deadline_) return ncclSuccess;
    NCCLNET_WARN(log_,
                 "connect to %s: not connected after %d ms (last error: %s); is the peer "
                 "alive and the address reachable?",
                 where_.c_str(), config_.connectTimeoutMs,
                 lastError_ ? std::strerror(lastError_) : "none, still in progress");
    return ncclRemoteError;
  }
  Fd control = std::move(links_[0].fd);
  std::vector<Fd> data;
  for (size_t i = 1; i < links_.size(); i++) data.push_back(std::move(links_[i].fd));
  // The listener's count is halved only where it is the automatic one here
  // too: a count its operator set is kept.
  Shape shape{handle_.nThreads,
              handle_.minTaskBytes,
              config_.patience(),
              config_.helperCensus,
              config_.threadsAutomatic && handle_.nThreads == config_.nThreads,
              config_.closingSockets};
  auto core = std::make_unique<ConnectionSockets>(std::move(control), std::move(data), shape, true,
                                                  log_, "sendComm to " + where_);
  int threads = core->helperThreads();
  *out =
      std::make_unique<SendComm>(std::move(core), config_.inlineBytes, config_.timelineOptions());
  NCCLNET_INFO(log_, NCCL_NET, "connected to %s (%zu data sockets, %d helper threads)",
               where_.c_str(), links_.size() - 1, threads);
  return ncclSuccess;
}

}  // namespace ncclnet::socket
