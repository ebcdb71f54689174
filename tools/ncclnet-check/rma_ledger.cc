// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the bookkeeping behind the checks of one one-sided table.
#include "rma_ledger.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "ncclnet/abi/net_device.h"

namespace ncclnet::check {

namespace {

// Registrations listed by closeColl; the count is always exact.
constexpr size_t kListedRegistrations = 32;

bool powerOfTwo(int value) {
  return value >= 1 && (value & (value - 1)) == 0;
}

}  // namespace

const char* rmaOpName(RmaOp op) {
  switch (op) {
    case RmaOp::Put: return "iput";
    case RmaOp::PutSignal: return "iputSignal";
    case RmaOp::Get: return "iget";
  }
  return "op";
}

RmaLedger::RmaLedger(Reporter& reporter, std::string table)
    : reporter_(reporter), table_(std::move(table)) {}

std::string RmaLedger::describe(const Coll& coll) const {
  return table_ + " collComm #" + std::to_string(coll.id) + " (rank " + std::to_string(coll.rank) +
         " of " + std::to_string(coll.nranks) + ", dev " + std::to_string(coll.dev) + ")";
}

void RmaLedger::onceOnly(const std::string& key, const CheckRule& rule, const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!reported_.insert(key).second) return;
  }
  reporter_.violation(rule, std::string(), std::string(), what);
}

// ---- rule 70 -------------------------------------------------------------------

void RmaLedger::checkMembers(const std::vector<const char*>& missing) {
  for (const char* member : missing) {
    onceOnly(std::string("member ") + member, rules::kRmaTableComplete,
             table_ + "." + member + " is NULL: NCCL calls it without a NULL check");
  }
}

void RmaLedger::checkName(const char* name,
                          const std::vector<std::pair<const char*, const char*>>& others) {
  if (name == nullptr || name[0] == '\0') {
    onceOnly("name", rules::kRmaTableComplete,
             table_ + ".name is empty: NCCL_GIN_PLUGIN and NCCL_RMA_PLUGIN select by it");
    return;
  }
  for (const auto& [symbol, other] : others) {
    if (other != nullptr && std::strcmp(other, name) == 0) continue;
    onceOnly(std::string("name ") + symbol, rules::kRmaTableComplete,
             std::string(symbol) + ".name is \"" + (other ? other : "(null)") + "\", " + table_ +
                 ".name \"" + name + "\": NCCL_GIN_PLUGIN and NCCL_RMA_PLUGIN select by it");
  }
}

void RmaLedger::checkProperties(int dev, int netDeviceType, int maxRecvs, int ptrSupport,
                                bool deviceCodeTypes) {
  const std::string device = table_ + " device " + std::to_string(dev);
  const bool proxy = netDeviceType == NCCL_NET_DEVICE_GIN_PROXY;
  if (!proxy && !(deviceCodeTypes && netDeviceType == NCCL_NET_DEVICE_GIN_GDAKI)) {
    // RMA: src/plugin/rma/rma_v13.cc ncclRma_init refuses it. GIN: NCCL has
    // device code for PROXY and GDAKI only (src/gin/gin_host.cc takes the
    // type of device 0 as the backend).
    onceOnly("type " + std::to_string(dev), rules::kRmaTableComplete,
             device + " has netDeviceType " + std::to_string(netDeviceType) +
                 (deviceCodeTypes ? ", for which NCCL has no device code (GIN_PROXY is "
                                  : ", not GIN_PROXY (") +
                 std::to_string(NCCL_NET_DEVICE_GIN_PROXY) + ")");
    return;
  }
  if (!proxy) return;  // GDAKI: NCCL's device code, not its proxy, drives it
  if (!powerOfTwo(maxRecvs)) {
    // src/gin/gin_host_proxy.cc ncclGinProxyCreateContext: a queue of
    // 32 x maxRecvs slots indexed with `& (queueSize - 1)`.
    onceOnly("maxRecvs " + std::to_string(dev), rules::kRmaTableComplete,
             device + " has maxRecvs " + std::to_string(maxRecvs) +
                 ", not a power of two: NCCL's proxy indexes its queue of 32 x maxRecvs slots "
                 "through a mask");
  }
  if ((ptrSupport & NCCL_PTR_HOST) == 0) {
    char what[64];
    std::snprintf(what, sizeof(what), " (ptrSupport 0x%x)", static_cast<unsigned>(ptrSupport));
    onceOnly("host " + std::to_string(dev), rules::kRmaTableComplete,
             device + " does not support host memory" + what +
                 ": NCCL registers its inline-put buffer as NCCL_PTR_HOST");
  }
}

