// SPDX-License-Identifier: Apache-2.0
// Faults, stray connections: TCP connections to the plugin's listen
// endpoint that are not a peer (closed at once, random bytes, a replayed
// hello, an idle one, a handshake that stalls halfway) arrive before and
// between two real connects on one listen. Both real peers must be
// accepted and carry data: rule 55 (MUST) for strays that close at once or
// send random bytes, which NCCL's own sockets drop (src/misc/socket.cc
// socketFinalizeAccept, socketResetAccept); rule 57 (SHOULD) for the silent,
// stalled and replayed ones, which hold up NCCL's own Socket transport too.
// The endpoint is found without knowing the handle format: the listening
// sockets the listen added to the process (those whose port the handle
// carries, when it carries any).
// Rank 0 listens, rank 1 connects for real, rank 2 writes the strays.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "harness/wire.hpp"
#include "scenario/tcp_endpoints.hpp"
#include "scenarios/faults.hpp"

namespace conformance {

namespace {

enum class Stray { ClosedAtOnce, RandomBytes, ReplayedHello, Idle, StalledHandshake };

bool needsHello(Stray kind) {
  return kind == Stray::ReplayedHello || kind == Stray::StalledHandshake;
}

// A socket of ours that listens on `address` (port chosen by the kernel).
int listenOn(const std::string& address, uint16_t* port) {
  bool v6 = address.find(':') != std::string::npos;
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_storage storage{};
  socklen_t len = v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  storage.ss_family = v6 ? AF_INET6 : AF_INET;  // port 0, wildcard address
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&storage), len) != 0 ||
      ::listen(fd, 16) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  *port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                   : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  return fd;
}

// The first bytes a connect of this plugin sends, for a hello to replay:
// this rank listens itself, points a copy of its handle at a socket of ours
// (the listen's port rewritten wherever the handle holds it), calls connect
// with it and records what the first connection brings. Empty when the
// handle holds no port of the listen's sockets.
std::string captureHello(Ctx& c) {
  std::set<TcpEndpoint> before = listeningEndpoints();
  Handle h;
  c.listen(0, &h);
  for (const TcpEndpoint& e : newEndpoints(before, listeningEndpoints())) {
    std::vector<size_t> at = portOffsets(h.bytes, sizeof(h.bytes), e.port);
    if (at.empty()) continue;
    uint16_t port = 0;
    int capture = listenOn(e.address, &port);
    if (capture < 0) continue;
    Handle diverted = h;
    for (size_t offset : at) {
      diverted.bytes[offset] = static_cast<char>(port >> 8);
      diverted.bytes[offset + 1] = static_cast<char>(port & 0xFF);
    }
    std::string hello;
    int conn = -1;
    bool connecting = true;
    double end = nowSeconds() + 2.0 * c.profile().timeScale;
    double quietSince = 0;
    while (nowSeconds() < end && hello.size() < 4096) {
      if (connecting) {
        void* sendComm = nullptr;
        ncclNetDeviceHandle_v12_t* devComm = nullptr;
        c.activity("connect with a handle pointed at the suite's own socket");
        connecting =
            c.net().connect(c.comm(), 0, diverted.bytes, &sendComm, &devComm) == ncclSuccess &&
            sendComm == nullptr;
        if (sendComm != nullptr) c.net().closeSend(sendComm);
      }
      if (conn < 0) conn = accept4(capture, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (conn >= 0) {
        char chunk[4096];
        ssize_t n = recv(conn, chunk, sizeof(chunk) - hello.size(), MSG_DONTWAIT);
        if (n > 0) {
          hello.append(chunk, static_cast<size_t>(n));
          quietSince = nowSeconds();
        } else if (n == 0) {
          break;
        }
      }
      // A hello is what arrives before the connector waits for an answer.
      if (!hello.empty() && nowSeconds() - quietSince > 0.2) break;
      usleep(1000);
    }
    if (conn >= 0) close(conn);
    close(capture);
    if (!hello.empty()) return hello;
  }
  return "";
}

// Rank 2's stray connections; all closed when the scenario ends.
class StrayWriter {
 public:
  explicit StrayWriter(Ctx& c) : c_(c) {}
  ~StrayWriter() {
    for (int fd : open_) close(fd);
  }
  StrayWriter(const StrayWriter&) = delete;
  StrayWriter& operator=(const StrayWriter&) = delete;

  void send(Stray kind, const std::vector<TcpEndpoint>& to, const std::string& hello) {
    for (const TcpEndpoint& e : to) {
      c_.activity(format("a stray connection to %s port %u", e.address.c_str(), e.port));
      int fd = connectTcp(e, c_.callLimit());
      if (fd < 0) {
        c_.note(format("a stray could not connect to %s port %u", e.address.c_str(), e.port));
        continue;
      }
      switch (kind) {
        case Stray::ClosedAtOnce: {
          close(fd);  // an orderly close (FIN) ...
          fd = connectTcp(e, c_.callLimit());
          linger reset{1, 0};  // ... and a reset (RST)
          if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
          if (fd >= 0) close(fd);
          continue;
        }
        case Stray::RandomBytes: {
          std::string noise(1024, '\0');
          for (char& b : noise) b = static_cast<char>(random_());
          write(fd, noise);
          break;
        }
        case Stray::ReplayedHello: write(fd, hello); break;
        case Stray::StalledHandshake:
          write(fd, hello.substr(0, std::max<size_t>(1, hello.size() / 2)));
          break;
        case Stray::Idle: break;
      }
      open_.push_back(fd);  // stays open, silent, until the scenario ends
    }
  }

 private:
  static void write(int fd, const std::string& bytes) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)n;  // a plugin that already dropped the stray may have reset it
  }
  Ctx& c_;
  std::vector<int> open_;
  std::mt19937 random_{5501};
};

