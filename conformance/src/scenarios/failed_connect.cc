// SPDX-License-Identifier: Apache-2.0
// Faults, connects that cannot succeed: to the handle of a process that
// died, of a listen that was closed, and of a live listen with its port
// pointed at a closed one. Each may fail or stay pending, but only that
// comm: a connect to a real peer, made while they are still polled, must
// work and carry data (rule 56).
// Rank 0 connects, rank 1 is the real peer, rank 2 dies after listening.
#include <sched.h>

#include <cstring>

#include "harness/wire.hpp"
#include "scenario/tcp_endpoints.hpp"
#include "scenarios/faults.hpp"

namespace conformance {

namespace {

struct BadConnect {
  std::string what;
  Handle handle;
  bool pending = true;
};

// One connect call for each bad handle still pending; an error or a comm
// ends it (a comm is closed at once: nothing may be sent on it).
void pollBad(Ctx& c, std::vector<BadConnect>& bad) {
  for (BadConnect& b : bad) {
    if (!b.pending) continue;
    void* sendComm = nullptr;
    ncclNetDeviceHandle_v12_t* devComm = nullptr;
    c.activity("connect to " + b.what);
    double start = nowSeconds();
    ncclResult_t res = c.net().connect(c.comm(), 0, b.handle.bytes, &sendComm, &devComm);
    double took = nowSeconds() - start;
    if (took > c.callLimit())
      c.deferShould(Rule::CallsReturnPromptly,
                    format("connect to %s blocked for %.2f s", b.what.c_str(), took));
    if (res != ncclSuccess) {
      c.note("connect to " + b.what + " failed with " + resultText(res));
      b.pending = false;
    } else if (sendComm != nullptr) {
      c.note("connect to " + b.what + " returned a comm");
      c.net().closeSend(sendComm);
      b.pending = false;
    }
  }
}

// Rank 2 listens and dies; rank 0 makes the bad connects, then the real one.
void connectingSide(Ctx& c) {
  Handle live;
  Handle dead;
  if (c.rank() == 2) c.listen(0, &dead);
  // As in NCCL's proxy, which has listened before it connects: the plugin's
  // first-use setup is not timed as part of a connect.
  if (c.rank() == 0) c.closeListen(c.listen(0, &dead));
  std::vector<std::string> all =
      c.allgather("handles", c.rank() == 2 ? std::string(dead.bytes, sizeof(dead.bytes)) : "");
  if (c.rank() == 2) dieOnPurpose(c);
  c.barrier("rank 2 is gone");  // completes once rank 2 has exited
  std::memcpy(live.bytes, all[1].data(), sizeof(live.bytes));
  std::vector<BadConnect> bad;
  bad.push_back({"the listen of a process that was killed", {}});
  std::memcpy(bad.back().handle.bytes, all[2].data(), sizeof(Handle::bytes));
  bad.push_back({"a listen that was closed", {}});
  std::memcpy(bad.back().handle.bytes, all[1].data() + sizeof(Handle::bytes),
              sizeof(Handle::bytes));
  for (const TcpEndpoint& e : decodeEndpoints(all[1].substr(2 * sizeof(Handle::bytes)))) {
    std::vector<size_t> at = portOffsets(live.bytes, sizeof(live.bytes), e.port);
    if (at.empty()) continue;
    uint16_t port = closedLoopbackPort();
    bad.push_back(
        {format("a live listen's handle with port %u pointed at closed port %u", e.port, port),
         live});
    for (size_t offset : at) {
      bad.back().handle.bytes[offset] = static_cast<char>(port >> 8);
      bad.back().handle.bytes[offset + 1] = static_cast<char>(port & 0xFF);
    }
    break;
  }
  if (bad.size() == 2) c.note("no port of rank 1's listen found in its handle: no mangled handle");
  ShouldStep step;
  // The bad connects first, as a node whose peer died during setup makes them.
  double end = nowSeconds() + 2.0 * c.profile().timeScale;
  while (nowSeconds() < end) {
    pollBad(c, bad);
    sched_yield();
  }
  for (const BadConnect& b : bad) {
    if (b.pending) c.note("connect to " + b.what + " is still pending after 2 s");
  }
  // The real peer, with the bad ones still polled in between.
  ncclNetDeviceHandle_v12_t* devComm = nullptr;
  void* comm = nullptr;
  double limit = nowSeconds() + c.waitLimit();
  for (int attempt = 1; comm == nullptr; attempt++) {
    comm = c.connectOnce(0, &live, &devComm, attempt, Rule::FailedConnectIsolated);
    pollBad(c, bad);
    CONF_EXPECT(comm != nullptr || nowSeconds() < limit, Rule::FailedConnectIsolated,
                "a connect to a live peer is still not done after %.1f s, after connects to "
                "dead or closed endpoints",
                c.waitLimit());
    sched_yield();
  }
  c.transfer(comm, 0, 1, 1 << 20, 5601);
}

// Rank 1: a live listen and a closed one; accepts rank 0's real connect.
void listeningSide(Ctx& c) {
  Handle live, closed;
  std::set<TcpEndpoint> before = listeningEndpoints();
  void* listenComm = c.listen(0, &live);
  std::string endpoints = encodeEndpoints(newEndpoints(before, listeningEndpoints()));
  c.closeListen(c.listen(0, &closed));
  c.allgather("handles", std::string(live.bytes, sizeof(live.bytes)) +
                             std::string(closed.bytes, sizeof(closed.bytes)) + endpoints);
  c.barrier("rank 2 is gone");
  void* comm = c.accept(listenComm, Rule::FailedConnectIsolated);
  c.transfer(comm, 0, 1, 1 << 20, 5601);
}

void failedConnects(Ctx& c) {
  if (c.rank() == 1)
    listeningSide(c);
  else
    connectingSide(c);
}

}  // namespace

void addFailedConnectScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "Faults",
                 .name = "FailedConnectIsolated",
                 .rule = Rule::FailedConnectIsolated,
                 .ranks = 3,
                 .run = failedConnects,
                 .summary =
                     "connects to a killed process's listen, a closed listen and a closed port: "
                     "only those comms fail; a connect to a live peer still works"});
}

}  // namespace conformance