// ---- comms ---------------------------------------------------------------------

void RmaLedger::addListen(void* listenComm, int dev) {
  std::lock_guard<std::mutex> lock(mutex_);
  listens_[listenComm] = dev;
}

void RmaLedger::closeListen(void* listenComm) {
  std::lock_guard<std::mutex> lock(mutex_);
  listens_.erase(listenComm);
}

int RmaLedger::listenDev(void* listenComm) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = listens_.find(listenComm);
  return it != listens_.end() ? it->second : -1;
}

uint64_t RmaLedger::addColl(void* collComm, void* listenComm, int nranks, int rank, int maxRecvs) {
  std::lock_guard<std::mutex> lock(mutex_);
  Coll coll;
  coll.id = nextCollId_++;
  auto listen = listens_.find(listenComm);
  coll.dev = listen != listens_.end() ? listen->second : -1;
  coll.nranks = nranks;
  coll.rank = rank;
  coll.limit = NCCL_NET_MAX_REQUESTS * (maxRecvs > 0 ? maxRecvs : 1);
  colls_[collComm] = coll;  // a closed collComm's address may come back
  owners_[collComm] = collComm;
  return coll.id;
}

void RmaLedger::forgetOwner(void* owner) {
  owners_.erase(owner);
  for (auto it = requests_.begin(); it != requests_.end();) {
    it = std::get<0>(it->second.key) == owner ? requests_.erase(it) : std::next(it);
  }
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    it = std::get<0>(it->first) == owner ? outstanding_.erase(it) : std::next(it);
  }
}

uint64_t RmaLedger::closeColl(void* collComm, std::string* registrations) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = colls_.find(collComm);
  if (it == colls_.end()) return 0;
  const Coll& coll = it->second;
  std::string list =
      describe(coll) + ": " + std::to_string(coll.registrationCount) + " symmetric registration(s)";
  for (size_t i = 0; i < coll.registrations.size(); i++) {
    list += (i == 0 ? ", in order: " : ", ") + coll.registrations[i];
  }
  if (coll.registrationCount > coll.registrations.size()) list += ", ...";
  *registrations = list;
  const uint64_t id = coll.id;
  // Requests still outstanding are dropped silently, as for the net table
  // (closing with requests in flight is how NCCL aborts).
  std::vector<void*> owned;
  for (const auto& [owner, ownedBy] : owners_) {
    if (ownedBy == collComm) owned.push_back(owner);
  }
  for (void* owner : owned) forgetOwner(owner);
  colls_.erase(it);
  return id;
}

void RmaLedger::addContext(void* rmaCtx, void* collComm) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (colls_.count(collComm) != 0) owners_[rmaCtx] = collComm;
}

void RmaLedger::dropContext(void* rmaCtx) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = owners_.find(rmaCtx);
  if (it != owners_.end() && it->second != rmaCtx) forgetOwner(rmaCtx);
}

uint64_t RmaLedger::addMr(void* collComm, void* mhandle, size_t size, int type, uint64_t flags) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = colls_.find(collComm);
  if (it == colls_.end()) return 0;
  Coll& coll = it->second;
  const uint64_t id = nextMrId_++;
  coll.mhandles[mhandle] = id;
  coll.registrationCount++;
  if (coll.registrations.size() < kListedRegistrations) {
    char text[96];
    std::snprintf(text, sizeof(text), "m=%" PRIu64 " %zu B type %d flags 0x%" PRIx64, id, size,
                  type, flags);
    coll.registrations.emplace_back(text);
  }
  return id;
}

