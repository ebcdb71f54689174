// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: listen and the collective mesh connect.
#include "mesh.hpp"

#include <poll.h>

#include <chrono>
#include <cstring>

#include "../connect.hpp"  // randomId
#include "ncclnet/oob_channel.hpp"

namespace ncclnet::socket::rma {

namespace {

using Clock = std::chrono::steady_clock;

int remainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for `events` on `fd` until the deadline; false when it passed.
bool waitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    int left = remainingMs(deadline);
    if (left == 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, left);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Moves all of `buffer` with `step` (oobSend/oobRecv) before the deadline.
template <class Step, class Buffer>
bool moveAll(const Fd& fd, Buffer* buffer, size_t size, short events, Clock::time_point deadline,
             Step step, std::string* why) {
  size_t offset = 0;
  for (;;) {
    switch (step(fd, buffer, size, &offset, why)) {
      case Progress::kDone: return true;
      case Progress::kFailed: return false;
      case Progress::kPending:
        if (!waitFor(fd.get(), events, deadline)) {
          *why = "timed out";
          return false;
        }
    }
  }
}

ncclResult_t dial(const Handle& peer, uint32_t rank, uint32_t nranks, Clock::time_point deadline,
                  Fd* out, std::string* why) {
  Fd fd;
  if (!oobConnectStart(peer.addr, &fd, why)) return ncclSystemError;
  for (;;) {
    Progress p = oobConnectDone(fd, why);
    if (p == Progress::kDone) break;
    if (p == Progress::kFailed) return ncclRemoteError;
    if (!waitFor(fd.get(), POLLOUT, deadline)) {
      *why = "connect timed out";
      return ncclRemoteError;
    }
  }
  uint8_t hello[kHelloBytes];
  encodeHello(Hello{peer.cookie, rank, nranks}, hello);
  if (!moveAll(fd, hello, sizeof(hello), POLLOUT, deadline, oobSend, why)) return ncclRemoteError;
  *out = std::move(fd);
  return ncclSuccess;
}

}  // namespace

ncclResult_t Listener::open(const Interface& itf, const Logger& log, std::unique_ptr<Listener>* out,
                            Handle* handle) {
  Fd fd;
  sockaddr_storage bound{};
  std::string why;
  if (!oobListen(itf.addr, &fd, &bound, &why)) {
    NCCLNET_WARN(log, "listen: cannot listen on %s (%s): %s", itf.name.c_str(), itf.address.c_str(),
                 why.c_str());
    return ncclSystemError;
  }
  handle->addr = bound;
  handle->addrLen = bound.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  handle->cookie = randomId();
  out->reset(new Listener(std::move(fd), handle->cookie));
  return ncclSuccess;
}

ncclResult_t buildMesh(const Listener& listener, const std::vector<Handle>& handles, int rank,
                       const Config& config, const Logger& log, std::vector<Fd>* peers) {
  const int nranks = static_cast<int>(handles.size());
  const auto deadline = Clock::now() + std::chrono::milliseconds(config.connectTimeoutMs);
  std::vector<Fd> mesh(nranks);
  std::string why;
  // Dial first: the peers' listeners exist before any handle was shared,
  // so the kernel completes these connects while their owners are dialing
  // too, and a 24-byte hello fits any socket buffer.
  for (int peer = 0; peer < rank; peer++) {
    ncclResult_t res = dial(handles[peer], rank, nranks, deadline, &mesh[peer], &why);
    if (res != ncclSuccess) {
      NCCLNET_WARN(log, "connect: rank %d cannot reach rank %d at %s: %s", rank, peer,
                   addressString(handles[peer].addr).c_str(), why.c_str());
      return res;
    }
  }
  int missing = nranks - 1 - rank;
  while (missing > 0) {
    Fd fd;
    Progress p = oobAccept(listener.fd(), &fd, &why);
    if (p == Progress::kFailed) {
      NCCLNET_WARN(log, "connect: rank %d: accept failed: %s", rank, why.c_str());
      return ncclSystemError;
    }
    if (p == Progress::kPending) {
      if (!waitFor(listener.fd().get(), POLLIN, deadline)) {
        NCCLNET_WARN(log,
                     "connect: rank %d: %d higher rank(s) did not connect within %d ms "
                     "(NCCLNET_SOCKET_CONNECT_TIMEOUT_MS)",
                     rank, missing, config.connectTimeoutMs);
        return ncclRemoteError;
      }
      continue;
    }
    // A stray (a port scanner, a stale job) gets the handshake timeout to
    // say hello and is dropped when it says the wrong thing.
    auto helloDeadline =
        std::min(deadline, Clock::now() + std::chrono::milliseconds(config.handshakeTimeoutMs));
    uint8_t bytes[kHelloBytes] = {};
    Hello hello;
    WireVerdict verdict = WireVerdict::kTruncated;
    if (moveAll(fd, bytes, sizeof(bytes), POLLIN, helloDeadline, oobRecv, &why)) {
      verdict = decodeHello(bytes, listener.cookie(), &hello);
    }
    if (verdict != WireVerdict::kOk || static_cast<int>(hello.nranks) != nranks ||
        static_cast<int>(hello.rank) <= rank || mesh[hello.rank].valid()) {
      NCCLNET_WARN(
          log, "connect: rank %d drops a connection from %s: %s", rank, oobPeer(fd).c_str(),
          verdict != WireVerdict::kOk
              ? kHelloStamp.explain(verdict, bytes, sizeof(bytes), "rank out of range").c_str()
              : "its rank or rank count does not fit this mesh");
      continue;
    }
    mesh[hello.rank] = std::move(fd);
    missing--;
  }
  for (Fd& fd : mesh) {
    if (!fd.valid()) continue;
    setNoDelay(fd.get());
    // A peer that vanishes without closing is declared dead after the
    // peer timeout, as the net table's data sockets are.
    setUserTimeout(fd.get(), static_cast<unsigned>(config.peerTimeoutMs));
    oobKeepAlive(fd);
  }
  *peers = std::move(mesh);
  return ncclSuccess;
}

}  // namespace ncclnet::socket::rma
