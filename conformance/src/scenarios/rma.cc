// SPDX-License-Identifier: Apache-2.0
// RMA: the host one-sided table (ncclRmaPlugin_v14) that NCCL's GIN proxy
// and its host RMA API run on (docs/gin-rma.md). Puts land where the
// target registered, signals add exactly, a strong signal follows every
// earlier put of its context, gets and flushes, request capacity, local
// completion. Remote visibility is only ever judged through a signal, as
// NCCL's device code judges it (nccl_device/gin.h: a put's completion
// says nothing of the target).
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "harness/wire.hpp"
#include "scenario/plugin_log.hpp"
#include "scenario/registry.hpp"
#include "scenario/rma_session.hpp"

namespace conformance {

namespace {

constexpr size_t kSignalWords = kRmaSignalWords;

uint64_t seedOf(int src, int dst, int item) {
  return rmaSeed(0x51000000ull, src, dst, static_cast<size_t>(item));
}

// The table's members NCCL calls unconditionally (src/plugin/rma/rma_v14.cc
// copies them; src/rma/rma_proxy.cc and rma_proxy_progress.cc call them).
void tableComplete(Ctx& c) {
  Rule rule = Rule::RmaTableComplete;
  const auto* v14 = static_cast<const ncclRma_v14_t*>(c.plugin().symbol("ncclRmaPlugin_v14"));
  std::vector<std::pair<const char*, bool>> members = {
      {"init", v14->init != nullptr},
      {"devices", v14->devices != nullptr},
      {"getProperties", v14->getProperties != nullptr},
      {"listen", v14->listen != nullptr},
      {"connect", v14->connect != nullptr},
      {"createContext", v14->createContext != nullptr},
      {"regMrSym", v14->regMrSym != nullptr},
      {"deregMrSym", v14->deregMrSym != nullptr},
      {"destroyContext", v14->destroyContext != nullptr},
      {"closeColl", v14->closeColl != nullptr},
      {"closeListen", v14->closeListen != nullptr},
      {"iput", v14->iput != nullptr},
      {"iputSignal", v14->iputSignal != nullptr},
      {"iget", v14->iget != nullptr},
      {"iflush", v14->iflush != nullptr},
      {"test", v14->test != nullptr},
      {"finalize", v14->finalize != nullptr}};
  for (const auto& [name, present] : members) {
    CONF_EXPECT(present, rule, "ncclRmaPlugin_v14.%s is NULL; NCCL calls it", name);
  }
  CONF_EXPECT(v14->name != nullptr && v14->name[0] != '\0', rule,
              "ncclRmaPlugin_v14.name is empty");
  // The other tables of the same class must agree on the name: NCCL_GIN_PLUGIN
  // and NCCL_RMA_PLUGIN select by it (src/plugin/gin.cc, rma.cc).
  for (const char* symbol :
       {"ncclRmaPlugin_v13", "ncclGinPlugin_v13", "ncclGinPlugin_v12", "ncclGinPlugin_v11"}) {
    const auto* table = static_cast<const char* const*>(c.plugin().symbol(symbol));
    if (table == nullptr) continue;
    CONF_EXPECT(*table != nullptr && std::strcmp(*table, v14->name) == 0, rule,
                "%s.name is \"%s\", ncclRmaPlugin_v14.name \"%s\"", symbol,
                *table ? *table : "(null)", v14->name);
  }
  // As NCCL: the net plugin first, and a logger (NCCL always passes one).
  c.comm();
  void* ctx = nullptr;
  CONF_OK(v14->init(&ctx, 0x52aa0001ull, pluginLogger()), rule, "RMA init()");
  int ndev = 0;
  CONF_OK(v14->devices(&ndev), rule, "RMA devices()");
  CONF_EXPECT(ndev >= 1, rule, "RMA devices() reports %d devices", ndev);
  for (int d = 0; d < ndev; d++) {
    ncclNetProperties_v12_t p{};
    CONF_OK(v14->getProperties(d, &p), rule, format("RMA getProperties(%d)", d));
    // src/plugin/rma/rma_v13.cc ncclRma_init refuses any other type.
    CONF_EXPECT(p.netDeviceType == NCCL_NET_DEVICE_GIN_PROXY, rule,
                "RMA device %d has netDeviceType %d, not GIN_PROXY (%d)", d,
                static_cast<int>(p.netDeviceType), static_cast<int>(NCCL_NET_DEVICE_GIN_PROXY));
    // The proxy's queue is 32 x maxRecvs slots indexed through a mask
    // (src/gin/gin_host_proxy.cc ncclGinProxyCreateContext, src/rma/
    // rma_proxy.cc): any other value breaks the ring.
    CONF_EXPECT(p.maxRecvs >= 1 && (p.maxRecvs & (p.maxRecvs - 1)) == 0, rule,
                "RMA device %d has maxRecvs %d, not a power of two", d, p.maxRecvs);
    // The inline-put buffer is host memory (regMrSym(NCCL_PTR_HOST)).
    CONF_EXPECT(p.ptrSupport & NCCL_PTR_HOST, rule,
                "RMA device %d does not support host memory (ptrSupport 0x%x)", d, p.ptrSupport);
  }
  CONF_OK(v14->finalize(ctx), rule, "RMA finalize()");
}

// Two collComms at once, as NCCL sets up one per GIN connection, each with
// registrations of a size that differs per rank (src/gin/gin_host.cc,
// commit "asymmetric sizes in ncclCommWindowRegister").
void connectCollective(Ctx& c) {
  Rule rule = Rule::RmaConnectCollective;
  RmaSession first(c, 2, rule);
  RmaSession second(c, 1, rule);
  Buffer a(4096 + 512 * static_cast<size_t>(c.rank()));
  Buffer b(65536 + 4096 * static_cast<size_t>(c.rank()));
  void* ma = first.reg(a.data(), a.size(), rule);
  void* mb = second.reg(b.data(), b.size(), rule);
  void* mc = first.reg(b.data(), b.size(), rule);
  c.barrier("registered");
  first.dereg(mc);
  second.dereg(mb);
  first.dereg(ma);
  c.barrier("done");
}

// Eight ranks, the most in one collective connect here (NCCL connects
// every rank of the communicator, or of the rail team): every rank puts
// 4 KiB and a strong signal to every rank, itself included.
void eightRanks(Ctx& c) {
  Rule rule = Rule::RmaConnectCollective;
  constexpr size_t kEach = 4096;
  RmaSession s(c, 1, rule);
  int n = c.nranks(), me = c.rank();
  Buffer target(kEach * static_cast<size_t>(n));
  Buffer source(kEach);
  std::vector<uint64_t> signals(kSignalWords, 0);
  void* mTarget = s.reg(target.data(), target.size(), rule);
  void* mSource = s.reg(source.data(), source.size(), rule);
  void* mSignals = s.reg(signals.data(), signals.size() * 8, rule);
  c.barrier("registered");
  for (int dst = 0; dst < n; dst++) {
    source.fill(seedOf(me, dst, 0));
    std::string what = format("4 KiB to rank %d of %d", dst, n);
    s.wait(s.put(0, 0, mSource, kEach, kEach * static_cast<size_t>(me), mTarget, dst, what, rule),
           what, rule);
    s.signal(0, dst, 8 * static_cast<uint64_t>(me), mSignals, what + "'s signal", rule);
  }
  for (int src = 0; src < n; src++) {
    s.awaitSignal(&signals[static_cast<size_t>(src)], 1, format("rank %d's signal", src), rule);
    size_t at = kEach * static_cast<size_t>(src);
    size_t bad = target.verify(seedOf(src, me, 0), at, kEach);
    CONF_EXPECT(bad == Buffer::kMismatch, rule, "the put from rank %d of %d differs at byte %zu",
                src, n, bad - at);
  }
  c.barrier("done");
}

// Target layout: one slot of kSlot bytes per source rank, holding every
// size at an odd offset; the rest stays 0xEE.
constexpr size_t kSlot = 80 * 1024;
const std::vector<size_t> kPutSizes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 4096, 65536};

size_t putOffset(size_t index) {
  size_t off = 1;
  for (size_t i = 0; i < index; i++) off += kPutSizes[i] + 3;
  return off;
}

// Sizes 0..8 (inline puts), a page and 64 KiB, to every rank and itself,
// into a target whose registration is larger than the sender's.
void putsLand(Ctx& c) {
  Rule rule = Rule::RmaPutsLand;
  RmaSession s(c, 1, rule);
  int n = c.nranks(), me = c.rank();
  Buffer target(kSlot * static_cast<size_t>(n) + 4096 * static_cast<size_t>(me));
  target.clear(0xEE);
  std::vector<uint64_t> signals(kSignalWords, 0);
  Buffer source(kSlot);
  void* mTarget = s.reg(target.data(), target.size(), rule);
  void* mSignals = s.reg(signals.data(), signals.size() * 8, rule);
  void* mSource = s.reg(source.data(), source.size(), rule);
  c.barrier("registered");
  for (int dst = 0; dst < n; dst++) {
    std::vector<void*> requests;
    for (size_t i = 0; i < kPutSizes.size(); i++) {
      source.fill(seedOf(me, dst, static_cast<int>(i)), putOffset(i), kPutSizes[i]);
      requests.push_back(s.put(0, putOffset(i), mSource, kPutSizes[i],
                               kSlot * static_cast<size_t>(me) + putOffset(i), mTarget, dst,
                               format("%zu B to rank %d", kPutSizes[i], dst), rule));
    }
    for (void* r : requests) s.wait(r, format("a put to rank %d", dst), rule);
    // NCCL's device signal() (gin__funcs.h): no payload, no handles.
    s.signal(0, dst, 8 * static_cast<uint64_t>(me), mSignals, format("signal to rank %d", dst),
             rule);
  }
  for (int src = 0; src < n; src++) {
    s.awaitSignal(&signals[static_cast<size_t>(src)], 1,
                  format("rank %d's signal after its puts", src), rule);
    for (size_t i = 0; i < kPutSizes.size(); i++) {
      size_t at = kSlot * static_cast<size_t>(src) + putOffset(i);
      size_t bad = target.verify(seedOf(src, me, static_cast<int>(i)), at, kPutSizes[i]);
      CONF_EXPECT(bad == Buffer::kMismatch, rule,
                  "the %zu B put from rank %d differs at byte %zu of %zu (target offset %zu)",
                  kPutSizes[i], src, bad - at, kPutSizes[i], at);
      size_t where = 0;
      CONF_EXPECT(target.untouched(0xEE, at + kPutSizes[i], 3, &where), rule,
                  "the %zu B put from rank %d wrote past its end (byte %zu)", kPutSizes[i], src,
                  where - at);
    }
  }
  long outside = 0;
  CONF_EXPECT(target.guardsIntact(&outside), rule,
              "a put wrote outside the target's registration (offset %ld)", outside);
  c.barrier("done");
}

// Windows whose size grows with the rank (NCCL registers per-rank sizes
// since "asymmetric sizes in ncclCommWindowRegister", src/gin/gin_host.cc):
// every rank puts a block at the far end of every target's window, so the
// smallest rank writes far past the end of its own registration of it.
void asymmetricWindows(Ctx& c) {
  Rule rule = Rule::RmaPutsLand;
  constexpr size_t kBlock = 65536;
  auto windowSize = [](int rank) { return 256 * 1024 * static_cast<size_t>(rank + 1); };
  // Where rank `src`'s block lands in rank `dst`'s window: counted back
  // from its end.
  auto blockAt = [&](int src, int dst) {
    return windowSize(dst) - kBlock * static_cast<size_t>(src + 1);
  };
  RmaSession s(c, 1, rule);
  int n = c.nranks(), me = c.rank();
  Buffer window(windowSize(me));
  window.clear(0xEE);
  Buffer source(kBlock);
  std::vector<uint64_t> signals(kSignalWords, 0);
  void* mWindow = s.reg(window.data(), window.size(), rule);
  void* mSignals = s.reg(signals.data(), signals.size() * 8, rule);
  void* mSource = s.reg(source.data(), source.size(), rule);
  c.barrier("registered");
  for (int dst = 0; dst < n; dst++) {
    source.fill(seedOf(me, dst, 0));
    std::string what =
        format("64 KiB to the last %zu KiB of rank %d's %zu KiB window",
               (windowSize(dst) - blockAt(me, dst)) / 1024, dst, windowSize(dst) / 1024);
    s.wait(s.put(0, 0, mSource, kBlock, blockAt(me, dst), mWindow, dst, what, rule), what, rule);
    s.signal(0, dst, 8 * static_cast<uint64_t>(me), mSignals, format("signal to rank %d", dst),
             rule);
  }
  for (int src = 0; src < n; src++) {
    s.awaitSignal(&signals[static_cast<size_t>(src)], 1,
                  format("rank %d's signal after its put", src), rule);
    size_t at = blockAt(src, me);
    size_t bad = window.verify(seedOf(src, me, 0), at, kBlock);
    CONF_EXPECT(bad == Buffer::kMismatch, rule,
                "the 64 KiB put from rank %d (window %zu KiB) to offset %zu of this rank's %zu "
                "KiB window differs at byte %zu",
                src, windowSize(src) / 1024, at, window.size() / 1024, bad - at);
  }
  size_t where = 0;
  CONF_EXPECT(window.untouched(0xEE, 0, blockAt(n - 1, me), &where), rule,
              "a put wrote below the blocks, at offset %zu of this rank's window", where);
  c.barrier("done");
}

// Waits until `word` holds exactly `expected`, then keeps progressing a
// while: a signal applied twice or late shows as a change.
void awaitExactly(Ctx& c, RmaSession& s, const uint64_t* word, uint64_t expected,
                  const std::string& what, Rule rule) {
  double end = nowSeconds() + c.waitLimit();
  uint64_t seen = 0;
  while ((seen = __atomic_load_n(word, __ATOMIC_ACQUIRE)) != expected) {
    CONF_EXPECT(nowSeconds() < end, rule, "%s: %llu after %.1f s, expected exactly %llu",
                what.c_str(), static_cast<unsigned long long>(seen), c.waitLimit(),
                static_cast<unsigned long long>(expected));
    s.progress(rule);
    sched_yield();
  }
  double settle = nowSeconds() + 0.05;
  while (nowSeconds() < settle) s.progress(rule);
  seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  CONF_EXPECT(seen == expected, rule, "%s: reached %llu, then changed to %llu", what.c_str(),
              static_cast<unsigned long long>(expected), static_cast<unsigned long long>(seen));
}

// Every rank signals every rank, on two contexts: INC with a value NCCL's
// backends ignore, ADD of distinct amounts, and ADDs that wrap at 2^64.
void signalsExact(Ctx& c) {
  Rule rule = Rule::RmaSignalsExact;
  constexpr int kRounds = 40;
  RmaSession s(c, 2, rule);
  int n = c.nranks(), me = c.rank();
  std::vector<uint64_t> signals(kSignalWords, 0);
  void* mSignals = s.reg(signals.data(), signals.size() * 8, rule);
  c.barrier("registered");
  std::vector<void*> requests;
  auto signal = [&](int dst, int round, uint64_t word, uint64_t value, uint32_t op) {
    requests.push_back(s.putSignal(round % 2, 0, nullptr, 0, 0, nullptr, dst, 8 * word, mSignals,
                                   value, op, true,
                                   format("signal %d of word %llu to rank %d", round,
                                          static_cast<unsigned long long>(word), dst),
                                   rule));
  };
  for (int round = 0; round < kRounds; round++) {
    for (int dst = 0; dst < n; dst++) {
      signal(dst, round, 0, 12345, NCCL_GIN_SIGNAL_OP_INC);
      signal(dst, round, 1, 1000003ull * static_cast<uint64_t>(me + 1), NCCL_GIN_SIGNAL_OP_ADD);
    }
    // Drain now and then: NCCL never has more than its queue outstanding.
    if (requests.size() >= 16) {
      for (void* r : requests) s.wait(r, "a signal", rule);
      requests.clear();
    }
  }
  for (int dst = 0; dst < n; dst++) {
    signal(dst, 0, 2, ~uint64_t(0) - 1, NCCL_GIN_SIGNAL_OP_ADD);
    signal(dst, 1, 2, 3, NCCL_GIN_SIGNAL_OP_ADD);
  }
  for (void* r : requests) s.wait(r, "a signal", rule);
  uint64_t sumOfAdds = 0;
  for (int src = 0; src < n; src++) sumOfAdds += 1000003ull * static_cast<uint64_t>(src + 1);
  awaitExactly(c, s, &signals[0], static_cast<uint64_t>(n) * kRounds,
               "word 0 (INC from every rank; INC adds 1 whatever the value)", rule);
  awaitExactly(c, s, &signals[1], sumOfAdds * kRounds, "word 1 (ADD from every rank)", rule);
  awaitExactly(c, s, &signals[2], static_cast<uint64_t>(n), "word 2 (ADDs that wrap at 2^64)",
               rule);
  c.barrier("done");
}

// Rank 0 writes one slot per round to rank 1: a large put followed by a
// small strong signal (the earlier put must be visible when it is), then a
// large weak put-with-signal (its own payload must be). Rank 1 checks the
// slots the instant each signal moves.
void strongSignalOrdering(Ctx& c) {
  Rule rule = Rule::RmaStrongSignalOrdering;
  constexpr int kRounds = 8;
  constexpr size_t kLarge = 1 << 20;
  RmaSession s(c, 1, rule);
  Buffer slots(kLarge * kRounds);
  slots.clear(0);
  std::vector<uint64_t> signals(kSignalWords, 0);
  void* mSlots = s.reg(slots.data(), slots.size(), rule);
  void* mSignals = s.reg(signals.data(), signals.size() * 8, rule);
  c.barrier("registered");
  if (c.rank() == 0) {
    std::vector<void*> requests;
    for (int r = 0; r < kRounds; r++) {
      size_t at = kLarge * static_cast<size_t>(r);
      slots.fill(seedOf(0, 1, r), at, kLarge);
      bool strong = r % 2 == 0;
      if (strong) {
        requests.push_back(
            s.put(0, at, mSlots, kLarge, at, mSlots, 1, format("round %d's 1 MiB", r), rule));
        requests.push_back(s.putSignal(0, 0, nullptr, 0, 0, nullptr, 1, 0, mSignals, 1,
                                       NCCL_GIN_SIGNAL_OP_INC, true,
                                       format("round %d's strong signal", r), rule));
      } else {
        requests.push_back(s.putSignal(0, at, mSlots, kLarge, at, mSlots, 1, 0, mSignals, 1,
                                       NCCL_GIN_SIGNAL_OP_INC, false,
                                       format("round %d's 1 MiB with a weak signal", r), rule));
      }
    }
    for (void* r : requests) s.wait(r, "a put", rule);
  } else if (c.rank() == 1) {
    for (int r = 0; r < kRounds; r++) {
      s.awaitSignal(&signals[0], static_cast<uint64_t>(r + 1), format("round %d's signal", r),
                    rule);
      size_t at = kLarge * static_cast<size_t>(r);
      size_t bad = slots.verify(seedOf(0, 1, r), at, kLarge);
      CONF_EXPECT(bad == Buffer::kMismatch, rule,
                  "round %d's %s signal was visible before its 1 MiB had landed (byte %zu "
                  "differs)",
                  r, r % 2 == 0 ? "strong" : "weak", bad - at);
    }
  }
  c.barrier("done");
}

// Gets from the peer and from itself, then an iflush of the local region
// (src/gin/gin_host_proxy.cc: a flush after gets; NULL request = done).
void getAndFlush(Ctx& c) {
  Rule rule = Rule::RmaGetAndFlush;
  RmaSession s(c, 1, rule);
  int n = c.nranks(), me = c.rank();
  const std::vector<size_t> sizes = {1, 8, 4096, 1 << 20};
  size_t regionSize = 0;
  for (size_t size : sizes) regionSize += size + 5;
  Buffer exposed(regionSize);
  Buffer landed(regionSize * static_cast<size_t>(n));
  landed.clear(0);
  size_t at = 0;
  for (size_t i = 0; i < sizes.size(); at += sizes[i] + 5, i++)
    exposed.fill(seedOf(me, me, static_cast<int>(i)), at, sizes[i]);
  void* mExposed = s.reg(exposed.data(), exposed.size(), rule);
  void* mLanded = s.reg(landed.data(), landed.size(), rule);
  c.barrier("exposed");
  for (int peer = 0; peer < n; peer++) {
    std::vector<void*> requests;
    at = 0;
    for (size_t i = 0; i < sizes.size(); at += sizes[i] + 5, i++) {
      requests.push_back(s.get(0, at, mExposed, sizes[i],
                               regionSize * static_cast<size_t>(peer) + at, mLanded, peer,
                               format("%zu B from rank %d", sizes[i], peer), rule));
    }
    for (void* r : requests) s.wait(r, format("a get from rank %d", peer), rule);
  }
  s.flush(0, mLanded, me, "the landed region, after the gets", rule);
  for (int peer = 0; peer < n; peer++) {
    at = 0;
    for (size_t i = 0; i < sizes.size(); at += sizes[i] + 5, i++) {
      size_t where = regionSize * static_cast<size_t>(peer) + at;
      size_t bad = landed.verify(seedOf(peer, peer, static_cast<int>(i)), where, sizes[i]);
      CONF_EXPECT(bad == Buffer::kMismatch, rule,
                  "the %zu B get from rank %d differs at byte %zu after test() and iflush",
                  sizes[i], peer, bad - where);
    }
  }
  c.barrier("done");
}

// 32 x maxRecvs puts outstanding to one peer on one context before the
// first test(): NCCL's proxy queue holds that many (gin_host_proxy.cc,
// rma_proxy.cc), and a NULL request is an internal error there.
void requestsReturned(Ctx& c) {
  Rule rule = Rule::RmaRequestsReturned;
  RmaSession s(c, 1, rule);
  const size_t count = 32 * static_cast<size_t>(std::max(1, s.props().maxRecvs));
  constexpr size_t kEach = 64;
  Buffer region(count * kEach);
  region.clear(0);
  std::vector<uint64_t> signals(kSignalWords, 0);
  void* mRegion = s.reg(region.data(), region.size(), rule);
  void* mSignals = s.reg(signals.data(), signals.size() * 8, rule);
  c.barrier("registered");
  if (c.rank() == 0) {
    std::vector<void*> requests;
    for (size_t i = 0; i < count; i++) {
      region.fill(seedOf(0, 1, static_cast<int>(i)), i * kEach, kEach);
      requests.push_back(s.put(0, i * kEach, mRegion, kEach, i * kEach, mRegion, 1,
                               format("put %zu of %zu, none tested yet", i + 1, count), rule));
    }
    for (void* r : requests) s.wait(r, "one of the outstanding puts", rule);
    s.signal(0, 1, 0, mSignals, "the signal after them", rule);
  } else if (c.rank() == 1) {
    s.awaitSignal(&signals[0], 1, "the signal after the outstanding puts", rule);
    for (size_t i = 0; i < count; i++) {
      size_t bad = region.verify(seedOf(0, 1, static_cast<int>(i)), i * kEach, kEach);
      CONF_EXPECT(bad == Buffer::kMismatch, rule, "outstanding put %zu of %zu did not land", i + 1,
                  count);
    }
  }
  c.barrier("done");
}

// test() done on a put = the source may be reused (nccl_device/gin.h; the
// proxy advances its queue on it): rank 0 overwrites the source at once and
// rank 1 must still get the bytes of the put.
void localCompletion(Ctx& c) {
  Rule rule = Rule::RmaLocalCompletion;
  const std::vector<size_t> sizes = {8, 4096, 256 * 1024, 4 << 20};
  RmaSession s(c, 1, rule);
  size_t total = 0;
  for (size_t size : sizes) total += size;
  Buffer source(sizes.back());
  Buffer target(total);
  target.clear(0);
  std::vector<uint64_t> signals(kSignalWords, 0);
  void* mSource = s.reg(source.data(), source.size(), rule);
  void* mTarget = s.reg(target.data(), target.size(), rule);
  void* mSignals = s.reg(signals.data(), signals.size() * 8, rule);
  c.barrier("registered");
  if (c.rank() == 0) {
    size_t at = 0;
    for (size_t i = 0; i < sizes.size(); at += sizes[i], i++) {
      source.fill(seedOf(0, 1, static_cast<int>(i)), 0, sizes[i]);
      s.wait(s.put(0, 0, mSource, sizes[i], at, mTarget, 1, format("%zu B", sizes[i]), rule),
             format("the %zu B put", sizes[i]), rule);
      source.clear(0xA5, 0, sizes[i]);  // reused the moment test() said done
    }
    s.signal(0, 1, 0, mSignals, "the signal after the puts", rule);
  } else if (c.rank() == 1) {
    s.awaitSignal(&signals[0], 1, "the signal after the puts", rule);
    size_t at = 0;
    for (size_t i = 0; i < sizes.size(); at += sizes[i], i++) {
      size_t bad = target.verify(seedOf(0, 1, static_cast<int>(i)), at, sizes[i]);
      CONF_EXPECT(bad == Buffer::kMismatch, rule,
                  "the %zu B put carried bytes written to its source after test() said done "
                  "(byte %zu differs)",
                  sizes[i], bad - at);
    }
  }
  c.barrier("done");
}

}  // namespace