uint64_t RmaLedger::dropMr(void* collComm, void* mhandle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = colls_.find(collComm);
  if (it == colls_.end()) return 0;
  auto mr = it->second.mhandles.find(mhandle);
  if (mr == it->second.mhandles.end()) return 0;
  const uint64_t id = mr->second;
  it->second.mhandles.erase(mr);
  return id;
}

uint64_t RmaLedger::collId(void* collComm) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = colls_.find(collComm);
  return it == colls_.end() ? 0 : it->second.id;
}

// ---- data ------------------------------------------------------------------------

RmaLedger::Post RmaLedger::beforeOp(void* owner, int context, uint32_t rank,
                                    std::initializer_list<void*> mhandles) {
  Post post;
  post.owner = owner;
  post.context = context;
  post.rank = rank;
  std::lock_guard<std::mutex> lock(mutex_);
  auto owned = owners_.find(owner);
  if (owned == owners_.end()) return post;
  const Coll& coll = colls_.at(owned->second);
  post.collId = coll.id;
  post.comm = describe(coll);
  post.limit = coll.limit;
  auto count = outstanding_.find(Key{owner, context, rank});
  post.outstanding = count == outstanding_.end() ? 0 : count->second;
  post.wellFormed = rank < static_cast<uint32_t>(coll.nranks);
  for (void* mhandle : mhandles) post.wellFormed &= coll.mhandles.count(mhandle) != 0;
  return post;
}

uint64_t RmaLedger::afterOp(const Post& post, RmaOp op, ncclResult_t res, void* request) {
  if (post.collId == 0) return 0;
  const std::string call = std::string(rmaOpName(op)) + " to rank " + std::to_string(post.rank) +
                           " (context " + std::to_string(post.context) + ")";
  const std::string load = std::to_string(post.outstanding) + " of " + std::to_string(post.limit) +
                           " requests (32 x maxRecvs) outstanding to that rank";
  if (res != ncclSuccess) {
    // A call with a rank and registrations of this collComm that fails
    // below the limit: the plugin refused what NCCL may post. A remote or
    // system error is the peer or the network gone (ncclRemoteError is
    // NCCL's "remote process exited or network error"), which rule 78 asks
    // the plugin to report, not a refusal.
    const bool networkFailed = res == ncclRemoteError || res == ncclSystemError;
    if (post.wellFormed && post.outstanding < post.limit && !networkFailed) {
      reporter_.violation(rules::kRmaRequestsReturned, post.comm, call,
                          std::string(rmaOpName(op)) + " returned " +
                              std::to_string(static_cast<int>(res)) + " with " + load);
    }
    return 0;
  }
  if (request == nullptr) {
    // src/rma/rma_proxy_progress.cc fails with ncclInternalError;
    // src/gin/gin_host_proxy.cc proxyGinPollCompletions tests the NULL.
    reporter_.violation(rules::kRmaRequestsReturned, post.comm, call,
                        std::string(rmaOpName(op)) +
                            " returned ncclSuccess with a NULL request (no \"try again\" in the "
                            "one-sided tables) with " +
                            load);
    return 0;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  auto [it, fresh] = requests_.try_emplace(request);
  if (!fresh) {
    const uint64_t earlier = it->second.id;
    const RmaOp earlierOp = it->second.op;
    lock.unlock();
    // NCCL keeps both in its queue and tests each until done.
    reporter_.violation(rules::kRmaRequestsReturned, post.comm, call,
                        std::string(rmaOpName(op)) + " returned the request of " +
                            rmaOpName(earlierOp) + " #" + std::to_string(earlier) +
                            ", which test() has not reported done");
    return 0;
  }
  Request& r = it->second;
  r.key = Key{post.owner, post.context, post.rank};
  r.id = nextRequestId_++;
  r.collId = post.collId;
  r.op = op;
  outstanding_[r.key]++;
  return r.id;
}

void RmaLedger::afterTest(void* request, ncclResult_t res, int done) {
  if (res == ncclSuccess && !done) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = requests_.find(request);
  if (it == requests_.end()) return;
  auto count = outstanding_.find(it->second.key);
  if (count != outstanding_.end() && --count->second <= 0) outstanding_.erase(count);
  requests_.erase(it);
}

int RmaLedger::outstandingRequests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(requests_.size());
}

}  // namespace ncclnet::check