// Rank 1 connects with a fresh copy of the listen's handle, rank 0
// accepts; then a message from 1 to 0 proves it is the real peer.
// A peer kept out shows as an accept that never completes on rank 0 and a
// send that never completes on rank 1: both break the scenario's `rule`.
void realConnection(Ctx& c, const Handle& listened, void* listenComm, int round, Rule rule) {
  constexpr size_t kSize = 65536;
  uint64_t seed = 5500 + static_cast<uint64_t>(round);
  if (c.rank() == 1) {
    Handle h = listened;
    void* comm = c.connect(0, &h, rule);
    Buffer buf(kSize);
    buf.fill(seed);
    void* mh = c.reg(comm, buf.data(), kSize);
    // A plugin whose sends wait for the receiver's clear-to-send answers
    // NULL while the peer is kept out: that, too, is the scenario's rule.
    double limit = nowSeconds() + c.waitLimit();
    void* r = nullptr;
    while ((r = c.isendOnce(comm, buf.data(), kSize, 0, mh, "64 KiB to the accepting rank")) ==
           nullptr) {
      CONF_EXPECT(nowSeconds() < limit, rule,
                  "isend to the accepting rank kept returning a NULL request for %.1f s",
                  c.waitLimit());
      sched_yield();
    }
    int sent = -1;
    CONF_OK(c.wait(r, &sent, "isend to the accepting rank", rule), Rule::CompletionReportsSizes,
            "test(isend to the accepting rank)");
    c.dereg(comm, mh);
  } else if (c.rank() == 0) {
    // A comm accepted from a stray (a replayed hello taken for the peer)
    // never gets the peer's message: the receive waits under `rule` too.
    void* comm = c.accept(listenComm, rule);
    Buffer buf(kSize);
    buf.clear(0);
    void* mh = c.reg(comm, buf.data(), kSize);
    void* data = buf.data();
    size_t cap = kSize;
    int tag = 0;
    void* r = c.irecv(comm, 1, &data, &cap, &tag, &mh, "64 KiB from the connecting rank");
    int size = -1;
    CONF_OK(c.wait(r, &size, "irecv from the connecting rank", rule), Rule::CompletionReportsSizes,
            "test(irecv from the connecting rank)");
    CONF_EXPECT(size == static_cast<int>(kSize) && buf.verify(seed) == Buffer::kMismatch,
                Rule::CompletionReportsSizes,
                "the accepted comm delivered %d B or wrong bytes instead of the peer's 64 KiB",
                size);
    c.dereg(comm, mh);
  }
}

