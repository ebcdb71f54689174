// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the bookkeeping behind the per-call checks. It knows every
// comm, mhandle and request the plugin handed out and not yet took back,
// and reports a call that does not fit (docs/check.md lists the checks):
//
//   Ledger ledger(reporter, /*trackConsumed=*/true);
//   auto comm = ledger.beforePost(sendComm, PostKind::Send, 1, &mhandle, "isend");
//   ... forward isend ...
//   ledger.afterPost(comm, PostKind::Send, 1, &size, &tag, &mhandle, request);
//   TestTicket t = ledger.beforeTest(request);
//   ... forward test ...
//   ledger.afterTest(request, res, done, sizes);
//
// Nothing here follows a pointer it is given: handles are keys only, so a
// garbage handle is reported, never dereferenced. Comm state is per comm
// (its own mutex); requests live in a table split into shards, each with
// its own mutex, so threads driving different comms rarely meet.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock.hpp"
#include "ncclnet/abi/net.h"
#include "report.hpp"

namespace ncclnet::check {

enum class CommKind { Listen, Send, Recv };
enum class PostKind { Send, Recv, Flush };

// Buffers of a grouped receive whose sizes and tags are kept (maxRecvs is at
// most 8, rule 16); larger groups are checked on these first buffers only.
constexpr int kKeptBuffers = 8;
// Completed receives remembered for irecvConsumed, per recvComm.
constexpr size_t kKeptCompletions = 1024;

struct CommState {
  CommKind kind = CommKind::Send;
  int dev = -1;
  uint64_t id = 0;
  int limit = 0;  // requests in flight allowed (rule 28)

  std::mutex mutex;  // guards everything below
  struct Mr {
    uint64_t id;
    int uses;           // requests in flight posted with it
    int registrations;  // a plugin with a registration cache may return one
                        // mhandle for several regMr; each has its deregMr
    const char* base;   // where the latest regMr of it began (the trace's offsets)
  };
  std::unordered_map<void*, Mr> mhandles;
  int inFlight = 0;
  // Completed receives not yet consumed: request -> n of each completion.
  // A plugin may hand a request back out before NCCL consumes its previous
  // use (irecvConsumed is optional, so requests are recycled at test), so a
  // pointer may wait here more than once.
  std::unordered_map<void*, std::deque<int>> awaitingConsume;
  std::deque<void*> consumeOrder;  // oldest first, bounded

  std::string describe() const;  // "recvComm #3 (dev 0)"
};

struct RequestRecord {
  std::shared_ptr<CommState> comm;
  uint64_t id = 0;
  PostKind kind = PostKind::Send;
  int n = 0;
  size_t sizes[kKeptBuffers] = {};
  int tags[kKeptBuffers] = {};
  void* mhandles[kKeptBuffers] = {};
  Clock::time_point posted;
  Clock::time_point lastTest;
  uint32_t tests = 0;

  std::string describe(Clock::time_point now) const;
};

// What test() needs to know before the call.
struct TestTicket {
  bool known = false;
  uint64_t id = 0;
  int n = 1;  // buffers whose sizes test writes
  PostKind kind = PostKind::Send;
};

class Ledger {
 public:
  Ledger(Reporter& reporter, bool trackConsumed);
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // ---- comms ----
  uint64_t addListen(void* listenComm, int dev);
  uint64_t addSend(void* sendComm, int dev, int maxRecvs);
  uint64_t addRecv(void* recvComm, void* listenComm);
  // The comm, or nullptr after reporting rule 53 (unknown, or not `kind`).
  std::shared_ptr<CommState> find(void* comm, CommKind kind, const char* call);
  // regMr/deregMr take either end of a connection.
  std::shared_ptr<CommState> findConnected(void* comm, const char* call);
  // Before a close: reports what the comm still holds. Returns its id (0: unknown).
  uint64_t close(void* comm, CommKind kind, const char* call);

