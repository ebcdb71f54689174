// SPDX-License-Identifier: Apache-2.0
// Teardown: close in either order, close with requests in flight, and
// create/destroy cycles that must not leak descriptors.
#include <dirent.h>

#include "harness/wire.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

void ordering(Ctx& c) {
  void* a = c.link(0, 1, "first connection");
  void* b = c.link(0, 1, "second connection");
  c.transfer(a, 0, 1, 4096, 1);
  c.transfer(b, 0, 1, 4096, 2);
  if (c.rank() == 0) c.closeSend(a);
  c.barrier("sender closed first");
  if (c.rank() == 1) c.closeRecv(a);
  if (c.rank() == 1) c.closeRecv(b);
  c.barrier("receiver closed first");
  if (c.rank() == 0) c.closeSend(b);
}

void inFlight(Ctx& c) {
  void* a = c.link(0, 1, "rank 0 to rank 1");
  void* b = c.link(1, 0, "rank 1 to rank 0");
  // Rank 0 sends on a, which rank 1 never receives, and receives on b, which
  // rank 1 never sends: both stay in flight until the comms close. With no
  // receive posted, a plugin may refuse the sends with a NULL request (rule
  // 29: a receiver-driven plugin waits for clear-to-send); those are not
  // retried, since nothing would ever accept them.
  constexpr size_t kSize = 1 << 20;
  std::vector<Buffer> bufs;
  for (int i = 0; i < 8; i++) bufs.emplace_back(kSize);
  std::vector<std::pair<void*, void*>> mrs;  // comm, mhandle
  if (c.rank() == 0) {
    bool sendsRefused = false;
    for (int i = 0; i < 4; i++) {
      void* mh = c.reg(a, bufs[i].data(), kSize);
      mrs.emplace_back(a, mh);
      if (!sendsRefused && c.isendOnce(a, bufs[i].data(), kSize, 0, mh,
                                       format("never received #%d", i)) == nullptr) {
        sendsRefused = true;
        c.note(
            format("isend #%d with no receive posted returned NULL: the sends are not in "
                   "flight, only the receives",
                   i));
      }
      mh = c.reg(b, bufs[4 + i].data(), kSize);
      mrs.emplace_back(b, mh);
      void* data = bufs[4 + i].data();
      size_t cap = kSize;
      int tag = 0;
      c.irecv(b, 1, &data, &cap, &tag, &mh, format("never sent #%d", i));
    }
  }
  c.barrier("requests in flight");
  double start = nowSeconds();
  for (auto& [comm, mh] : mrs) {
    ncclResult_t res = c.tryDereg(comm, mh);
    if (res != ncclSuccess) c.note("deregMr with requests in flight returned " + resultText(res));
  }
  if (c.rank() == 0) {
    c.closeSend(a);
    c.closeRecv(b);
  } else {
    c.closeRecv(a);
    c.closeSend(b);
  }
  double took = nowSeconds() - start;
  CONF_EXPECT(took <= c.callLimit() * 5, Rule::CloseWithRequestsInFlight,
              "closing comms with requests in flight took %.1f s", took);
}

size_t openDescriptors() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) n++;
    closedir(d);
  }
  return n;
}

void cycles(Ctx& c) {
  c.comm();
  // A first cycle creates what the plugin keeps for its lifetime.
  void* warm = c.link(0, 1, "warm-up connection");
  c.transfer(warm, 0, 1, 4096, 0);
  if (c.rank() == 0)
    c.closeSend(warm);
  else
    c.closeRecv(warm);
  c.barrier("warm-up closed");
  size_t before = openDescriptors();
  constexpr int kCycles = 20;
  for (int i = 0; i < kCycles; i++) {
    void* comm = c.link(0, 1, format("cycle %d", i));
    c.transfer(comm, 0, 1, 4096, 100 + i);
    if (c.rank() == 0)
      c.closeSend(comm);
    else
      c.closeRecv(comm);
  }
  c.barrier("every cycle closed");
  size_t after = openDescriptors();
  CONF_EXPECT(after <= before + 2, Rule::NoLeaks,
              "%d connect/transfer/close cycles left %zu more open descriptors (%zu -> %zu)",
              kCycles, after - before, before, after);
}

}  // namespace

void addCloseScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "Close",
                 .name = "EitherSideFirst",
                 .rule = Rule::DeregMrReleases,
                 .ranks = 2,
                 .run = ordering,
                 .summary = "closeSend before closeRecv and the reverse, after deregistration"});
  out.push_back(
      {.area = "Close",
       .name = "WithRequestsInFlight",
       .rule = Rule::CloseWithRequestsInFlight,
       .ranks = 2,
       .run = inFlight,
       .summary =
           "deregMr and close with sends and receives that never complete: no hang, no crash"});
  out.push_back({.area = "Close",
                 .name = "CyclesDoNotLeak",
                 .rule = Rule::NoLeaks,
                 .ranks = 2,
                 .run = cycles,
                 .summary = "20 connect/transfer/close cycles return every file descriptor"});
}

}  // namespace conformance
