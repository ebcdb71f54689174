// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the bookkeeping behind the per-call checks.
#include "ledger.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace ncclnet::check {

namespace {

void raiseTo(std::atomic<int>& peak, int value) {
  int seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string pointerText(const void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

}  // namespace

const char* commKindName(CommKind kind) {
  switch (kind) {
    case CommKind::Listen: return "listenComm";
    case CommKind::Send: return "sendComm";
    case CommKind::Recv: return "recvComm";
  }
  return "comm";
}

const char* postKindName(PostKind kind) {
  switch (kind) {
    case PostKind::Send: return "isend";
    case PostKind::Recv: return "irecv";
    case PostKind::Flush: return "iflush";
  }
  return "request";
}

std::string CommState::describe() const {
  return std::string(commKindName(kind)) + " #" + std::to_string(id) + " (dev " +
         std::to_string(dev) + ")";
}

std::string RequestRecord::describe(Clock::time_point now) const {
  std::string text = std::string(postKindName(kind)) + " #" + std::to_string(id);
  if (kind != PostKind::Flush) {
    text += " [";
    for (int i = 0; i < std::min(n, kKeptBuffers); i++) {
      if (i > 0) text += ", ";
      text += std::to_string(sizes[i]) + " B tag " + std::to_string(tags[i]);
    }
    if (n > kKeptBuffers) text += ", ...";
    text += "]";
  }
  char times[128];
  if (tests == 0) {
    std::snprintf(times, sizeof(times), " posted %.3f s ago, never tested",
                  secondsBetween(posted, now));
  } else {
    std::snprintf(times, sizeof(times), " posted %.3f s ago, tested %u times, last %.3f s ago",
                  secondsBetween(posted, now), tests, secondsBetween(lastTest, now));
  }
  return text + times;
}

Ledger::Ledger(Reporter& reporter, bool trackConsumed)
    : reporter_(reporter), trackConsumed_(trackConsumed) {}

size_t Ledger::shardOf(const void* p) {
  // Fibonacci hashing of the address without its alignment bits.
  uint64_t key = reinterpret_cast<uintptr_t>(p) >> 4;
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 58) % kShards;
}

void Ledger::report(const CheckRule& rule, const CommState* comm, const RequestRecord* request,
                    const std::string& what, Party party) {
  reporter_.violation(rule, comm ? comm->describe() : std::string(),
                      request ? request->describe(coarseNow()) : std::string(), what, party);
}

// ---- comms ---------------------------------------------------------------

uint64_t Ledger::addComm(void* comm, CommKind kind, int dev, int limit) {
  auto state = std::make_shared<CommState>();
  state->kind = kind;
  state->dev = dev;
  state->limit = limit;
  state->id = nextCommId_.fetch_add(1, std::memory_order_relaxed);
  CommShard& shard = commShards_[shardOf(comm)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  shard.comms[comm] = state;  // a closed comm's address may come back
  return state->id;
}

uint64_t Ledger::addListen(void* listenComm, int dev) {
  return addComm(listenComm, CommKind::Listen, dev, 0);
}

uint64_t Ledger::addSend(void* sendComm, int dev, int maxRecvs) {
  return addComm(sendComm, CommKind::Send, dev, NCCL_NET_MAX_REQUESTS * std::max(1, maxRecvs));
}

uint64_t Ledger::addRecv(void* recvComm, void* listenComm) {
  std::shared_ptr<CommState> listen = lookup(listenComm);
  return addComm(recvComm, CommKind::Recv, listen ? listen->dev : -1, NCCL_NET_MAX_REQUESTS);
}

std::shared_ptr<CommState> Ledger::lookup(void* comm) const {
  const CommShard& shard = commShards_[shardOf(comm)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.comms.find(comm);
  return it == shard.comms.end() ? nullptr : it->second;
}

std::shared_ptr<CommState> Ledger::find(void* comm, CommKind kind, const char* call) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (state == nullptr) {
    report(rules::kGarbageHandlesRejected, nullptr, nullptr,
           std::string(call) + " on " + pointerText(comm) + ", which is not an open " +
               commKindName(kind) + " of this plugin (never returned, or closed)",
           Party::Caller);
    return nullptr;
  }
  if (state->kind != kind) {
    report(rules::kGarbageHandlesRejected, state.get(), nullptr,
           std::string(call) + " takes a " + commKindName(kind) + ", got a " +
               commKindName(state->kind),
           Party::Caller);
    return nullptr;
  }
  return state;
}

std::shared_ptr<CommState> Ledger::findConnected(void* comm, const char* call) {
  std::shared_ptr<CommState> state = lookup(comm);
  if (state == nullptr || state->kind == CommKind::Listen) {
    report(rules::kGarbageHandlesRejected, state.get(), nullptr,
           std::string(call) + " on " + pointerText(comm) +
               ", which is not an open sendComm or recvComm of this plugin",
           Party::Caller);
    return nullptr;
  }
  return state;
}

uint64_t Ledger::close(void* comm, CommKind kind, const char* call) {
  // NULL is what a failed connect or accept left, and NCCL's teardown
  // closes it all the same (src/transport/net.cc sendProxyFree,
  // recvProxyFree): no misuse.
  if (comm == nullptr) return 0;
  std::shared_ptr<CommState> state = find(comm, kind, call);
  if (state == nullptr) return 0;
  {
    CommShard& shard = commShards_[shardOf(comm)];
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.comms.erase(comm);
  }
  // Requests still in flight are dropped silently: closing with requests
  // in flight is how NCCL aborts (rule 51).
  for (RequestShard& shard : requestShards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    for (auto it = shard.requests.begin(); it != shard.requests.end();) {
      it = it->second.comm == state ? shard.requests.erase(it) : std::next(it);
    }
  }
  size_t registered;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    registered = state->mhandles.size();
  }
  if (registered > 0) {
    report(rules::kDeregMrReleases, state.get(), nullptr,
           std::string(call) + " with " + std::to_string(registered) +
               " mhandle(s) still registered: NCCL deregisters every buffer before it closes",
           Party::Caller);
  }
  return state->id;
}

// ---- registrations ---------------------------------------------------------

uint64_t Ledger::addMr(const std::shared_ptr<CommState>& comm, void* mhandle, const void* data) {
  std::lock_guard<std::mutex> lock(comm->mutex);
  auto [it, fresh] = comm->mhandles.try_emplace(mhandle, CommState::Mr{0, 0, 0, nullptr});
  if (fresh) it->second.id = nextMrId_.fetch_add(1, std::memory_order_relaxed);
  it->second.registrations++;
  it->second.base = static_cast<const char*>(data);
  return it->second.id;
}

uint64_t Ledger::placeInMr(const std::shared_ptr<CommState>& comm, void* mhandle, const void* data,
                           long long* offset) const {
  *offset = 0;
  if (comm == nullptr) return 0;
  std::lock_guard<std::mutex> lock(comm->mutex);
  auto it = comm->mhandles.find(mhandle);
  if (it == comm->mhandles.end()) return 0;
  // Integers, not pointer arithmetic: the two need not lie in one object.
  *offset = static_cast<long long>(reinterpret_cast<uintptr_t>(data)) -
            static_cast<long long>(reinterpret_cast<uintptr_t>(it->second.base));
  return it->second.id;
}

uint64_t Ledger::beforeDereg(const std::shared_ptr<CommState>& comm, void* mhandle) {
  // The slot of a regMr that failed, which NCCL's teardown deregisters
  // all the same (sendProxyFree, recvProxyFree).
  if (mhandle == nullptr) return 0;
  int uses;
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(comm->mutex);
    auto it = comm->mhandles.find(mhandle);
    if (it == comm->mhandles.end()) {
      uses = -1;
      id = 0;
    } else {
      uses = it->second.uses;
      id = it->second.id;
    }
  }
  if (uses < 0) {
    report(rules::kBadMhandlesRejected, comm.get(), nullptr,
           "deregMr of mhandle " + pointerText(mhandle) +
               ", which regMr did not return on this comm (or it was deregistered)",
           Party::Caller);
  } else if (uses > 0) {
    report(rules::kDeregMrReleases, comm.get(), nullptr,
           "deregMr of mhandle #" + std::to_string(id) + " while " + std::to_string(uses) +
               " request(s) in flight use it",
           Party::Caller);
  }
  return id;
}