void addRmaScenarios(std::vector<Scenario>& out) {
  auto rma = [&](const char* name, Rule rule, int ranks, void (*run)(Ctx&), const char* summary) {
    out.push_back(rmaScenario(name, rule, ranks, run, summary));
  };
  rma("TableComplete", Rule::RmaTableComplete, 1, tableComplete,
      "ncclRmaPlugin_v14 members, one name across the RMA and GIN tables, GIN_PROXY devices, "
      "power-of-two maxRecvs");
  rma("ConnectCollective", Rule::RmaConnectCollective, 4, connectCollective,
      "4 ranks, two collComms at once, registrations of different sizes per rank");
  Scenario eight =
      rmaScenario("EightRanks", Rule::RmaConnectCollective, 8, eightRanks,
                  "8 ranks connect at once; each puts 4 KiB and a signal to every rank");
  eight.minDeadlineSec = 30;  // eight processes on a small CI machine
  out.push_back(eight);
  rma("PutsLand", Rule::RmaPutsLand, 3, putsLand,
      "0..8 B, 4 KiB and 64 KiB to every rank and itself, at odd offsets, nothing outside");
  rma("AsymmetricWindows", Rule::RmaPutsLand, 3, asymmetricWindows,
      "windows of 256, 512 and 768 KiB: 64 KiB to the far end of every rank's, past the "
      "sender's own size");
  rma("SignalsExact", Rule::RmaSignalsExact, 4, signalsExact,
      "INC and ADD from 4 ranks on 2 contexts, exact sums, ADDs that wrap at 2^64");
  rma("StrongSignalOrdering", Rule::RmaStrongSignalOrdering, 2, strongSignalOrdering,
      "1 MiB put then a strong signal, and 1 MiB with a weak signal: payload visible first");
  rma("GetAndFlush", Rule::RmaGetAndFlush, 2, getAndFlush,
      "1 B to 1 MiB from the peer and from itself, then iflush");
  rma("RequestsReturned", Rule::RmaRequestsReturned, 2, requestsReturned,
      "32 x maxRecvs puts outstanding to one peer before the first test()");
  rma("LocalCompletion", Rule::RmaLocalCompletion, 2, localCompletion,
      "the source overwritten the moment test() says done: the target has the put's bytes");
}

}  // namespace conformance
