// SPDX-License-Identifier: Apache-2.0
// RMA beyond one clean session: sessions repeated and overlapping in one
// process and torn down in different orders per rank (rule 79), a peer
// that dies (rule 78), and two threads each driving its own collComm at
// once (rule 40), as NCCL's communicators and proxy threads do.
#include <sched.h>

#include <string>
#include <thread>
#include <vector>

#include "harness/wire.hpp"
#include "scenario/registry.hpp"
#include "scenario/rma_session.hpp"
#include "scenario/thread_failures.hpp"
#include "scenarios/faults.hpp"

namespace conformance {

namespace {

constexpr uint64_t kSeeds = 0x11fe0000ull;

// One window per session: a source half and a target half.
struct Window {
  static constexpr size_t kHalf = 4096;
  Buffer bytes{2 * kHalf};
  std::vector<uint64_t> signals = std::vector<uint64_t>(kRmaSignalWords, 0);
  void* mBytes = nullptr;
  void* mSignals = nullptr;
};

// Three rounds in one process. Each has two sessions alive at once (NCCL
// 2.30.7 inits RMA for comm->rmaContext, src/rma/rma_proxy.cc, and every
// communicator has its own; 2.28.9 inits GIN in plugin/net.cc and again in
// src/gin/gin_host.cc ncclGinConnectOnce), each carrying a put and a strong
// signal around the ring, verified; then even ranks tear down the first
// session first, odd ranks the second (NCCL destroys communicators in
// whatever order the application does, per rank).
void lifecycle(Ctx& c) {
  Rule rule = Rule::RmaLifecycleRepeatable;
  constexpr int kRounds = 3;
  int n = c.nranks(), me = c.rank();
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  for (int round = 0; round < kRounds; round++) {
    RmaSession first(c, 1, rule);
    RmaSession second(c, 2, rule);
    RmaSession* sessions[] = {&first, &second};
    Window windows[2];
    for (int k = 0; k < 2; k++) {
      Window& w = windows[k];
      w.mBytes = sessions[k]->reg(w.bytes.data(), w.bytes.size(), rule);
      w.mSignals = sessions[k]->reg(w.signals.data(), w.signals.size() * 8, rule);
    }
    c.barrier(format("round %d registered", round));
    for (int k = 0; k < 2; k++) {
      RmaSession& s = *sessions[k];
      Window& w = windows[k];
      w.bytes.fill(rmaSeed(kSeeds, me, next, static_cast<size_t>(round * 2 + k)), 0, Window::kHalf);
      std::string what = format("round %d, session %d: 4 KiB to rank %d", round, k + 1, next);
      s.wait(s.put(k, 0, w.mBytes, Window::kHalf, Window::kHalf, w.mBytes, next, what, rule), what,
             rule);
      s.signal(k, next, 0, w.mSignals, what + "'s signal", rule);
    }
    for (int k = 0; k < 2; k++) {
      Window& w = windows[k];
      sessions[k]->awaitSignal(&w.signals[0], 1,
                               format("round %d, session %d: rank %d's signal", round, k + 1, prev),
                               rule);
      size_t bad = w.bytes.verify(rmaSeed(kSeeds, prev, me, static_cast<size_t>(round * 2 + k)),
                                  Window::kHalf, Window::kHalf);
      CONF_EXPECT(bad == Buffer::kMismatch, rule,
                  "round %d, session %d: the put from rank %d differs at byte %zu", round, k + 1,
                  prev, bad - Window::kHalf);
    }
    c.barrier(format("round %d verified", round));
    if (me % 2 == 0) {
      first.teardown(rule);
      second.teardown(rule);
    } else {
      second.teardown(rule);
      first.teardown(rule);
    }
    c.barrier(format("round %d torn down", round));
  }
}

// Rank 1 is killed after a put to it went through; rank 0 goes on putting
// 1 MiB to it until iput or test() fails. NCCL's RMA proxy stops on the
// first failed call (src/rma/rma_proxy_progress.cc NCCLCHECKs iput,
// iputSignal and test), and the error reaches ncclCommGetAsyncError; a
// plugin that never reports the death leaves the proxy polling forever and
// every ncclWaitSignal of the job waiting with it.
void peerDeath(Ctx& c) {
  Rule rule = Rule::RmaPeerDeathReported;
  constexpr size_t kPut = 1 << 20;
  RmaSession s(c, 1, rule);
  Buffer window(2 * kPut);
  void* mWindow = s.reg(window.data(), window.size(), rule);
  c.barrier("registered");
  if (c.rank() == 0) {
    window.fill(rmaSeed(kSeeds, 0, 1, 0), 0, kPut);
    s.wait(s.put(0, 0, mWindow, kPut, kPut, mWindow, 1, "1 MiB to a live peer", rule),
           "1 MiB to a live peer", rule);
  }
  c.barrier("a put went through");
  if (c.rank() == 1) dieOnPurpose(c);
  double limit = deathLimit(c);
  double end = nowSeconds() + limit;
  const ncclRma_v14_t& t = s.table();
  int completed = 0;
  for (bool failed = false; !failed;) {
    c.activity("RMA iput(1 MiB to the rank that was killed)");
    void* request = nullptr;
    ncclResult_t res = t.iput(s.rmaCtx(), 0, 0, mWindow, kPut, kPut, mWindow, 1, &request);
    if (res != ncclSuccess) {
      c.note("iput to the dead rank returned " + resultText(res));
      break;
    }
    CONF_EXPECT(request != nullptr, Rule::RmaRequestsReturned,
                "RMA iput returned success and a NULL request");
    c.activity("RMA test(a put to the rank that was killed)");
    for (uint64_t polls = 1;; polls++) {
      int done = 0;
      res = t.test(s.collComm(), request, &done);
      if (res != ncclSuccess) {
        c.note("test() of a put to the dead rank returned " + resultText(res));
        failed = true;
        break;
      }
      if (done) {
        completed++;
        break;
      }
      if (t.rmaProgress != nullptr && (res = t.rmaProgress(s.rmaCtx())) != ncclSuccess) {
        c.note("rmaProgress() after the peer died returned " + resultText(res));
        failed = true;
        break;
      }
      if (polls % 64 == 0) {
        CONF_EXPECT(nowSeconds() < end, rule,
                    "a put to a rank killed %.1f s ago is still pending, and no call failed: "
                    "NCCL's proxy would wait for it forever",
                    limit);
        sched_yield();
      }
    }
    CONF_EXPECT(nowSeconds() < end, rule,
                "%.1f s after rank 1 was killed, %d puts to it have completed and no call failed",
                limit, completed);
  }
  s.teardown(rule, /*peerGone=*/true);
}

// Two threads, each driving its own collComm to the peer (NCCL runs one
// proxy progress thread per GPU, and every communicator of a process shares
// the plugin): 32 rounds of a 16 KiB put and a strong signal each way,
// every slot verified. Checks throw, so the threads record and this thread
// reports (rule 40).
void twoProgressThreads(Ctx& c) {
  Rule rule = Rule::ThreadSafe;
  constexpr int kThreads = 2;
  constexpr int kMessages = 32;
  constexpr size_t kSlot = 16384;
  int me = c.rank(), peer = 1 - me;
  RmaSession first(c, 1, rule);
  RmaSession second(c, 1, rule);
  RmaSession* sessions[kThreads] = {&first, &second};
  std::vector<Buffer> sources, targets;
  std::vector<std::vector<uint64_t>> signals(kThreads, std::vector<uint64_t>(kRmaSignalWords, 0));
  void* mSources[kThreads];
  void* mTargets[kThreads];
  void* mSignals[kThreads];
  sources.reserve(kThreads);
  targets.reserve(kThreads);
  for (int k = 0; k < kThreads; k++) {
    sources.emplace_back(kSlot * kMessages);
    targets.emplace_back(kSlot * kMessages);
    targets.back().clear(0);
  }
  for (int k = 0; k < kThreads; k++) {
    mSources[k] = sessions[k]->reg(sources[k].data(), sources[k].size(), rule);
    mTargets[k] = sessions[k]->reg(targets[k].data(), targets[k].size(), rule);
    mSignals[k] = sessions[k]->reg(signals[k].data(), kRmaSignalWords * 8, rule);
  }
  c.barrier("registered");
  ThreadFailures failures;
  double end = nowSeconds() + c.waitLimit();
  auto drive = [&](int k) {
    const ncclRma_v14_t& t = sessions[k]->table();
    void* rmaCtx = sessions[k]->rmaCtx();
    void* collComm = sessions[k]->collComm();
    auto progress = [&] {
      if (t.rmaProgress != nullptr && t.rmaProgress(rmaCtx) != ncclSuccess) {
        failures.add(format("thread %d: rmaProgress() failed", k));
      }
    };
    auto waitDone = [&](void* request, const std::string& what) {
      for (int done = 0; !done;) {
        ncclResult_t res = t.test(collComm, request, &done);
        if (res != ncclSuccess) {
          failures.add(
              format("thread %d: test(%s) returned %s", k, what.c_str(), resultText(res).c_str()));
          return false;
        }
        if (!done) progress();
        if (!done && nowSeconds() > end) {
          failures.add(
              format("thread %d: test(%s) not done after %.1f s", k, what.c_str(), c.waitLimit()));
          return false;
        }
      }
      return true;
    };
    for (int m = 0; m < kMessages && failures.count() == 0; m++) {
      size_t at = kSlot * static_cast<size_t>(m);
      sources[k].fill(rmaSeed(kSeeds, me, peer, static_cast<size_t>(k * kMessages + m)), at, kSlot);
      std::string what = format("message %d", m);
      void* put = nullptr;
      void* signal = nullptr;
      ncclResult_t res = t.iput(rmaCtx, 0, at, mSources[k], kSlot, at, mTargets[k],
                                static_cast<uint32_t>(peer), &put);
      if (res == ncclSuccess) {
        res = t.iputSignal(rmaCtx, 0, 0, nullptr, 0, 0, nullptr, static_cast<uint32_t>(peer), 0,
                           mSignals[k], 1, NCCL_GIN_SIGNAL_OP_INC, true, &signal);
      }
      if (res != ncclSuccess || put == nullptr || signal == nullptr) {
        failures.add(format("thread %d: iput/iputSignal(%s) returned %s%s", k, what.c_str(),
                            resultText(res).c_str(),
                            res == ncclSuccess ? " and a NULL request" : ""));
        return;
      }
      if (!waitDone(put, what) || !waitDone(signal, what + "'s signal")) return;
    }
    // The peer's thread k fills this thread's target the same way.
    const volatile uint64_t* word = &signals[k][0];
    while (failures.count() == 0 &&
           __atomic_load_n(word, __ATOMIC_ACQUIRE) < static_cast<uint64_t>(kMessages)) {
      progress();
      if (nowSeconds() > end) {
        failures.add(format("thread %d: %llu of %d signals from the peer after %.1f s", k,
                            static_cast<unsigned long long>(*word), kMessages, c.waitLimit()));
        return;
      }
      sched_yield();
    }
    for (int m = 0; m < kMessages && failures.count() == 0; m++) {
      size_t at = kSlot * static_cast<size_t>(m);
      size_t bad = targets[k].verify(
          rmaSeed(kSeeds, peer, me, static_cast<size_t>(k * kMessages + m)), at, kSlot);
      if (bad != Buffer::kMismatch) {
        failures.add(
            format("thread %d: message %d from the peer differs at byte %zu", k, m, bad - at));
      }
    }
  };
  c.activity("two threads, each driving its own RMA collComm");
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; k++) threads.emplace_back(drive, k);
  for (std::thread& thread : threads) thread.join();
  CONF_EXPECT(failures.count() == 0, rule,
              "with two RMA collComms driven from two threads at once: %s (%d failures)",
              failures.first().c_str(), failures.count());
  c.barrier("done");
}

}  // namespace

void addRmaLifecycleScenarios(std::vector<Scenario>& out) {
  auto rma = [&](const char* name, Rule rule, int ranks, void (*run)(Ctx&), const char* summary) {
    out.push_back(rmaScenario(name, rule, ranks, run, summary));
  };
  rma("Lifecycle", Rule::RmaLifecycleRepeatable, 3, lifecycle,
      "3 rounds of two sessions alive at once, each verified, torn down in a different order on "
      "odd and even ranks");
  rma("PeerDeath", Rule::RmaPeerDeathReported, 2, peerDeath,
      "a peer killed after a put: puts to it fail within the peer-death limit; teardown returns");
  rma("TwoProgressThreads", Rule::ThreadSafe, 2, twoProgressThreads,
      "two collComms driven from two threads at once, 32 puts and strong signals each way, "
      "verified");
}

}  // namespace conformance