void Ledger::dropMr(const std::shared_ptr<CommState>& comm, void* mhandle) {
  std::lock_guard<std::mutex> lock(comm->mutex);
  auto it = comm->mhandles.find(mhandle);
  if (it != comm->mhandles.end() && --it->second.registrations == 0) comm->mhandles.erase(it);
}

// ---- requests --------------------------------------------------------------

std::shared_ptr<CommState> Ledger::beforePost(void* comm, PostKind kind, int n,
                                              void* const* mhandles, const char* call) {
  std::shared_ptr<CommState> state =
      find(comm, kind == PostKind::Send ? CommKind::Send : CommKind::Recv, call);
  if (state == nullptr) return nullptr;
  std::string unknown;
  int inFlight;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    for (int i = 0; i < n && mhandles != nullptr && unknown.empty(); i++) {
      if (state->mhandles.count(mhandles[i]) == 0) {
        unknown = "buffer " + std::to_string(i) + " has mhandle " + pointerText(mhandles[i]);
      }
    }
    inFlight = state->inFlight;
  }
  if (!unknown.empty()) {
    report(rules::kBadMhandlesRejected, state.get(), nullptr,
           std::string(call) + ": " + unknown +
               ", which regMr did not return on this comm (or it was deregistered)",
           Party::Caller);
  }
  if (kind != PostKind::Flush && inFlight >= state->limit) {
    report(rules::kInFlightLimits, state.get(), nullptr,
           std::string(call) + " with " + std::to_string(inFlight) +
               " requests already in flight: the contract promises the plugin at most " +
               std::to_string(state->limit),
           Party::Caller);
  }
  return state;
}