void strays(Ctx& c, Stray kind, Rule rule) {
  std::string hello;
  if (c.rank() == 2 && needsHello(kind)) hello = captureHello(c);
  Handle h;
  void* listenComm = nullptr;
  std::string mine;
  if (c.rank() == 0) {
    std::set<TcpEndpoint> before = listeningEndpoints();
    listenComm = c.listen(0, &h);
    mine = std::string(h.bytes, sizeof(h.bytes)) +
           encodeEndpoints(
               announcedIn(h.bytes, sizeof(h.bytes), newEndpoints(before, listeningEndpoints())));
  }
  std::vector<std::string> all = c.allgather("the listen's handle and TCP endpoints",
                                             c.rank() == 2 ? (hello.empty() ? "" : "hello") : mine);
  std::memcpy(h.bytes, all[0].data(), sizeof(h.bytes));
  std::vector<TcpEndpoint> endpoints = decodeEndpoints(all[0].substr(sizeof(h.bytes)));
  if (endpoints.empty())
    skip(
        "the plugin's listen added no listening TCP socket (a fabric without TCP, such as an "
        "RDMA device): there is no endpoint to aim strays at");
  if (needsHello(kind) && all[2].empty())
    skip(
        "no hello to replay: the handle of a listen holds the port of none of the sockets it "
        "added, so no connect could be pointed at the suite");
  if (c.rank() == 0) c.note("strays go to " + all[0].substr(sizeof(h.bytes)));
  if (c.rank() == 2 && !hello.empty())
    c.note(format("the hello to replay: the first %zu B of a real connect", hello.size()));
  StrayWriter writer(c);
  for (int round = 1; round <= 2; round++) {
    if (c.rank() == 2) writer.send(kind, endpoints, hello);
    c.barrier(round == 1 ? "strays before the first connect" : "strays between the connects");
    realConnection(c, h, listenComm, round, rule);
  }
  c.barrier("both real peers were accepted");  // the strays stay open until here
}

}  // namespace

void addStrayScenarios(std::vector<Scenario>& out) {
  out.push_back(
      {.area = "Faults",
       .name = "StrayClosedAtOnce",
       .rule = Rule::StrayConnectionsIgnored,
       .ranks = 3,
       .run = [](Ctx& c) { strays(c, Stray::ClosedAtOnce, Rule::StrayConnectionsIgnored); },
       .summary = "connections to the listen endpoint closed (FIN, RST) at once, before and "
                  "between two real connects: both real peers are accepted"});
  out.push_back(
      {.area = "Faults",
       .name = "StrayRandomBytes",
       .rule = Rule::StrayConnectionsIgnored,
       .ranks = 3,
       .run = [](Ctx& c) { strays(c, Stray::RandomBytes, Rule::StrayConnectionsIgnored); },
       .summary = "connections to the listen endpoint that send 1 KiB of random bytes: both real "
                  "peers are accepted"});
  out.push_back(
      {.area = "Faults",
       .name = "StrayReplayedHello",
       .rule = Rule::SilentStraysTolerated,
       .ranks = 3,
       .run = [](Ctx& c) { strays(c, Stray::ReplayedHello, Rule::SilentStraysTolerated); },
       .summary = "connections that replay the first bytes of a real connect to another listen: "
                  "both real peers are accepted"});
  out.push_back(
      {.area = "Faults",
       .name = "StrayIdle",
       .rule = Rule::SilentStraysTolerated,
       .ranks = 3,
       .run = [](Ctx& c) { strays(c, Stray::Idle, Rule::SilentStraysTolerated); },
       .summary = "connections to the listen endpoint that send nothing and stay open: both real "
                  "peers are accepted"});
  out.push_back(
      {.area = "Faults",
       .name = "StalledHandshake",
       .rule = Rule::SilentStraysTolerated,
       .ranks = 3,
       .run = [](Ctx& c) { strays(c, Stray::StalledHandshake, Rule::SilentStraysTolerated); },
       .summary = "connections that send half of a real hello, then nothing: both real peers are "
                  "accepted"});
}

}  // namespace conformance
