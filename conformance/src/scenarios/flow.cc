// SPDX-License-Identifier: Apache-2.0
// Flow control: the in-flight limits NCCL relies on, NULL-request
// back-pressure beyond them, and the optional-completion hint in *request.
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/wire.hpp"
#include "scenario/registry.hpp"

namespace conformance {

namespace {

size_t smallSize(size_t k) {
  return 64 + k % 7;
}

// Rule 28 as NCCL relies on it: with the matching receives posted, a
// sendComm takes 32 x maxRecvs isends before any of them is tested, and a
// recvComm 32 grouped irecvs. A NULL request is "try again" (rule 29), so a
// plugin that waits for the receiver's clear-to-send may return NULL until
// it arrives; only a NULL that persists, with nothing tested or completed,
// breaks the limit.
void inFlightLimits(Ctx& c) {
  int m = c.maxRecvs();
  size_t total = static_cast<size_t>(NCCL_NET_MAX_REQUESTS) * static_cast<size_t>(m);
  void* comm = c.link(0, 1, "connection");
  constexpr size_t kCapacity = 128;
  Buffer pool(total * kCapacity);  // one slice per message
  void* mh = c.reg(comm, pool.data(), pool.size());
  std::vector<void*> reqs;
  // Retries a NULL request (no test() meanwhile) until the wait limit.
  auto post = [&](const std::string& what, const std::function<void*()>& call, size_t inFlight,
                  size_t limit) {
    double end = nowSeconds() + c.waitLimit();
    for (;;) {
      void* r = call();
      if (r != nullptr) return r;
      CONF_EXPECT(nowSeconds() < end, Rule::InFlightLimits,
                  "%s kept returning a NULL request for %.1f s with %zu in flight and every "
                  "matching receive posted: a %s must take %zu",
                  what.c_str(), c.waitLimit(), inFlight, c.rank() == 0 ? "sendComm" : "recvComm",
                  limit);
      sched_yield();
    }
  };
  if (c.rank() == 0) {
    c.barrier("every receive posted");
    for (size_t k = 0; k < total; k++) {
      char* p = pool.data() + k * kCapacity;
      pool.fill(k, k * kCapacity, smallSize(k));
      std::string what = format("isend #%zu", k);
      c.activity(format("isend #%zu with %zu in flight", k, k));
      reqs.push_back(post(
          what,
          [&] {
            void* r = nullptr;
            CONF_OK(c.net().isend(comm, p, smallSize(k), static_cast<int>(k % m), mh, nullptr, &r),
                    Rule::InFlightLimits, what);
            return r;
          },
          k, total));
    }
    for (size_t k = 0; k < total; k++) {
      int size = 0;
      CONF_OK(c.wait(reqs[k], &size, format("isend #%zu", k)), Rule::CompletionReportsSizes,
              format("test(isend #%zu)", k));
    }
    return;
  }
  std::vector<std::vector<int>> sizes(NCCL_NET_MAX_REQUESTS, std::vector<int>(64, -1));
  for (int g = 0; g < NCCL_NET_MAX_REQUESTS; g++) {
    std::vector<void*> data, mhs(static_cast<size_t>(m), mh);
    std::vector<size_t> caps(static_cast<size_t>(m), kCapacity);
    std::vector<int> tags;
    for (int j = 0; j < m; j++) {
      data.push_back(pool.data() + (static_cast<size_t>(g) * m + j) * kCapacity);
      tags.push_back(j);
    }
    std::string what = format("irecv #%d", g);
    c.activity(format("irecv #%d with %d in flight", g, g));
    reqs.push_back(post(
        what,
        [&] {
          void* r = nullptr;
          CONF_OK(c.net().irecv(comm, m, data.data(), caps.data(), tags.data(), mhs.data(), nullptr,
                                &r),
                  Rule::InFlightLimits, what);
          return r;
        },
        static_cast<size_t>(g), NCCL_NET_MAX_REQUESTS));
  }
  c.barrier("every receive posted");
  for (int g = 0; g < NCCL_NET_MAX_REQUESTS; g++) {
    CONF_OK(c.wait(reqs[g], sizes[g].data(), format("irecv #%d", g)), Rule::CompletionReportsSizes,
            format("test(irecv #%d)", g));
    for (int j = 0; j < m; j++) {
      size_t k = static_cast<size_t>(g) * m + j;
      CONF_EXPECT(sizes[g][j] == static_cast<int>(smallSize(k)) &&
                      pool.verify(k, k * kCapacity, smallSize(k)) == Buffer::kMismatch,
                  Rule::CompletionReportsSizes,
                  "message #%zu (receive #%d, buffer %d) arrived as %d B or with wrong bytes", k, g,
                  j, sizes[g][j]);
    }
  }
}

void backPressure(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  size_t total = static_cast<size_t>(NCCL_NET_MAX_REQUESTS) * c.maxRecvs() + 64;
  constexpr size_t kSize = 1024;
  Buffer pool(total * kSize);
  void* mh = c.reg(comm, pool.data(), pool.size());
  double limit = nowSeconds() + c.waitLimit();
  if (c.rank() == 0) {
    for (size_t k = 0; k < total; k++) pool.fill(k, k * kSize, kSize);
    std::deque<std::pair<size_t, void*>> inFlight;
    size_t next = 0, completed = 0;
    bool saturated = false;
    // Post until the plugin pushes back, then keep retrying in order while
    // the receiver drains: a NULL must not lose or reorder a message.
    auto post = [&] {
      while (next < total) {
        void* r = nullptr;
        ncclResult_t res =
            c.net().isend(comm, pool.data() + next * kSize, kSize, 0, mh, nullptr, &r);
        CONF_EXPECT(res == ncclSuccess, Rule::NullRequestRetry,
                    "isend #%zu with %zu in flight returned %s instead of a NULL request", next,
                    inFlight.size(), resultText(res).c_str());
        if (r == nullptr) return false;
        inFlight.emplace_back(next++, r);
      }
      return true;
    };
    c.activity("posting isends until the plugin returns a NULL request");
    if (post())
      c.note(format("isend never returned NULL for %zu messages in flight", total));
    else
      c.note(format("isend pushed back with a NULL request after %zu messages", next));
    saturated = true;
    c.barrier("sender saturated");
    while (completed < total) {
      if (saturated) post();
      if (!inFlight.empty()) {
        int done = 0, size = 0;
        CONF_OK(c.net().test(inFlight.front().second, &done, &size), Rule::CompletionReportsSizes,
                format("test(isend #%zu)", inFlight.front().first));
        if (done) {
          inFlight.pop_front();
          completed++;
        }
      }
      CONF_EXPECT(nowSeconds() < limit, Rule::NullRequestRetry,
                  "%zu of %zu messages sent after %.1f s of back-pressure", completed, total,
                  c.waitLimit());
    }
    return;
  }
  c.barrier("sender saturated");
  std::deque<std::pair<size_t, void*>> inFlight;
  size_t next = 0, received = 0;
  while (received < total) {
    while (next < total && inFlight.size() < NCCL_NET_MAX_REQUESTS) {
      void* data = pool.data() + next * kSize;
      size_t cap = kSize;
      int tag = 0;
      void* r = nullptr;
      CONF_OK(c.net().irecv(comm, 1, &data, &cap, &tag, &mh, nullptr, &r), Rule::NullRequestRetry,
              format("irecv #%zu", next));
      if (r == nullptr) break;
      inFlight.emplace_back(next++, r);
    }
    if (!inFlight.empty()) {
      int done = 0, size = -1;
      size_t k = inFlight.front().first;
      CONF_OK(c.net().test(inFlight.front().second, &done, &size), Rule::CompletionReportsSizes,
              format("test(irecv #%zu)", k));
      if (done) {
        size_t bad = pool.verify(k, k * kSize, kSize);
        CONF_EXPECT(size == static_cast<int>(kSize) && bad == Buffer::kMismatch,
                    Rule::NullRequestRetry,
                    "after back-pressure, receive #%zu got %d B, first wrong byte %zu: a message "
                    "was lost or "
                    "reordered",
                    k, size, bad);
        inFlight.pop_front();
        received++;
      }
    }
    CONF_EXPECT(nowSeconds() < limit, Rule::NullRequestRetry,
                "%zu of %zu messages received after %.1f s", received, total, c.waitLimit());
  }
}

void optionalCompletion(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  for (int i = 0; i < 4; i++) {
    if (c.rank() == 0) {
      c.transfer(comm, 0, 1, 4096, 340 + i);
      continue;
    }
    Buffer buf(4096);
    void* mh = c.reg(comm, buf.data(), buf.size());
    void* data = buf.data();
    size_t cap = buf.size();
    int tag = 0;
    void* request = nullptr;
    double limit = nowSeconds() + c.waitLimit();
    while (request == nullptr) {
      // NCCL pre-loads the hint on LL/LL128 receives (v9+).
      request = reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION);
      c.activity("irecv with *request = NCCL_NET_OPTIONAL_RECV_COMPLETION");
      CONF_OK(c.net().irecv(comm, 1, &data, &cap, &tag, &mh, nullptr, &request),
              Rule::NullRequestRetry, "irecv(hint)");
      CONF_EXPECT(
          request != reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION),
          Rule::NullRequestRetry,
          "irecv returned with *request still NCCL_NET_OPTIONAL_RECV_COMPLETION (0x1): it must "
          "always write *request");
      CONF_EXPECT(nowSeconds() < limit, Rule::NullRequestRetry,
                  "irecv(hint) kept returning a NULL request");
    }
    int size = -1;
    CONF_OK(c.wait(request, &size, "irecv posted with the hint", Rule::OptionalCompletionTestable),
            Rule::OptionalCompletionTestable, "test(irecv posted with the hint)");
    CONF_EXPECT(size == 4096 && buf.verify(340 + i) == Buffer::kMismatch,
                Rule::OptionalCompletionTestable,
                "the receive posted with the hint delivered %d B or wrong bytes", size);
    c.dereg(comm, mh);
  }
}

