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

// The most requests NCCL keeps in flight on one comm (src/transport/net.cc,
// the same in 2.28 and 2.30). A connection has NCCL_STEPS (8) slots:
// sendProxyProgress posts an isend only while transmitted < done +
// NCCL_STEPS, and recvProxyProgress an irecv only while posted < done +
// maxDepth, maxDepth = min(NCCL_STEPS, NCCL_SHARED_STEPS / nsubs); a step's
// irecv and then its iflush hold the same slot. A comm serves one
// connection unless maxRecvs > 1 and NCCL_NET_SHARED_COMMS (on by default)
// share it among p2p connections (sendProxyConnect, recvProxyConnect):
// - a shared recvComm serves the subs of one operation whose peers sit
//   behind one remote proxy; each step posts one irecv per group of up to
//   maxRecvs of them, each group at most maxDepth steps deep;
// - a shared sendComm serves one connection of every local rank whose
//   sends PXN relays through this proxy, each NCCL_STEPS deep.
// NCCL_NET_MAX_REQUESTS (32), which ext-net/README.md asks for, is more
// than either: beyond these counts the limits are rule 45 (SHOULD).
constexpr size_t kNcclSteps = 8;         // NCCL_STEPS, src/include/device.h
constexpr size_t kNcclSharedSteps = 16;  // NCCL_SHARED_STEPS, src/transport/net.cc
// The local ranks that may relay through one NIC's proxy: a node of 8 GPUs
// (NCCL's arrays allow NCCL_MAX_LOCAL_RANKS, 72; a node with more GPUs
// behind one NIC needs more).
constexpr size_t kNcclLocalRanks = 8;

size_t ncclRecvRequests(int maxRecvs) {
  if (maxRecvs <= 1) return kNcclSteps;
  size_t m = static_cast<size_t>(maxRecvs), most = 0;
  for (size_t nsubs = 1; nsubs <= kNcclSharedSteps; nsubs++) {
    size_t depth = std::min(kNcclSteps, kNcclSharedSteps / nsubs);
    most = std::max(most, (nsubs + m - 1) / m * depth);  // every sub on this comm
  }
  return most;
}

size_t ncclSendRequests(int maxRecvs) {
  return maxRecvs <= 1 ? kNcclSteps : kNcclSteps * kNcclLocalRanks;
}

// The rule a limit found after `inFlight` requests breaks: rule `must`
// within what NCCL keeps in flight, rule 45 beyond it.
Rule limitRule(size_t inFlight, size_t ncclMost, Rule must) {
  return inFlight < ncclMost ? must : Rule::ReadmeRequestLimits;
}

