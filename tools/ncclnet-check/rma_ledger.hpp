// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the bookkeeping behind the checks of one one-sided table
// (ncclRmaPlugin_v14 or ncclGinPlugin_v11, one_sided.hpp). It knows the
// collComms, contexts, symmetric registrations and outstanding requests the
// plugin handed out, and reports what one rank can judge of rules 70 and 76:
//
//   RmaLedger ledger(reporter, "ncclRmaPlugin_v14");
//   ledger.checkProperties(dev, props.netDeviceType, props.maxRecvs, props.ptrSupport, false);
//   ledger.addColl(collComm, listenComm, nranks, rank, props.maxRecvs);
//   RmaLedger::Post post = ledger.beforeOp(rmaCtx, context, rank, {src, dst});
//   ... forward iput ...
//   ledger.afterOp(post, RmaOp::Put, res, request);
//   ... forward test ...
//   ledger.afterTest(request, res, done);
//
// What it cannot judge (docs/check.md): anything that needs the peer's
// memory or its calls (puts landing, signals, ordering, the registration
// order across ranks).
//
// One mutex for everything: these calls come from NCCL's GIN/RMA progress
// thread and its setup, never from the net table's data path, whose cost
// stays that of ledger.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ncclnet/abi/net.h"
#include "report.hpp"

namespace ncclnet::check {

enum class RmaOp { Put, PutSignal, Get };
const char* rmaOpName(RmaOp op);

class RmaLedger {
 public:
  // `table`: the symbol the lines name ("ncclRmaPlugin_v14").
  RmaLedger(Reporter& reporter, std::string table);
  RmaLedger(const RmaLedger&) = delete;
  RmaLedger& operator=(const RmaLedger&) = delete;

  // ---- rule 70, each problem once per process ----
  // `missing`: the members NCCL calls without a NULL check that are NULL.
  void checkMembers(const std::vector<const char*>& missing);
  // `others`: the names of the library's other one-sided tables (symbol, name).
  void checkName(const char* name, const std::vector<std::pair<const char*, const char*>>& others);
  // `deviceCodeTypes`: a GIN table may report a device type NCCL has device
  // code for (GIN_GDAKI); an RMA table only GIN_PROXY. maxRecvs and host
  // memory matter only to the proxy.
  void checkProperties(int dev, int netDeviceType, int maxRecvs, int ptrSupport,
                       bool deviceCodeTypes);

  // ---- comms ----
  void addListen(void* listenComm, int dev);
  void closeListen(void* listenComm);
  int listenDev(void* listenComm) const;  // -1: unknown
  // `maxRecvs`: of the listen's device; the requests NCCL may keep
  // outstanding per peer are 32 x maxRecvs. Returns the collComm's number.
  uint64_t addColl(void* collComm, void* listenComm, int nranks, int rank, int maxRecvs);
  // Forgets the collComm, its contexts and requests. Returns its number
  // (0: unknown) and, in `registrations`, what was registered on it, in
  // order (the part of rule 71 one rank can show, not judge).
  uint64_t closeColl(void* collComm, std::string* registrations);
  // RMA v14: the data calls name a context of the collComm, not the collComm.
  void addContext(void* rmaCtx, void* collComm);
  void dropContext(void* rmaCtx);
  // Returns the registration's number (0: unknown comm).
  uint64_t addMr(void* collComm, void* mhandle, size_t size, int type, uint64_t flags);
  uint64_t dropMr(void* collComm, void* mhandle);
  uint64_t collId(void* collComm) const;

  // ---- data ----
  // What afterOp needs of the moment before the call.
  struct Post {
    void* owner = nullptr;  // the rmaCtx (v14) or collComm (GIN v11)
    int context = 0;
    uint32_t rank = 0;
    uint64_t collId = 0;      // 0: an owner the checker never saw; nothing is judged
    std::string comm;         // "collComm #3 (rank 0 of 2, dev 0)"
    int outstanding = 0;      // to this peer on this context, before the call
    int limit = 0;            // 32 x maxRecvs
    bool wellFormed = false;  // known rank and registrations: a refusal is the plugin's
  };
  Post beforeOp(void* owner, int context, uint32_t rank, std::initializer_list<void*> mhandles);
  // Records the request; reports rule 76 when the call succeeded without a
  // request, returned one still outstanding, or refused (error) a
  // well-formed call below the limit. Returns the request's number (0: none).
  uint64_t afterOp(const Post& post, RmaOp op, ncclResult_t res, void* request);
  // A request test() reported done (or failed) is no longer outstanding.
  // One the checker does not know is the caller's business: not judged.
  void afterTest(void* request, ncclResult_t res, int done);

  int outstandingRequests() const;

 private:
  struct Coll {
    uint64_t id = 0;
    int dev = -1;
    int nranks = 0;
    int rank = 0;
    int limit = 0;
    std::unordered_map<void*, uint64_t> mhandles;  // -> registration number
    std::vector<std::string> registrations;        // in order, bounded
    size_t registrationCount = 0;
  };
  using Key = std::tuple<void*, int, uint32_t>;  // owner, context, peer
  struct Request {
    Key key;
    uint64_t id = 0;
    uint64_t collId = 0;
    RmaOp op = RmaOp::Put;
  };
  std::string describe(const Coll& coll) const;
  void onceOnly(const std::string& key, const CheckRule& rule, const std::string& what);
  void forgetOwner(void* owner);  // mutex_ held

  Reporter& reporter_;
  const std::string table_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, int> listens_;  // -> dev
  std::unordered_map<void*, Coll> colls_;
  std::unordered_map<void*, void*> owners_;  // rmaCtx or collComm -> collComm
  std::map<Key, int> outstanding_;
  std::unordered_map<void*, Request> requests_;
  std::set<std::string> reported_;  // rule 70 problems already reported
  uint64_t nextCollId_ = 1;
  uint64_t nextRequestId_ = 1;
  uint64_t nextMrId_ = 1;
};

}  // namespace ncclnet::check