// What a request slot holds before the call: NCCL's proxy passes its own
// slot (src/transport/net.cc sendProxyProgress: sub->requests + buffSlot;
// recvProxyProgress presets it to NCCL_NET_OPTIONAL_RECV_COMPLETION) and
// reads it right after, so a call that takes nothing must still write NULL.
void* const kStaleRequest = reinterpret_cast<void*>(uintptr_t{0x5a1e0ff0});

// Posts until the plugin answers NULL three times (or `bound` calls), each
// call with the slot preset; returns the requests it took.
std::vector<void*> postUntilNull(Ctx& c, const std::string& kind, size_t bound,
                                 const std::function<ncclResult_t(void**)>& call) {
  std::vector<void*> taken;
  int nulls = 0;
  for (size_t k = 0; k < bound && nulls < 3; k++) {
    void* r = kStaleRequest;
    c.activity(format("%s #%zu with %zu in flight, *request preset to %p", kind.c_str(), k,
                      taken.size(), kStaleRequest));
    CONF_OK(call(&r), Rule::NullRequestRetry, format("%s #%zu", kind.c_str(), k));
    CONF_EXPECT(r != kStaleRequest, Rule::NullRequestRetry,
                "%s #%zu (%zu in flight) returned ncclSuccess but left *request at the %p it held "
                "before the call: NCCL would test() that stale value as a request",
                kind.c_str(), k, taken.size(), kStaleRequest);
    if (r == nullptr)
      nulls++;
    else
      taken.push_back(r);
  }
  if (nulls == 0) {
    c.note(format("%s took all %zu requests without back-pressure", kind.c_str(), taken.size()));
  }
  return taken;
}