// One round of rule 28's check: rank 1 posts `groups` grouped irecvs, then
// rank 0 the groups x maxRecvs isends that match them, none tested before
// all are posted. A NULL request is "try again" (rule 29), so a plugin that
// waits for the receiver's clear-to-send may return NULL until it arrives;
// only a NULL that persists, with nothing tested or completed, is a limit.
// Under `rule` MUST the round stops at the first finding; under rule 45 the
// posting side keeps its first finding in `*finding`, stops posting, and
// both sides finish what was matched, so that the SHOULD finding is not
// turned into the peer's stuck wait.
void inFlightRound(Ctx& c, void* comm, Buffer& pool, void* mh, size_t groups, Rule rule,
                   std::string* finding) {
  constexpr size_t kCapacity = 128;
  int m = c.maxRecvs();
  bool should = isShould(rule);
  std::vector<void*> reqs;
  // Retries a NULL request (no test() meanwhile) until the wait limit;
  // returns NULL when the plugin keeps refusing or fails under rule 45.
  auto post = [&](const std::string& what, const std::function<ncclResult_t(void**)>& call,
                  size_t inFlight, size_t limit) -> void* {
    double end = nowSeconds() + c.waitLimit();
    for (;;) {
      void* r = nullptr;
      ncclResult_t res = call(&r);
      if (res != ncclSuccess) {
        std::string text =
            format("%s with %zu in flight returned %s: a %s must take %zu", what.c_str(), inFlight,
                   resultText(res).c_str(), c.rank() == 0 ? "sendComm" : "recvComm", limit);
        if (!should) fail(rule, "%s", text.c_str());
        *finding = text;
        return nullptr;
      }
      if (r != nullptr) return r;
      if (nowSeconds() >= end) {
        std::string text = format(
            "%s kept returning a NULL request for %.1f s with %zu in flight and every "
            "matching receive posted: a %s must take %zu",
            what.c_str(), c.waitLimit(), inFlight, c.rank() == 0 ? "sendComm" : "recvComm", limit);
        if (!should) fail(rule, "%s", text.c_str());
        *finding = text;
        return nullptr;
      }
      sched_yield();
    }
  };
  if (c.rank() == 1) {
    pool.clear(0);  // a receive that writes nothing must not find the last round's bytes
    for (size_t g = 0; g < groups; g++) {
      std::vector<void*> data, mhs(static_cast<size_t>(m), mh);
      std::vector<size_t> caps(static_cast<size_t>(m), kCapacity);
      std::vector<int> tags;
      for (int j = 0; j < m; j++) {
        data.push_back(pool.data() + (g * m + j) * kCapacity);
        tags.push_back(j);
      }
      std::string what = format("irecv #%zu", g);
      c.activity(format("irecv #%zu with %zu in flight", g, g));
      void* r = post(
          what,
          [&](void** out) {
            return c.net().irecv(comm, m, data.data(), caps.data(), tags.data(), mhs.data(),
                                 nullptr, out);
          },
          g, groups);
      if (r == nullptr) break;
      reqs.push_back(r);
    }
  }
  size_t posted = std::stoul(
      c.allgather("every receive posted", c.rank() == 1 ? std::to_string(reqs.size()) : "0")[1]);
  if (c.rank() == 0) {
    size_t total = posted * static_cast<size_t>(m);
    for (size_t k = 0; k < total; k++) {
      char* p = pool.data() + k * kCapacity;
      pool.fill(k, k * kCapacity, smallSize(k));
      std::string what = format("isend #%zu", k);
      c.activity(format("isend #%zu with %zu in flight", k, k));
      void* r = post(
          what,
          [&](void** out) {
            return c.net().isend(comm, p, smallSize(k), static_cast<int>(k % m), mh, nullptr, out);
          },
          k, total);
      if (r == nullptr) break;
      reqs.push_back(r);
    }
  }
  size_t sent = std::stoul(
      c.allgather("every send posted", c.rank() == 0 ? std::to_string(reqs.size()) : "0")[0]);
  if (c.rank() == 0) {
    for (size_t k = 0; k < reqs.size(); k++) {
      int size = 0;
      CONF_OK(c.wait(reqs[k], &size, format("isend #%zu", k)), Rule::CompletionReportsSizes,
              format("test(isend #%zu)", k));
    }
    return;
  }
  // Only the receives whose every buffer was sent can complete; the others
  // stay in flight until the comm closes (rule 51).
  size_t complete = std::min(reqs.size(), sent / static_cast<size_t>(m));
  for (size_t g = 0; g < complete; g++) {
    std::vector<int> sizes(64, -1);
    CONF_OK(c.wait(reqs[g], sizes.data(), format("irecv #%zu", g)), Rule::CompletionReportsSizes,
            format("test(irecv #%zu)", g));
    for (int j = 0; j < m; j++) {
      size_t k = g * m + j;
      CONF_EXPECT(sizes[j] == static_cast<int>(smallSize(k)) &&
                      pool.verify(k, k * kCapacity, smallSize(k)) == Buffer::kMismatch,
                  Rule::CompletionReportsSizes,
                  "message #%zu (receive #%zu, buffer %d) arrived as %d B or with wrong bytes", k,
                  g, j, sizes[j]);
    }
  }
}

// Rule 28 as NCCL relies on it: with the matching receives posted, a
// recvComm takes the grouped irecvs NCCL keeps in flight on it and a
// sendComm their isends, before any of them is tested; then rule 45: the
// README's 32 grouped irecvs and 32 x maxRecvs isends.
void inFlightLimits(Ctx& c) {
  int m = c.maxRecvs();
  constexpr size_t kCapacity = 128;
  void* comm = c.link(0, 1, "connection");
  size_t readme = NCCL_NET_MAX_REQUESTS;
  size_t nccl = std::min(ncclRecvRequests(m), ncclSendRequests(m) / static_cast<size_t>(m));
  Buffer pool(std::max(readme, nccl) * static_cast<size_t>(m) * kCapacity);
  void* mh = c.reg(comm, pool.data(), pool.size());
  std::string finding;
  c.note(format("NCCL keeps up to %zu receives and %zu sends in flight on a comm of maxRecvs %d",
                ncclRecvRequests(m), ncclSendRequests(m), m));
  inFlightRound(c, comm, pool, mh, nccl, Rule::InFlightLimits, &finding);
  inFlightRound(c, comm, pool, mh, readme, Rule::ReadmeRequestLimits, &finding);
  c.barrier("both rounds done");
  CONF_EXPECT(finding.empty(), Rule::ReadmeRequestLimits, "%s", finding.c_str());
}

