// SPDX-License-Identifier: Apache-2.0
// sdk-socket's RMA / GIN-proxy tables, driven through their exported C
// tables by 2 and 4 ranks in separate processes over loopback: the rules of
// NCCL's proxy contract (docs/gin-rma.md) that NCCL breaks without.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "ncclnet/abi/net.h"
#include "ncclnet/cuda_driver.hpp"
#include "ncclnet/testing/byte_pattern.hpp"
#include "ncclnet/testing/deadline.hpp"
#include "ncclnet/testing/log_lines.hpp"
#include "rma_ranks.hpp"

namespace ncclnet::socket::testing {
namespace {

using ::ncclnet::testing::checkPattern;
using ::ncclnet::testing::Deadline;
using ::ncclnet::testing::fillPattern;

constexpr double kWaitS = 15;

// The mesh of comm `c` through ncclRmaPlugin_v14, with `nContexts` contexts.
struct Mesh {
  const ncclRma_v14_t* rma = nullptr;
  void* comm = nullptr;
  void* ctx = nullptr;
  int maxRecvs = 0;

  ncclResult_t open(RankEnv& env, int c = 0, int nContexts = 1) {
    rma = env.rma;
    ncclNetProperties_v12_t props{};
    ncclResult_t res = rma->getProperties(0, &props);
    if (res != ncclSuccess) return res;
    maxRecvs = props.maxRecvs;
    std::vector<void*> handles(env.nranks);
    for (int r = 0; r < env.nranks; r++) handles[r] = env.handles[c].data() + r * kRankHandleBytes;
    res = rma->connect(env.ctx, handles.data(), env.nranks, env.rank, env.listens[c], &comm);
    if (res != ncclSuccess) return res;
    ncclRmaConfig_v14_t config{};
    config.nContexts = nContexts;
    config.rankStride = 1;
    return rma->createContext(comm, &config, &ctx);
  }
  ncclResult_t close() {
    ncclResult_t a = rma->destroyContext(ctx);
    ncclResult_t b = rma->closeColl(comm);
    return a != ncclSuccess ? a : b;
  }
  void* reg(void* data, size_t size, int type = NCCL_PTR_HOST) {
    void* mh = nullptr;
    return rma->regMrSym(comm, data, size, type, 0, &mh) == ncclSuccess ? mh : nullptr;
  }
  // Tests `request` until done; an error or the deadline: not ncclSuccess.
  ncclResult_t wait(void* request) {
    Deadline deadline(kWaitS);
    for (;;) {
      int done = 0;
      ncclResult_t res = rma->test(comm, request, &done);
      if (res != ncclSuccess || done) return res;
      if (deadline.expired()) return ncclInternalError;
    }
  }
  ncclResult_t waitAll(std::vector<void*>& requests) {
    for (void* r : requests) {
      ncclResult_t res = wait(r);
      if (res != ncclSuccess) return res;
    }
    requests.clear();
    return ncclSuccess;
  }
  ncclResult_t signal(int context, void* signalMh, uint64_t offset, uint32_t rank, uint32_t op,
                      uint64_t value, void** request) {
    return rma->iputSignal(ctx, context, 0, nullptr, 0, 0, nullptr, rank, offset, signalMh, value,
                           op, true, request);
  }
};

// Waits until the 64-bit word reaches `expected` (set by remote signals).
bool waitWord(const uint64_t* word, uint64_t expected) {
  Deadline deadline(kWaitS);
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < expected) {
    if (deadline.expired()) return false;
    std::this_thread::yield();
  }
  return true;
}

uint64_t seedOf(int from, int to, size_t size) {
  return from * 1000003u + to * 7919u + size;
}

// Puts of 0, 1..8 (unaligned), 4 KiB and 4 MiB bytes from every rank to
// every rank, itself included; a strong signal after each round says the
// bytes are there; the bytes around each landing spot stay untouched.
int putCorrectness(RankEnv& env) {
  Mesh m;
  RANK_OK(env, m.open(env));
  const size_t kMax = 4 << 20, kGuard = 16, kSlot = kMax + 2 * kGuard;
  std::vector<uint8_t> src(kMax + 8);
  std::vector<uint8_t> dst(kSlot * env.nranks, 0xee);
  uint64_t word = 0;
  void* srcMh = m.reg(src.data(), src.size());
  void* sigMh = m.reg(&word, sizeof(word));
  RANK_CHECK(env, srcMh && sigMh);
  const size_t sizes[] = {0, 1, 2, 3, 5, 7, 8, 4096, kMax};
  uint64_t round = 0;
  for (size_t size : sizes) {
    round++;
    // A registration per round: peers may put before this rank has
    // registered it (the target waits for it), and its deregistration
    // orders this round's reads before the next round's writes for
    // ThreadSanitizer, which cannot see the barrier between processes.
    void* dstMh = m.reg(dst.data(), dst.size());
    RANK_CHECK(env, dstMh != nullptr);
    std::vector<void*> reqs;
    for (int t = 0; t < env.nranks; t++) {
      const uint64_t srcOff = 3;  // unaligned on both ends
      fillPattern(src.data() + srcOff, size, seedOf(env.rank, t, size));
      void* req = nullptr;
      RANK_OK(env, m.rma->iput(m.ctx, 0, srcOff, srcMh, size, env.rank * kSlot + kGuard + 1, dstMh,
                               t, &req));
      RANK_CHECK(env, req != nullptr);
      RANK_OK(env, m.wait(req));  // the source is reused for the next target
      RANK_OK(env, m.signal(0, sigMh, 0, t, NCCL_GIN_SIGNAL_OP_INC, 0, &req));
      reqs.push_back(req);
    }
    RANK_OK(env, m.waitAll(reqs));
    RANK_CHECK(env, waitWord(&word, round * env.nranks));
    for (int from = 0; from < env.nranks; from++) {
      const uint8_t* slot = dst.data() + from * kSlot;
      std::string bad = checkPattern(slot + kGuard + 1, size, seedOf(from, env.rank, size));
      if (!bad.empty()) std::fprintf(stderr, "rank %d from %d: %s\n", env.rank, from, bad.c_str());
      RANK_CHECK(env, bad.empty());
      for (size_t i = 0; i <= kGuard; i++) RANK_CHECK(env, slot[i] == 0xee);
      RANK_CHECK(env, slot[kGuard + 1 + size] == 0xee);
    }
    RANK_OK(env, m.rma->deregMrSym(m.comm, dstMh));
    RANK_CHECK(env, env.barrier());
  }
  RANK_CHECK(env, word == round * env.nranks);
  RANK_OK(env, m.rma->deregMrSym(m.comm, srcMh));
  RANK_OK(env, m.rma->deregMrSym(m.comm, sigMh));
  RANK_CHECK(env, env.barrier());
  RANK_OK(env, m.close());
  return 0;
}

TEST(SocketRma, PutCorrectnessTwoRanks) {
  EXPECT_TRUE(runRanks({.nranks = 2}, putCorrectness));
}
TEST(SocketRma, PutCorrectnessFourRanks) {
  EXPECT_TRUE(runRanks({.nranks = 4}, putCorrectness));
}

// Every rank INCs (with a value NCCL may leave at anything) and ADDs onto
// one word of every rank, 32 * maxRecvs requests in flight per (context,
// peer) and nranks times that per context: the sum is exact.
int signalsExact(RankEnv& env) {
  Mesh m;
  RANK_OK(env, m.open(env, 0, 2));
  uint64_t words[2] = {0, 0};
  void* sigMh = m.reg(words, sizeof(words));
  RANK_CHECK(env, sigMh != nullptr);
  RANK_CHECK(env, m.maxRecvs >= 1 && (m.maxRecvs & (m.maxRecvs - 1)) == 0);
  const int queue = 32 * m.maxRecvs;  // NCCL's per-(context, peer) depth
  const int kRounds = 3;
  const uint64_t kAdd = 1000003;
  std::vector<void*> reqs;
  for (int round = 0; round < kRounds; round++) {
    for (int i = 0; i < queue; i++) {
      for (int t = 0; t < env.nranks; t++) {
        void* req = nullptr;
        int context = i % 2;
        uint32_t op = (i % 3 == 0) ? NCCL_GIN_SIGNAL_OP_INC : NCCL_GIN_SIGNAL_OP_ADD;
        RANK_OK(env,
                m.signal(context, sigMh, 8, t, op, op == NCCL_GIN_SIGNAL_OP_INC ? 77 : kAdd, &req));
        RANK_CHECK(env, req != nullptr);
        reqs.push_back(req);
      }
    }
    RANK_OK(env, m.waitAll(reqs));  // all queue * nranks were outstanding at once
  }
  uint64_t incs = 0, adds = 0;
  for (int i = 0; i < queue; i++) (i % 3 == 0 ? incs : adds)++;
  const uint64_t expected = uint64_t(env.nranks) * kRounds * (incs + adds * kAdd);
  RANK_CHECK(env, waitWord(&words[1], expected));
  RANK_CHECK(env, env.barrier());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  RANK_CHECK(env, words[1] == expected);
  RANK_CHECK(env, words[0] == 0);
  RANK_OK(env, m.rma->deregMrSym(m.comm, sigMh));
  RANK_CHECK(env, env.barrier());
  RANK_OK(env, m.close());
  return 0;
}

TEST(SocketRma, SignalsAreExactTwoRanks) {
  EXPECT_TRUE(runRanks({.nranks = 2}, signalsExact));
}
TEST(SocketRma, SignalsAreExactFourRanks) {
  EXPECT_TRUE(runRanks({.nranks = 4}, signalsExact));
}

// A large put then a small strong putSignal on the same context: once the
// signal is seen, the large payload is there in full (ring: rank r to r+1).
int orderedSignal(RankEnv& env) {
  Mesh m;
  RANK_OK(env, m.open(env, 0, 2));
  const size_t kBig = 4 << 20;
  std::vector<uint8_t> src(kBig), dst(kBig);
  uint64_t small = 0, word = 0, tag = 0;
  void* srcMh = m.reg(src.data(), src.size());
  void* smallMh = m.reg(&small, sizeof(small));
  void* sigMh = m.reg(&word, sizeof(word));
  RANK_CHECK(env, srcMh && smallMh && sigMh);
  const int to = (env.rank + 1) % env.nranks;
  const int from = (env.rank + env.nranks - 1) % env.nranks;
  const int kRounds = 4;
  for (int round = 1; round <= kRounds; round++) {
    int context = round % 2;
    // Registered per round, as in putCorrectness: the deregistration
    // orders this round's reads before the next round's writes.
    void* dstMh = m.reg(dst.data(), dst.size());
    void* tagMh = m.reg(&tag, sizeof(tag));
    RANK_CHECK(env, dstMh && tagMh);
    fillPattern(src.data(), kBig, seedOf(env.rank, round, kBig));
    small = round;
    void* big = nullptr;
    void* sig = nullptr;
    RANK_OK(env, m.rma->iput(m.ctx, context, 0, srcMh, kBig, 0, dstMh, to, &big));
    RANK_OK(env, m.rma->iputSignal(m.ctx, context, 0, smallMh, sizeof(small), 0, tagMh, to, 0,
                                   sigMh, 1, NCCL_GIN_SIGNAL_OP_ADD, true, &sig));
    RANK_CHECK(env, waitWord(&word, round));
    // The signal is there: so are the small payload and, before it, the big one.
    RANK_CHECK(env, tag == static_cast<uint64_t>(round));
    std::string bad = checkPattern(dst.data(), kBig, seedOf(from, round, kBig));
    if (!bad.empty()) std::fprintf(stderr, "rank %d round %d: %s\n", env.rank, round, bad.c_str());
    RANK_CHECK(env, bad.empty());
    RANK_OK(env, m.wait(big));
    RANK_OK(env, m.wait(sig));
    RANK_OK(env, m.rma->deregMrSym(m.comm, dstMh));
    RANK_OK(env, m.rma->deregMrSym(m.comm, tagMh));
    RANK_CHECK(env, env.barrier());
  }
  for (void* mh : {srcMh, smallMh, sigMh}) RANK_OK(env, m.rma->deregMrSym(m.comm, mh));
  RANK_CHECK(env, env.barrier());
  RANK_OK(env, m.close());
  return 0;
}

TEST(SocketRma, StrongSignalAfterLargePutTwoRanks) {
  EXPECT_TRUE(runRanks({.nranks = 2}, orderedSignal));
}
TEST(SocketRma, StrongSignalAfterLargePutFourRanks) {
  EXPECT_TRUE(runRanks({.nranks = 4}, orderedSignal));
}

// Gets from every rank (itself included) land in the local region; iflush
// to the rank itself then completes, and says NULL once nothing is
// outstanding.
int getAndFlush(RankEnv& env) {
  Mesh m;
  RANK_OK(env, m.open(env));
  const size_t kSize = (1 << 20) + 3;
  std::vector<uint8_t> exposed(kSize + 5), landing(kSize * env.nranks, 0xee);
  fillPattern(exposed.data() + 5, kSize, seedOf(env.rank, 0, kSize));
  void* exposedMh = m.reg(exposed.data(), exposed.size());
  void* landingMh = m.reg(landing.data(), landing.size());
  RANK_CHECK(env, exposedMh && landingMh);
  RANK_CHECK(env, env.barrier());  // every rank's pattern is in place
  const size_t sizes[] = {0, 1, 4097, kSize};
  for (size_t size : sizes) {
    std::vector<void*> gets;
    for (int t = 0; t < env.nranks; t++) {
      void* req = nullptr;
      RANK_OK(env, m.rma->iget(m.ctx, 0, 5, exposedMh, size, t * kSize, landingMh, t, &req));
      RANK_CHECK(env, req != nullptr);
      gets.push_back(req);
    }
    void* flush = nullptr;
    RANK_OK(env, m.rma->iflush(m.ctx, 0, landingMh, env.rank, &flush));
    if (flush != nullptr) RANK_OK(env, m.wait(flush));
    // The flush covered every get: the data is in place before testing them.
    for (int t = 0; t < env.nranks; t++) {
      std::string bad = checkPattern(landing.data() + t * kSize, size, seedOf(t, 0, kSize));
      if (!bad.empty()) std::fprintf(stderr, "rank %d get from %d: %s\n", env.rank, t, bad.c_str());
      RANK_CHECK(env, bad.empty());
    }
    RANK_OK(env, m.waitAll(gets));
    RANK_OK(env, m.rma->iflush(m.ctx, 0, landingMh, env.rank, &flush));
    RANK_CHECK(env, flush == nullptr);
  }
  RANK_CHECK(env, env.barrier());
  RANK_OK(env, m.rma->deregMrSym(m.comm, exposedMh));
  RANK_OK(env, m.rma->deregMrSym(m.comm, landingMh));
  RANK_OK(env, m.close());
  return 0;
}

TEST(SocketRma, GetAndFlushTwoRanks) {
  EXPECT_TRUE(runRanks({.nranks = 2}, getAndFlush));
}
TEST(SocketRma, GetAndFlushFourRanks) {
  EXPECT_TRUE(runRanks({.nranks = 4}, getAndFlush));
}

// Registration sizes differ per rank; offsets are relative to the target's
// base, and the target checks them: a put past the end of rank 1's region
// writes nothing there and fails rank 0's comm (queryLastError), with one
// WARN line on each side.
int boundsPerRank(RankEnv& env) {
  Mesh m;
  RANK_OK(env, m.open(env));
  auto sizeOf = [](int rank) { return size_t(rank + 1) * 4096; };
  std::vector<uint8_t> src(64, 0x5a), dst(sizeOf(env.rank) + 64, 0xee);
  uint64_t word = 0;
  void* srcMh = m.reg(src.data(), src.size());
  void* dstMh = m.reg(dst.data(), sizeOf(env.rank));  // the 64 bytes after: outside
  void* sigMh = m.reg(&word, sizeof(word));
  RANK_CHECK(env, srcMh && dstMh && sigMh);
  // 16 bytes per sender at the end of every target's own size (rank 0's
  // the very last): in bounds everywhere.
  std::vector<void*> reqs;
  for (int t = 0; t < env.nranks; t++) {
    void* req = nullptr;
    RANK_OK(env, m.rma->iputSignal(m.ctx, 0, 0, srcMh, 16, sizeOf(t) - 16 * (env.rank + 1), dstMh,
                                   t, 0, sigMh, 1, NCCL_GIN_SIGNAL_OP_INC, true, &req));
    reqs.push_back(req);
  }
  RANK_OK(env, m.waitAll(reqs));
  RANK_CHECK(env, waitWord(&word, env.nranks));
  for (size_t i = sizeOf(env.rank) - 16 * env.nranks; i < sizeOf(env.rank); i++) {
    RANK_CHECK(env, dst[i] == 0x5a);
  }
  size_t mark = ::ncclnet::testing::logMark();  // before a peer can act
  RANK_CHECK(env, env.barrier());
  if (env.rank == 0) {
    // 8 bytes inside rank 1's region, 8 past it: refused whole at rank 1.
    void* req = nullptr;
    RANK_OK(env, m.rma->iputSignal(m.ctx, 0, 0, srcMh, 16, sizeOf(1) - 8, dstMh, 1, 0, sigMh, 1,
                                   NCCL_GIN_SIGNAL_OP_INC, true, &req));
    Deadline deadline(kWaitS);
    bool hasError = false;
    while (!hasError && !deadline.expired()) {
      RANK_OK(env, m.rma->queryLastError(m.ctx, &hasError));
    }
    RANK_CHECK(env, hasError);
    // The comm is failed: later calls say so.
    void* later = nullptr;
    RANK_CHECK(env, m.rma->iput(m.ctx, 0, 0, srcMh, 1, 0, dstMh, 1, &later) != ncclSuccess);
  }
  // Locally, an out-of-range source is refused before anything moves.
  if (env.rank == 1) {
    void* req = nullptr;
    RANK_CHECK(env, m.rma->iput(m.ctx, 0, 60, srcMh, 8, 0, dstMh, 0, &req) == ncclInvalidArgument);
  }
  RANK_CHECK(env, env.barrier());
  if (env.rank == 1) {
    for (size_t i = sizeOf(1) - 16; i < sizeOf(1); i++) RANK_CHECK(env, dst[i] == 0x5a);
    for (size_t i = sizeOf(1); i < dst.size(); i++) RANK_CHECK(env, dst[i] == 0xee);
    RANK_CHECK(env, word == static_cast<uint64_t>(env.nranks));  // the refused signal never landed
  }
  RANK_CHECK(env, env.barrier());
  RANK_OK(env, m.rma->deregMrSym(m.comm, srcMh));
  RANK_OK(env, m.rma->deregMrSym(m.comm, dstMh));
  RANK_OK(env, m.rma->deregMrSym(m.comm, sigMh));
  RANK_OK(env, m.close());
  // Counted once closeColl has joined the thread that logs: rank 0 the
  // refusal it got, rank 1 the one it made and the local range it refused.
  const size_t warnings = ::ncclnet::testing::warningsSince(mark).size();
  if (env.rank == 0) RANK_CHECK(env, warnings == 1);
  if (env.rank == 1) RANK_CHECK(env, warnings == 2);
  return 0;
}

TEST(SocketRma, OffsetsAreCheckedAgainstEachTargetsSize) {
  EXPECT_TRUE(runRanks({.nranks = 4}, boundsPerRank));
}

// A rank that dies: the survivor's requests fail with ncclRemoteError within
// a bound, queryLastError says so, one WARN line, and closeColl returns at
// once.
int peerDeath(RankEnv& env) {
  Mesh m;
  RANK_OK(env, m.open(env));
  std::vector<uint8_t> buf(1 << 20);
  void* mh = m.reg(buf.data(), buf.size());
  RANK_CHECK(env, mh != nullptr);
  size_t mark = ::ncclnet::testing::logMark();  // before the peer can go
  RANK_CHECK(env, env.barrier());
  if (env.rank == 1) ::_exit(0);  // no closeColl, no goodbye: as a crash
  auto start = std::chrono::steady_clock::now();
  ncclResult_t failure = ncclSuccess;
  Deadline deadline(kWaitS);
  while (failure == ncclSuccess && !deadline.expired()) {
    void* get = nullptr;
    failure = m.rma->iget(m.ctx, 0, 0, mh, buf.size(), 0, mh, 1, &get);
    if (failure == ncclSuccess) failure = m.wait(get);
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RANK_CHECK(env, failure == ncclRemoteError);
  RANK_CHECK(env, took < 5);
  bool hasError = false;
  RANK_OK(env, m.rma->queryLastError(m.ctx, &hasError));
  RANK_CHECK(env, hasError);
  void* later = nullptr;
  RANK_CHECK(env, m.rma->iput(m.ctx, 0, 0, mh, 8, 0, mh, 1, &later) == ncclRemoteError);
  start = std::chrono::steady_clock::now();
  RANK_OK(env, m.close());
  took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RANK_CHECK(env, took < 2);
  // Counted once closeColl has joined the thread that logs it.
  RANK_CHECK(env, ::ncclnet::testing::warningsSince(mark).size() == 1);
  return 0;
}

TEST(SocketRma, PeerDeathFailsRequestsWithinBound) {
  EXPECT_TRUE(runRanks({.nranks = 2}, peerDeath));
}

// closeColl never waits for a peer's progress beyond its bound: rank 1 is
// stopped (SIGSTOP) with megabytes queued towards it, and rank 0's
// closeColl still returns within 2 s (aws-ofi-nccl PRs #1275/#1281).
int closeBounded(RankEnv& env) {
  Mesh m;
  RANK_OK(env, m.open(env));
  const size_t kBig = 4 << 20;
  std::vector<uint8_t> buf(kBig);
  uint64_t pid = 0, word = 0;
  void* bufMh = m.reg(buf.data(), buf.size());
  void* pidMh = m.reg(&pid, sizeof(pid));
  void* sigMh = m.reg(&word, sizeof(word));
  RANK_CHECK(env, bufMh && pidMh && sigMh);
  if (env.rank == 1) {
    pid = static_cast<uint64_t>(::getpid());
    void* req = nullptr;  // rank 0 learns whom to wake
    RANK_OK(env, m.rma->iputSignal(m.ctx, 0, 0, pidMh, sizeof(pid), 0, pidMh, 0, 0, sigMh, 1,
                                   NCCL_GIN_SIGNAL_OP_INC, true, &req));
    RANK_OK(env, m.wait(req));
    ::raise(SIGSTOP);  // every thread stops: nothing drains rank 0's stream
    RANK_CHECK(env, env.barrier());
  } else {
    RANK_CHECK(env, waitWord(&word, 1));
    std::vector<void*> reqs(8);
    for (void*& req : reqs) {
      RANK_OK(env, m.rma->iput(m.ctx, 0, 0, bufMh, kBig, 0, bufMh, 1, &req));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int done = 0;
    RANK_OK(env, m.rma->test(m.comm, reqs.back(), &done));
    RANK_CHECK(env, done == 0);  // 32 MiB cannot all sit in socket buffers
    auto start = std::chrono::steady_clock::now();
    RANK_OK(env, m.close());
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::kill(static_cast<pid_t>(pid), SIGCONT);
    RANK_CHECK(env, took < 2);
    RANK_CHECK(env, env.barrier());
    return 0;
  }
  // Rank 1, woken: its comm may have seen the stream end mid-frame.
  for (void* mh : {bufMh, pidMh, sigMh}) RANK_OK(env, m.rma->deregMrSym(m.comm, mh));
  RANK_OK(env, m.close());
  return 0;
}

TEST(SocketRma, CloseDoesNotWaitForAStoppedPeer) {
  EXPECT_TRUE(runRanks({.nranks = 2}, closeBounded));
}

// Two comms driven by two threads at once (NCCL's GIN and RMA progress
// threads), while a third registers and deregisters other regions on the
// first comm.
int twoThreads(RankEnv& env) {
  Mesh meshes[2];
  RANK_OK(env, meshes[0].open(env, 0));
  RANK_OK(env, meshes[1].open(env, 1));
  const size_t kSize = 64 << 10;
  struct Buffers {
    std::vector<uint8_t> src, dst;
    uint64_t word = 0;
    void *srcMh, *dstMh, *sigMh;
  } bufs[2];
  for (int c = 0; c < 2; c++) {
    bufs[c].src.resize(kSize);
    bufs[c].dst.resize(kSize * env.nranks);
    fillPattern(bufs[c].src.data(), kSize, seedOf(env.rank, c, kSize));
    bufs[c].srcMh = meshes[c].reg(bufs[c].src.data(), kSize);
    bufs[c].dstMh = meshes[c].reg(bufs[c].dst.data(), bufs[c].dst.size());
    bufs[c].sigMh = meshes[c].reg(&bufs[c].word, 8);
    RANK_CHECK(env, bufs[c].srcMh && bufs[c].dstMh && bufs[c].sigMh);
  }
  const int kRounds = 50;
  std::atomic<int> failures{0};
  auto drive = [&](int c) {
    Mesh& m = meshes[c];
    for (int round = 0; round < kRounds; round++) {
      std::vector<void*> reqs;
      for (int t = 0; t < env.nranks; t++) {
        void* req = nullptr;
        if (m.rma->iputSignal(m.ctx, 0, 0, bufs[c].srcMh, kSize, env.rank * kSize, bufs[c].dstMh, t,
                              0, bufs[c].sigMh, 1, NCCL_GIN_SIGNAL_OP_INC, true,
                              &req) != ncclSuccess) {
          failures++;
          return;
        }
        reqs.push_back(req);
      }
      if (m.waitAll(reqs) != ncclSuccess) failures++;
    }
  };
  std::vector<uint8_t> spare(4096);
  auto registrar = [&] {  // the same sequence on every rank: collective order holds
    for (int i = 0; i < 200; i++) {
      void* mh = meshes[0].reg(spare.data(), spare.size() - (i % 7));
      if (mh == nullptr || meshes[0].rma->deregMrSym(meshes[0].comm, mh) != ncclSuccess) {
        failures++;
      }
    }
  };
  std::thread a(drive, 0), b(drive, 1), r(registrar);
  a.join();
  b.join();
  r.join();
  RANK_CHECK(env, failures.load() == 0);
  for (int c = 0; c < 2; c++) {
    RANK_CHECK(env, waitWord(&bufs[c].word, uint64_t(kRounds) * env.nranks));
    for (int from = 0; from < env.nranks; from++) {
      RANK_CHECK(
          env,
          checkPattern(bufs[c].dst.data() + from * kSize, kSize, seedOf(from, c, kSize)).empty());
    }
  }
  RANK_CHECK(env, env.barrier());
  for (int c = 0; c < 2; c++) {
    for (void* mh : {bufs[c].srcMh, bufs[c].dstMh, bufs[c].sigMh}) {
      RANK_OK(env, meshes[c].rma->deregMrSym(meshes[c].comm, mh));
    }
    RANK_OK(env, meshes[c].close());
  }
  return 0;
}

TEST(SocketRma, TwoCommsFromTwoThreadsWithRegistrationBeside) {
  EXPECT_TRUE(runRanks({.nranks = 2, .ncomms = 2}, twoThreads));
}

// One rank alone: the RMA table's devices are the net table's, in the same
// order with the same properties (NCCL 2.28 hands GIN the net device
// indices), and a mesh of one carries puts, signals and gets to itself.
int aloneWithTheNetTable(RankEnv& env) {
  const auto* net = static_cast<const ncclNet_v12_t*>(::dlsym(env.library, "ncclNetPlugin_v12"));
  RANK_CHECK(env, net != nullptr);
  void* netCtx = nullptr;
  RANK_OK(env, net->init(&netCtx, 0x5eed, nullptr, ::ncclnet::testing::testLogger, nullptr));
  int netDevs = 0, rmaDevs = 0;
  RANK_OK(env, net->devices(&netDevs));
  RANK_OK(env, env.rma->devices(&rmaDevs));
  RANK_CHECK(env, netDevs == rmaDevs);
  for (int d = 0; d < netDevs; d++) {
    ncclNetProperties_v12_t a{}, b{};
    RANK_OK(env, net->getProperties(d, &a));
    RANK_OK(env, env.rma->getProperties(d, &b));
    RANK_CHECK(env, std::string(a.name) == b.name);
    RANK_CHECK(env, a.speed == b.speed && a.guid == b.guid);
    RANK_CHECK(env, (a.pciPath == nullptr) == (b.pciPath == nullptr));
    RANK_CHECK(env, b.netDeviceType == NCCL_NET_DEVICE_GIN_PROXY);
    RANK_CHECK(env, b.ptrSupport == NCCL_PTR_HOST);
  }
  RANK_OK(env, net->finalize(netCtx));
  Mesh m;
  RANK_OK(env, m.open(env));
  std::vector<uint8_t> src(100), dst(100, 0);
  uint64_t word = 0;
  fillPattern(src.data(), src.size(), 5);
  void* srcMh = m.reg(src.data(), src.size());
  void* dstMh = m.reg(dst.data(), dst.size());
  void* sigMh = m.reg(&word, sizeof(word));
  RANK_CHECK(env, srcMh && dstMh && sigMh);
  void* req = nullptr;
  RANK_OK(env, m.rma->iputSignal(m.ctx, 0, 0, srcMh, 50, 0, dstMh, 0, 0, sigMh, 1,
                                 NCCL_GIN_SIGNAL_OP_INC, true, &req));
  RANK_OK(env, m.wait(req));
  RANK_CHECK(env, word == 1);  // the rank's own puts land before test says done
  RANK_OK(env, m.rma->iget(m.ctx, 0, 0, srcMh, 50, 50, dstMh, 0, &req));
  RANK_OK(env, m.wait(req));
  void* flush = &req;
  RANK_OK(env, m.rma->iflush(m.ctx, 0, dstMh, 0, &flush));
  RANK_CHECK(env, flush == nullptr);
  RANK_CHECK(env, checkPattern(dst.data(), 50, 5).empty());
  RANK_CHECK(env, checkPattern(dst.data() + 50, 50, 5).empty());
  // A request test() already reported done is gone: testing it again is an
  // error, not a crash.
  int done = 0;
  RANK_CHECK(env, m.rma->test(m.comm, req, &done) == ncclInvalidArgument);
  for (void* mh : {srcMh, dstMh, sigMh}) RANK_OK(env, m.rma->deregMrSym(m.comm, mh));
  RANK_CHECK(env, m.rma->deregMrSym(m.comm, srcMh) == ncclInvalidArgument);
  RANK_OK(env, m.close());
  return 0;
}

TEST(SocketRma, AloneDevicesAreTheNetTablesAndSelfOpsWork) {
  EXPECT_TRUE(runRanks({.nranks = 1}, aloneWithTheNetTable));
}

// NCCL 2.28 drives ncclGinPlugin_v11: no contexts, a ginHandle per
// registration, every signal strong. Properties as NCCL's proxy needs them.
int ginV11(RankEnv& env) {
  const ncclGin_v11_t* gin = env.gin11;
  ncclNetProperties_v11_t props{};
  RANK_OK(env, gin->getProperties(0, &props));
  RANK_CHECK(env, props.netDeviceType == NCCL_NET_DEVICE_GIN_PROXY);
  // CUDA memory exactly where a driver and a device are (GPU hosts, and the
  // CPU stand-in for the driver).
  const bool gpu = ::ncclnet::cuda::Driver::get().available();
  RANK_CHECK(env, props.ptrSupport == (NCCL_PTR_HOST | (gpu ? NCCL_PTR_CUDA : 0)));
  RANK_CHECK(env, props.maxRecvs >= 1 && (props.maxRecvs & (props.maxRecvs - 1)) == 0);
  std::vector<void*> handles(env.nranks);
  for (int r = 0; r < env.nranks; r++) handles[r] = env.handles[0].data() + r * kRankHandleBytes;
  void* comm = nullptr;
  RANK_OK(env, gin->connect(env.ctx, handles.data(), env.nranks, env.rank, env.listens[0], &comm));
  const size_t kSize = 4099;
  std::vector<uint8_t> src(kSize), dst(kSize * env.nranks);
  uint64_t word = 0;
  fillPattern(src.data(), kSize, seedOf(env.rank, 11, kSize));
  void *srcMh, *srcGh, *dstMh, *dstGh, *sigMh, *sigGh;
  RANK_OK(env, gin->regMrSym(comm, src.data(), kSize, NCCL_PTR_HOST, 0, &srcMh, &srcGh));
  RANK_OK(env, gin->regMrSym(comm, dst.data(), dst.size(), NCCL_PTR_HOST, 0, &dstMh, &dstGh));
  RANK_OK(env, gin->regMrSym(comm, &word, 8, NCCL_PTR_HOST, 0, &sigMh, &sigGh));
  std::vector<void*> reqs;
  for (int t = 0; t < env.nranks; t++) {
    void* put = nullptr;
    void* sig = nullptr;
    RANK_OK(env, gin->iput(comm, 0, srcGh, kSize, env.rank * kSize, dstGh, t, &put));
    RANK_OK(env, gin->iputSignal(comm, 0, nullptr, 0, 0, nullptr, t, 0, sigGh, 99,
                                 NCCL_GIN_SIGNAL_OP_INC, &sig));
    reqs.push_back(put);
    reqs.push_back(sig);
  }
  for (void* req : reqs) {
    Deadline deadline(kWaitS);
    int done = 0;
    while (!done) {
      RANK_OK(env, gin->test(comm, req, &done));
      RANK_OK(env, gin->ginProgress(comm));
      RANK_CHECK(env, !deadline.expired());
    }
  }
  RANK_CHECK(env, waitWord(&word, env.nranks));  // INC adds 1, not 99
  for (int from = 0; from < env.nranks; from++) {
    RANK_CHECK(env,
               checkPattern(dst.data() + from * kSize, kSize, seedOf(from, 11, kSize)).empty());
  }
  RANK_CHECK(env, env.barrier());
  RANK_CHECK(env, word == static_cast<uint64_t>(env.nranks));
  for (void* mh : {srcMh, dstMh, sigMh}) RANK_OK(env, gin->deregMrSym(comm, mh));
  RANK_OK(env, gin->closeColl(comm));
  return 0;
}

TEST(SocketRma, GinV11PutAndSignal) {
  EXPECT_TRUE(runRanks({.nranks = 2, .gin11 = true}, ginV11));
}

// GPU memory, as NCCL's GIN proxy registers it (windows and signals are
// CUDA memory: gin_host_proxy.cc ncclGinProxyCreateContext): puts larger
// than the plugin's staging piece from device to device, a signal added in
// device memory after its payload, gets into device memory and a flush.
// Every byte is checked through the driver: the CPU never touches device
// memory (the CPU stand-in for the driver would crash if it did).
int cudaMemory(RankEnv& env) {
  namespace cu = ::ncclnet::cuda;
  const cu::Driver& driver = cu::Driver::get();
  if (!driver.available()) std::fprintf(stderr, "CUDA driver %s\n", driver.whyNot().c_str());
  RANK_CHECK(env, driver.available());
  Mesh m;
  RANK_OK(env, m.open(env));
  ncclNetProperties_v12_t props{};
  RANK_OK(env, m.rma->getProperties(0, &props));
  RANK_CHECK(env, (props.ptrSupport & NCCL_PTR_CUDA) != 0);
  const size_t kSize = (3 << 20) + 5;  // three staging pieces and a bit
  std::string why;
  auto src = cu::DeviceBuffer::allocate(driver, 0, kSize, &why);
  auto dst = cu::DeviceBuffer::allocate(driver, 0, kSize * env.nranks, &why);
  auto landing = cu::DeviceBuffer::allocate(driver, 0, kSize * env.nranks, &why);
  auto signals = cu::DeviceBuffer::allocate(driver, 0, 64, &why);
  if (!why.empty()) std::fprintf(stderr, "rank %d: %s\n", env.rank, why.c_str());
  RANK_CHECK(env, src && dst && landing && signals);
  std::vector<uint8_t> host(kSize * env.nranks);
  fillPattern(host.data(), kSize, seedOf(env.rank, 21, kSize));
  RANK_CHECK(env, src->upload(0, host.data(), kSize, &why));
  RANK_CHECK(env, dst->fill(0xee, &why) && landing->fill(0xee, &why) && signals->fill(0, &why));
  void* srcMh = m.reg(src->data(), kSize, NCCL_PTR_CUDA);
  void* dstMh = m.reg(dst->data(), dst->size(), NCCL_PTR_CUDA);
  void* landingMh = m.reg(landing->data(), landing->size(), NCCL_PTR_CUDA);
  void* sigMh = m.reg(signals->data(), signals->size(), NCCL_PTR_CUDA);
  RANK_CHECK(env, srcMh && dstMh && landingMh && sigMh);
  RANK_CHECK(env, env.barrier());

  // Puts with a signal (ADD 3) to every rank, itself included.
  std::vector<void*> reqs;
  for (int t = 0; t < env.nranks; t++) {
    void* req = nullptr;
    RANK_OK(env, m.rma->iputSignal(m.ctx, 0, 0, srcMh, kSize, env.rank * kSize, dstMh, t, 8, sigMh,
                                   3, NCCL_GIN_SIGNAL_OP_ADD, true, &req));
    RANK_CHECK(env, req != nullptr);
    reqs.push_back(req);
  }
  RANK_OK(env, m.waitAll(reqs));
  const uint64_t expected = 3ull * env.nranks;
  uint64_t word = 0;
  Deadline deadline(kWaitS);
  do {
    RANK_CHECK(env, signals->download(8, &word, sizeof(word), &why));
  } while (word < expected && !deadline.expired());
  RANK_CHECK(env, word == expected);
  // The signal came after its payload: every byte is there now.
  RANK_CHECK(env, dst->download(0, host.data(), dst->size(), &why));
  for (int from = 0; from < env.nranks; from++) {
    std::string bad = checkPattern(host.data() + from * kSize, kSize, seedOf(from, 21, kSize));
    if (!bad.empty())
      std::fprintf(stderr, "rank %d put from %d: %s\n", env.rank, from, bad.c_str());
    RANK_CHECK(env, bad.empty());
  }

  // Gets of every rank's source into device memory, then a flush.
  for (int t = 0; t < env.nranks; t++) {
    void* req = nullptr;
    RANK_OK(env, m.rma->iget(m.ctx, 0, 0, srcMh, kSize, t * kSize, landingMh, t, &req));
    RANK_CHECK(env, req != nullptr);
    reqs.push_back(req);
  }
  void* flush = nullptr;
  RANK_OK(env, m.rma->iflush(m.ctx, 0, landingMh, env.rank, &flush));
  if (flush != nullptr) RANK_OK(env, m.wait(flush));
  RANK_CHECK(env, landing->download(0, host.data(), landing->size(), &why));
  for (int from = 0; from < env.nranks; from++) {
    std::string bad = checkPattern(host.data() + from * kSize, kSize, seedOf(from, 21, kSize));
    if (!bad.empty())
      std::fprintf(stderr, "rank %d get from %d: %s\n", env.rank, from, bad.c_str());
    RANK_CHECK(env, bad.empty());
  }
  RANK_OK(env, m.waitAll(reqs));
  RANK_CHECK(env, env.barrier());
  for (void* mh : {srcMh, dstMh, landingMh, sigMh}) RANK_OK(env, m.rma->deregMrSym(m.comm, mh));
  RANK_OK(env, m.close());
  return 0;
}

// Whether a CUDA driver and device are here, asked in a child: a process
// that initialized CUDA cannot fork ranks that use it.
bool cudaInChild(std::string* why) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const ::ncclnet::cuda::Driver& driver = ::ncclnet::cuda::Driver::get();
    std::string text = driver.whyNot();
    ssize_t n = write(fds[1], text.data(), text.size());
    (void)n;
    _exit(driver.available() ? 0 : 1);
  }
  close(fds[1]);
  char buf[512];
  ssize_t n = read(fds[0], buf, sizeof(buf));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n > 0) why->assign(buf, static_cast<size_t>(n));
  return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void runOnGpu(const RankOptions& options, int (*body)(RankEnv&)) {
  std::string why;
  if (!cudaInChild(&why)) {
    const char* require = std::getenv("NCCLNET_REQUIRE_GPU");
    if (require != nullptr && std::string(require) == "1") {
      FAIL() << "NCCLNET_REQUIRE_GPU=1, but the CUDA driver is " << why;
    }
    GTEST_SKIP() << "no GPU: the CUDA driver is " << why;
  }
  EXPECT_TRUE(runRanks(options, body));
}

TEST(SocketRma, CudaMemoryTwoRanks) {
  runOnGpu({.nranks = 2}, cudaMemory);
}
TEST(SocketRma, CudaMemoryThreeRanks) {
  runOnGpu({.nranks = 3}, cudaMemory);
}

}  // namespace
}  // namespace ncclnet::socket::testing