void fullSlotsGetNull(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  int m = c.maxRecvs();
  constexpr size_t kSize = 64;
  size_t sendBound = static_cast<size_t>(NCCL_NET_MAX_REQUESTS) * static_cast<size_t>(m) + 8;
  size_t recvBound = NCCL_NET_MAX_REQUESTS + 8;
  Buffer pool(std::max(sendBound, recvBound) * kSize);
  void* mh = c.reg(comm, pool.data(), pool.size());
  auto slot = [&](size_t k) { return pool.data() + k * kSize; };

  // Sends posted before any receive: the sendComm fills up.
  std::vector<void*> sends;
  if (c.rank() == 0) {
    size_t k = 0;
    sends = postUntilNull(c, "isend", sendBound, [&](void** r) {
      return c.net().isend(comm, slot(k++), kSize, 0, mh, nullptr, r);
    });
  }
  std::string count = c.allgather("sends posted", std::to_string(sends.size()))[0];
  size_t nsends = std::stoul(count);
  for (size_t k = 0; k < nsends; k++) {
    if (c.rank() == 0) {
      CONF_OK(c.wait(sends[k], nullptr, format("isend #%zu", k)), Rule::CompletionReportsSizes,
              format("test(isend #%zu)", k));
    } else {
      void* data = slot(k);
      size_t cap = kSize;
      int tag = 0;
      void* r = c.irecv(comm, 1, &data, &cap, &tag, &mh, format("irecv #%zu", k));
      int size = -1;
      CONF_OK(c.wait(r, &size, format("irecv #%zu", k)), Rule::CompletionReportsSizes,
              format("test(irecv #%zu)", k));
    }
  }

  // Receives posted before any send: the recvComm fills up.
  std::vector<void*> recvs;
  if (c.rank() == 1) {
    size_t k = 0;
    recvs = postUntilNull(c, "irecv", recvBound, [&](void** r) {
      void* data = slot(k++);
      size_t cap = kSize;
      int tag = 0;
      return c.net().irecv(comm, 1, &data, &cap, &tag, &mh, nullptr, r);
    });
  }
  count = c.allgather("receives posted", std::to_string(recvs.size()))[1];
  size_t nrecvs = std::stoul(count);
  for (size_t k = 0; k < nrecvs; k++) {
    if (c.rank() == 0) {
      void* r = c.isend(comm, slot(k), kSize, 0, mh, format("isend #%zu", k));
      CONF_OK(c.wait(r, nullptr, format("isend #%zu", k)), Rule::CompletionReportsSizes,
              format("test(isend #%zu)", k));
    } else {
      int size = -1;
      CONF_OK(c.wait(recvs[k], &size, format("irecv #%zu", k)), Rule::CompletionReportsSizes,
              format("test(irecv #%zu)", k));
    }
  }
}

}  // namespace

void addFlowScenarios(std::vector<Scenario>& out) {
  out.push_back(
      {.area = "Flow",
       .name = "InFlightLimits",
       .rule = Rule::InFlightLimits,
       .ranks = 2,
       .run = inFlightLimits,
       .summary = "32 grouped irecvs, then 32 x maxRecvs isends in flight at once; all delivered"});
  out.push_back(
      {.area = "Flow",
       .name = "NullRequestBackPressure",
       .rule = Rule::NullRequestRetry,
       .ranks = 2,
       .run = backPressure,
       .summary =
           "isends beyond the limit get NULL, never an error; retried, none lost or reordered"});
  out.push_back(
      {.area = "Flow",
       .name = "FullSlotsGetNull",
       .rule = Rule::NullRequestRetry,
       .ranks = 2,
       .run = fullSlotsGetNull,
       .summary =
           "an isend/irecv that cannot take the request writes NULL over a preset *request"});
  out.push_back(
      {.area = "Flow",
       .name = "OptionalCompletionHint",
       .rule = Rule::NullRequestRetry,
       .ranks = 2,
       .needs = {.minAbi = 9},
       .run = optionalCompletion,
       .summary = "irecv with *request preset to 0x1 overwrites it; the request completes"});
}

}  // namespace conformance