// Rule 29: the sender posts until the plugin pushes back, then keeps
// retrying in order while the receiver drains; a NULL must not lose or
// reorder a message. Only what happens within the requests NCCL keeps in
// flight is rule 29's: an error, or a NULL that loses or reorders, after
// more than that many is rule 45's, and is reported once both sides have
// finished what was posted, so that the peer does not wait in vain.
void backPressure(Ctx& c) {
  void* comm = c.link(0, 1, "connection");
  int m = c.maxRecvs();
  size_t total = static_cast<size_t>(NCCL_NET_MAX_REQUESTS) * m + 64;
  constexpr size_t kSize = 1024;
  Buffer pool(total * kSize);
  void* mh = c.reg(comm, pool.data(), pool.size());
  double limit = nowSeconds() + c.waitLimit();
  std::string finding;  // a rule-45 finding of this rank
  if (c.rank() == 0) {
    for (size_t k = 0; k < total; k++) pool.fill(k, k * kSize, kSize);
    std::deque<std::pair<size_t, void*>> inFlight;
    size_t next = 0, completed = 0;
    size_t firstNull = total;  // in flight when the plugin first pushed back
    size_t peak = 0;           // the most ever in flight
    // After an error beyond NCCL's count the sender posts only below the
    // count it failed at, as a host that learnt the plugin's capacity would.
    size_t capacity = total;
    auto post = [&] {
      while (next < total && inFlight.size() < capacity) {
        void* r = nullptr;
        ncclResult_t res =
            c.net().isend(comm, pool.data() + next * kSize, kSize, 0, mh, nullptr, &r);
        if (res != ncclSuccess) {
          Rule rule = limitRule(inFlight.size(), ncclSendRequests(m), Rule::NullRequestRetry);
          std::string text =
              format("isend #%zu with %zu in flight returned %s instead of a NULL request", next,
                     inFlight.size(), resultText(res).c_str());
          if (!isShould(rule)) fail(rule, "%s", text.c_str());
          if (finding.empty()) finding = text;
          capacity = inFlight.size();
          return false;
        }
        if (r == nullptr) {
          firstNull = std::min(firstNull, inFlight.size());
          return false;
        }
        inFlight.emplace_back(next++, r);
        peak = std::max(peak, inFlight.size());
      }
      return true;
    };
    // A stall, a loss or a reordering is rule 29's if NCCL could meet it:
    // the plugin pushed back, or the sender never had more in flight than
    // NCCL keeps; else rule 45's.
    auto judged = [&] {
      return limitRule(std::min(firstNull, peak), ncclSendRequests(m), Rule::NullRequestRetry);
    };
    c.activity("posting isends until the plugin returns a NULL request");
    if (post())
      c.note(format("isend never returned NULL for %zu messages in flight", total));
    else if (capacity == total)
      c.note(format("isend pushed back with a NULL request after %zu messages", next));
    c.barrier("sender saturated");
    while (completed < total) {
      post();
      if (!inFlight.empty()) {
        int done = 0, size = 0;
        CONF_OK(c.net().test(inFlight.front().second, &done, &size), Rule::CompletionReportsSizes,
                format("test(isend #%zu)", inFlight.front().first));
        if (done) {
          inFlight.pop_front();
          completed++;
        }
      }
      CONF_EXPECT(nowSeconds() < limit, judged(),
                  "%zu of %zu messages sent after %.1f s of back-pressure", completed, total,
                  c.waitLimit());
    }
    // The receiver's finding on order comes back to be judged here.
    std::string lost = c.allgather("every message checked", "")[1];
    CONF_EXPECT(lost.empty(), judged(), "%s", lost.c_str());
    c.barrier("findings known");
    CONF_EXPECT(finding.empty(), Rule::ReadmeRequestLimits, "%s", finding.c_str());
    return;
  }
  c.barrier("sender saturated");
  std::deque<std::pair<size_t, void*>> inFlight;
  size_t next = 0, received = 0;
  std::string lost;  // the first message lost or reordered, for the sender to judge
  size_t capacity = NCCL_NET_MAX_REQUESTS;
  while (received < total) {
    while (next < total && inFlight.size() < capacity) {
      void* data = pool.data() + next * kSize;
      size_t cap = kSize;
      int tag = 0;
      void* r = nullptr;
      ncclResult_t res = c.net().irecv(comm, 1, &data, &cap, &tag, &mh, nullptr, &r);
      if (res != ncclSuccess) {
        Rule rule = limitRule(inFlight.size(), ncclRecvRequests(m), Rule::NullRequestRetry);
        std::string text = format("irecv #%zu with %zu in flight returned %s", next,
                                  inFlight.size(), resultText(res).c_str());
        if (!isShould(rule)) fail(rule, "%s", text.c_str());
        if (finding.empty()) finding = text;
        capacity = inFlight.size();  // posts again once one of these completes
        break;
      }
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
        if (lost.empty() && (size != static_cast<int>(kSize) || bad != Buffer::kMismatch)) {
          lost = format(
              "after back-pressure, receive #%zu got %d B, first wrong byte %zu: a message was "
              "lost or reordered",
              k, size, bad);
        }
        inFlight.pop_front();
        received++;
      }
    }
    if (nowSeconds() >= limit) {
      if (lost.empty())
        lost = format("%zu of %zu messages received after %.1f s", received, total, c.waitLimit());
      break;
    }
  }
  c.allgather("every message checked", lost);
  c.barrier("findings known");
  CONF_EXPECT(finding.empty(), Rule::ReadmeRequestLimits, "%s", finding.c_str());
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
// call with the slot preset; returns the requests it took. An error or a
// stale slot with fewer requests in flight than NCCL keeps (`ncclMost`)
// breaks rule 29; after more, it is rule 45's, kept in `*finding` (the
// first one), and posting stops there.
std::vector<void*> postUntilNull(Ctx& c, const std::string& kind, size_t bound, size_t ncclMost,
                                 std::string* finding,
                                 const std::function<ncclResult_t(void**)>& call) {
  std::vector<void*> taken;
  int nulls = 0;
  auto found = [&](const std::string& text) {
    Rule rule = limitRule(taken.size(), ncclMost, Rule::NullRequestRetry);
    if (!isShould(rule)) fail(rule, "%s", text.c_str());
    if (finding->empty()) *finding = text;
  };
  for (size_t k = 0; k < bound && nulls < 3; k++) {
    void* r = kStaleRequest;
    c.activity(format("%s #%zu with %zu in flight, *request preset to %p", kind.c_str(), k,
                      taken.size(), kStaleRequest));
    ncclResult_t res = call(&r);
    if (res != ncclSuccess) {
      found(format("%s #%zu (%zu in flight) returned %s instead of a NULL request", kind.c_str(), k,
                   taken.size(), resultText(res).c_str()));
      break;
    }
    if (r == kStaleRequest) {
      found(
          format("%s #%zu (%zu in flight) returned ncclSuccess but left *request at the %p it "
                 "held before the call: NCCL would test() that stale value as a request",
                 kind.c_str(), k, taken.size(), kStaleRequest));
      break;
    }
    if (r == nullptr)
      nulls++;
    else
      taken.push_back(r);
  }
  if (nulls == 0 && finding->empty()) {
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
  std::string finding;  // a rule-45 finding of this rank, reported at the end

  // Sends posted before any receive: the sendComm fills up.
  std::vector<void*> sends;
  if (c.rank() == 0) {
    size_t k = 0;
    sends = postUntilNull(c, "isend", sendBound, ncclSendRequests(m), &finding, [&](void** r) {
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
    recvs = postUntilNull(c, "irecv", recvBound, ncclRecvRequests(m), &finding, [&](void** r) {
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
  c.barrier("findings known");
  CONF_EXPECT(finding.empty(), Rule::ReadmeRequestLimits, "%s", finding.c_str());
}

}  // namespace

void addFlowScenarios(std::vector<Scenario>& out) {
  out.push_back({.area = "Flow",
                 .name = "InFlightLimits",
                 .rule = Rule::InFlightLimits,
                 .ranks = 2,
                 .run = inFlightLimits,
                 .summary =
                     "the grouped irecvs and isends NCCL keeps in flight on a comm, then the "
                     "README's 32 and 32 x maxRecvs (rule 45); all delivered"});
  out.push_back(
      {.area = "Flow",
       .name = "NullRequestBackPressure",
       .rule = Rule::NullRequestRetry,
       .ranks = 2,
       .run = backPressure,
       .summary =
           "isends until NULL, never an error within what NCCL keeps in flight (beyond: rule "
           "45); retried, none lost or reordered"});
  out.push_back(
      {.area = "Flow",
       .name = "FullSlotsGetNull",
       .rule = Rule::NullRequestRetry,
       .ranks = 2,
       .run = fullSlotsGetNull,
       .summary = "an isend/irecv that cannot take the request writes NULL over a preset *request "
                  "(beyond what NCCL keeps in flight: rule 45)"});
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