  // ---- registrations ----
  // `data`: where the registered memory begins (only compared, never read).
  uint64_t addMr(const std::shared_ptr<CommState>& comm, void* mhandle, const void* data = nullptr);
  // For the trace: the registration's number and `data`'s offset in it; a
  // number 0 when the comm does not hold `mhandle`.
  uint64_t placeInMr(const std::shared_ptr<CommState>& comm, void* mhandle, const void* data,
                     long long* offset) const;
  // Before deregMr: reports an mhandle the comm does not hold (rule 54) or
  // one a request in flight still uses (rule 27). Returns its id (0: unknown).
  uint64_t beforeDereg(const std::shared_ptr<CommState>& comm, void* mhandle);
  void dropMr(const std::shared_ptr<CommState>& comm, void* mhandle);

  // ---- requests ----
  // Before isend/irecv/iflush: the comm (nullptr if unknown), after checking
  // its mhandles (rule 54) and, for sends and receives, the in-flight limit
  // (rule 28).
  std::shared_ptr<CommState> beforePost(void* comm, PostKind kind, int n, void* const* mhandles,
                                        const char* call);
  // After a call that returned a request: records it (reports a request
  // that is still in flight, rule 29). Returns its id, 0 for NULL.
  // `now`: when the call returned (the caller has read a clock already).
  uint64_t afterPost(const std::shared_ptr<CommState>& comm, PostKind kind, int n,
                     const size_t* sizes, const int* tags, void* const* mhandles, void* request,
                     Clock::time_point now = coarseNow());
  TestTicket beforeTest(void* request, Clock::time_point now = coarseNow());
  // sizes: what test wrote, each preset to -1 (nullptr when NCCL passed NULL).
  void afterTest(void* request, ncclResult_t res, int done, const int* sizes);
  // irecvConsumed: a receive of this comm that completed and was not
  // consumed yet, with the same n (rule 37). Returns the comm's number (0:
  // unknown).
  uint64_t consumed(void* recvComm, int n, void* request);

  // Requests that test() reported done (or failed), and the test() calls
  // they took, the last included: what a run's polling cost is made of
  // (docs/performance.md, the checker's cost inside NCCL).
  struct TestTally {
    uint64_t completed = 0;
    uint64_t tests = 0;
  };
  TestTally testTally() const;

  // The most requests (flushes aside) one comm of each kind held in flight
  // at once during the run: what NCCL really keeps in flight, beside the
  // count rule 28 promises it (docs/contract.md).
  struct PeakInFlight {
    int send = 0;
    int recv = 0;
  };
  PeakInFlight peakInFlight() const;

  // ---- for the watchdog ----
  struct Outstanding {
    double ageSec;
    uint64_t requestId;  // orders requests posted within one clock tick
    std::string text;    // comm | request
  };
  std::vector<Outstanding> outstanding(Clock::time_point now) const;
  double oldestAgeSec(Clock::time_point now) const;

 private:
  struct CommShard {
    mutable std::mutex mutex;
    std::unordered_map<void*, std::shared_ptr<CommState>> comms;
  };
  struct RequestShard {
    mutable std::mutex mutex;
    std::unordered_map<void*, RequestRecord> requests;
    TestTally tally;
  };
  static constexpr size_t kShards = 64;
  static size_t shardOf(const void* p);

  uint64_t addComm(void* comm, CommKind kind, int dev, int limit);
  std::shared_ptr<CommState> lookup(void* comm) const;
  void release(const RequestRecord& r);                 // in-flight count and mhandle uses
  static void forgetOldestCompletion(CommState& comm);  // comm.mutex held
  void report(const CheckRule& rule, const CommState* comm, const RequestRecord* request,
              const std::string& what, Party party = Party::Plugin);

  Reporter& reporter_;
  const bool trackConsumed_;
  std::atomic<uint64_t> nextCommId_{1};
  std::atomic<uint64_t> nextRequestId_{1};
  std::atomic<uint64_t> nextMrId_{1};
  std::atomic<int> peakSend_{0};
  std::atomic<int> peakRecv_{0};
  CommShard commShards_[kShards];
  RequestShard requestShards_[kShards];
};

const char* commKindName(CommKind kind);
const char* postKindName(PostKind kind);

}  // namespace ncclnet::check