uint64_t Ledger::afterPost(const std::shared_ptr<CommState>& comm, PostKind kind, int n,
                           const size_t* sizes, const int* tags, void* const* mhandles,
                           void* request, Clock::time_point now) {
  if (request == nullptr || comm == nullptr) return 0;
  RequestRecord r;
  r.comm = comm;
  r.id = nextRequestId_.fetch_add(1, std::memory_order_relaxed);
  r.kind = kind;
  r.n = n;
  for (int i = 0; i < std::min(n, kKeptBuffers); i++) {
    if (sizes) r.sizes[i] = sizes[i];
    if (tags) r.tags[i] = tags[i];
    if (mhandles) r.mhandles[i] = mhandles[i];
  }
  r.posted = now;
  const int kept = std::min(n, kKeptBuffers);
  if (kind != PostKind::Flush) {
    std::lock_guard<std::mutex> lock(comm->mutex);
    raiseTo(kind == PostKind::Send ? peakSend_ : peakRecv_, ++comm->inFlight);
    for (int i = 0; i < kept && mhandles != nullptr; i++) {
      auto it = comm->mhandles.find(mhandles[i]);
      if (it != comm->mhandles.end()) it->second.uses++;
    }
  }
  RequestShard& shard = requestShards_[shardOf(request)];
  std::unique_lock<std::mutex> lock(shard.mutex);
  auto [it, fresh] = shard.requests.try_emplace(request, r);
  if (fresh) return r.id;
  RequestRecord stale = it->second;
  it->second = r;
  lock.unlock();
  report(rules::kNullRequestRetry, comm.get(), &stale,
         std::string(postKindName(kind)) + " #" + std::to_string(r.id) + " returned request " +
             pointerText(request) + ", which is still in flight (this is its record)");
  release(stale);
  return r.id;
}

TestTicket Ledger::beforeTest(void* request, Clock::time_point now) {
  RequestShard& shard = requestShards_[shardOf(request)];
  std::unique_lock<std::mutex> lock(shard.mutex);
  auto it = shard.requests.find(request);
  if (it != shard.requests.end()) {
    RequestRecord& r = it->second;
    r.tests++;
    r.lastTest = now;
    return TestTicket{true, r.id, r.n, r.kind};
  }
  lock.unlock();
  report(rules::kCompletionReportsSizes, nullptr, nullptr,
         "test of request " + pointerText(request) +
             ", which is not in flight: never returned by isend/irecv/iflush, or already "
             "reported done",
         Party::Caller);
  return TestTicket{};
}

void Ledger::release(const RequestRecord& r) {
  if (r.kind == PostKind::Flush) return;
  std::lock_guard<std::mutex> lock(r.comm->mutex);
  r.comm->inFlight--;
  for (int i = 0; i < std::min(r.n, kKeptBuffers); i++) {
    auto it = r.comm->mhandles.find(r.mhandles[i]);
    if (it != r.comm->mhandles.end() && it->second.uses > 0) it->second.uses--;
  }
}

void Ledger::afterTest(void* request, ncclResult_t res, int done, const int* sizes) {
  if (res == ncclSuccess && !done) return;
  RequestRecord r;
  {
    RequestShard& shard = requestShards_[shardOf(request)];
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.requests.find(request);
    if (it == shard.requests.end()) return;  // reported by beforeTest
    r = std::move(it->second);
    shard.requests.erase(it);
    shard.tally.completed++;
    shard.tally.tests += r.tests;
  }
  release(r);
  if (res != ncclSuccess) return;  // the request ended; the error is NCCL's to handle
  // A send may report less than it posted when its receive was smaller:
  // NCCL's IB transport clamps the send to the receive's size and reports
  // that (src/transport/net_ib.cc ncclIbIsend, ncclIbTest); whether the
  // receive then said so is rule 47's, and only the receiver can see it.
  if (sizes != nullptr && r.kind == PostKind::Send &&
      (sizes[0] < 0 || static_cast<size_t>(sizes[0]) > r.sizes[0])) {
    report(rules::kCompletionReportsSizes, r.comm.get(), &r,
           "test reported a send of " + std::to_string(sizes[0]) + " bytes done, posted " +
               std::to_string(r.sizes[0]));
  }
  if (sizes != nullptr && r.kind == PostKind::Recv) {
    for (int i = 0; i < std::min(r.n, kKeptBuffers); i++) {
      if (sizes[i] < 0) {
        report(rules::kGroupedCompletion, r.comm.get(), &r,
               "test reported done without a size for buffer " + std::to_string(i) + " of " +
                   std::to_string(r.n));
        break;
      }
      if (static_cast<size_t>(sizes[i]) > r.sizes[i]) {
        report(rules::kTruncationIsAnError, r.comm.get(), &r,
               "test reported " + std::to_string(sizes[i]) + " bytes in buffer " +
                   std::to_string(i) + ", which holds " + std::to_string(r.sizes[i]));
        break;
      }
    }
  }
  if (trackConsumed_ && r.kind == PostKind::Recv) {
    std::lock_guard<std::mutex> lock(r.comm->mutex);
    r.comm->awaitingConsume[request].push_back(r.n);
    r.comm->consumeOrder.push_back(request);
    if (r.comm->consumeOrder.size() > kKeptCompletions) {
      forgetOldestCompletion(*r.comm);
    }
  }
}

Ledger::PeakInFlight Ledger::peakInFlight() const {
  return PeakInFlight{peakSend_.load(std::memory_order_relaxed),
                      peakRecv_.load(std::memory_order_relaxed)};
}

Ledger::TestTally Ledger::testTally() const {
  TestTally sum;
  for (const RequestShard& shard : requestShards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    sum.completed += shard.tally.completed;
    sum.tests += shard.tally.tests;
  }
  return sum;
}

void Ledger::forgetOldestCompletion(CommState& comm) {
  auto it = comm.awaitingConsume.find(comm.consumeOrder.front());
  comm.consumeOrder.pop_front();
  if (it == comm.awaitingConsume.end()) return;
  it->second.pop_front();
  if (it->second.empty()) comm.awaitingConsume.erase(it);
}

uint64_t Ledger::consumed(void* recvComm, int n, void* request) {
  std::shared_ptr<CommState> state = find(recvComm, CommKind::Recv, "irecvConsumed");
  if (state == nullptr) return 0;
  int postedN = -1;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    auto it = state->awaitingConsume.find(request);
    if (it != state->awaitingConsume.end()) {
      postedN = it->second.front();
      it->second.pop_front();
      if (it->second.empty()) state->awaitingConsume.erase(it);
      state->consumeOrder.erase(
          std::find(state->consumeOrder.begin(), state->consumeOrder.end(), request));
    }
  }
  if (postedN < 0) {
    bool inFlight;
    {
      RequestShard& shard = requestShards_[shardOf(request)];
      std::lock_guard<std::mutex> lock(shard.mutex);
      inFlight = shard.requests.count(request) > 0;
    }
    report(rules::kIrecvConsumedAccepted, state.get(), nullptr,
           "irecvConsumed of request " + pointerText(request) +
               (inFlight ? ", which test has not reported done yet"
                         : ", which is not a completed receive of this comm (or was consumed "
                           "already)"),
           Party::Caller);
  } else if (postedN != n) {
    report(rules::kIrecvConsumedAccepted, state.get(), nullptr,
           "irecvConsumed with n=" + std::to_string(n) +
               " for a receive posted with n=" + std::to_string(postedN),
           Party::Caller);
  }
  return state->id;
}

// ---- watchdog ----------------------------------------------------------------

std::vector<Ledger::Outstanding> Ledger::outstanding(Clock::time_point now) const {
  std::vector<Outstanding> all;
  for (const RequestShard& shard : requestShards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    for (const auto& entry : shard.requests) {
      const RequestRecord& r = entry.second;
      all.push_back(
          {secondsBetween(r.posted, now), r.id, r.comm->describe() + " | " + r.describe(now)});
    }
  }
  std::sort(all.begin(), all.end(), [](const Outstanding& a, const Outstanding& b) {
    return a.ageSec != b.ageSec ? a.ageSec > b.ageSec : a.requestId < b.requestId;
  });
  return all;
}

double Ledger::oldestAgeSec(Clock::time_point now) const {
  double oldest = 0;
  for (const RequestShard& shard : requestShards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    for (const auto& entry : shard.requests) {
      oldest = std::max(oldest, secondsBetween(entry.second.posted, now));
    }
  }
  return oldest;
}

}  // namespace ncclnet::check
