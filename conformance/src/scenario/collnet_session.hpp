// SPDX-License-Identifier: Apache-2.0
// What a CollNet scenario's rank works with: the library's newest CollNet
// table among ncclCollNetPlugin_v12 and _v11 (the newest SHARP's plugin
// exports), driven the way NCCL's proxy drives it (src/transport/coll_net.cc,
// 2.28.9): init with the communicator's hash after the net plugin,
// getProperties, listen on device 0 (sharedListen), an all-gather of the
// handles, one collective connect and closeListen (sharedConnect), host
// registrations (sendProxyConnect registers host staging buffers without
// GPUDirect), operations posted again while a NULL request comes back and
// tested until done, then deregMr, closeColl (sharedFree) and finalize.
// Every call is timed and named.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ncclnet/abi/collnet_v11.h"
#include "ncclnet/abi/collnet_v12.h"
#include "scenario/ctx.hpp"
#include "scenario/registry.hpp"

namespace conformance {

// A scenario of the CollNet area: it needs a CollNet table.
inline Scenario collNetScenario(const char* name, Rule rule, int ranks, void (*run)(Ctx&),
                                const char* summary) {
  return {.area = "CollNet",
          .name = name,
          .rule = rule,
          .ranks = ranks,
          .needs = {.collNetTable = true},
          .run = run,
          .summary = summary};
}

// The library's CollNet table seen as v12: a v11 table differs only in its
// properties (and makeVDevice's), which are converted.
struct CollNetTable {
  int version = 0;  // 12 or 11
  const char* symbol = "";
  ncclCollNet_v12_t calls{};
};

// The newest of ncclCollNetPlugin_v12 and _v11 the library exports; skips
// the scenario when it has neither.
const CollNetTable& collNetTableOf(Ctx& c);

// What NCCL passes as the CollNet init's commId (the communicator's hash):
// the same on every rank.
constexpr uint64_t kCollNetCommHash = 0xc011ec7000000000ull;

class CollNetSession {
 public:
  // Every rank: init, listen on device 0, all-gather of the handles,
  // connect, closeListen; a failure or a NULL collComm breaks `rule`.
  CollNetSession(Ctx& c, Rule rule);
  ~CollNetSession();
  CollNetSession(const CollNetSession&) = delete;
  CollNetSession& operator=(const CollNetSession&) = delete;

  const ncclCollNet_v12_t& table() const { return *calls_; }
  int version() const { return version_; }
  const ncclNetProperties_v12_t& props() const { return props_; }
  void* collComm() const { return collComm_; }
  int rank() const { return c_.rank(); }
  int nranks() const { return c_.nranks(); }

  // regMr of host memory, as NCCL registers its staging buffers without
  // GPUDirect (coll_net.cc sendProxyConnect, recvProxyConnect).
  void* reg(void* data, size_t size, Rule rule);
  void dereg(void* mhandle, Rule rule);

  // Posts with `call` until it returns a request: success with a NULL one
  // means "not now", and NCCL posts the same operation again on a later
  // progress round (coll_net.cc sendProxyProgress tests `*request` before
  // it advances), testing the requests already out meanwhile. An error,
  // or no request within the wait limit, breaks `rule`.
  void* post(const std::function<ncclResult_t(void** request)>& call, const std::string& what,
             Rule rule);
  void* allReduce(void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                  void* sendMh, void* recvMh, const std::string& what, Rule rule);
  void* allGather(void* send, ncclNetSGE_v12_t* parts, int nParts, size_t bytesPerRank,
                  size_t windowOffset, size_t windowBytes, void* sendMh, const std::string& what,
                  Rule rule);
  void* reduceScatter(ncclNetSGE_v12_t* parts, int nParts, void* recv, size_t bytesPerRank,
                      size_t windowOffset, size_t windowBytes, ncclDataType_t type, ncclRedOp_t op,
                      void* recvMh, const std::string& what, Rule rule);
  // Tests every request posted and not yet done once, as NCCL's progress
  // thread does; returns whether `request` is done (its size in *size).
  bool progress(void* request, int* size, Rule rule);
  // Polls until `request` is done, within the wait limit; returns the size
  // test() reported. NCCL tests nothing after done (the request is freed).
  int wait(void* request, const std::string& what, Rule rule);
  // How often a post came back NULL so far.
  uint64_t nullRequests() const { return nulls_; }

  // deregMr, closeColl, finalize; each must succeed, the whole within the
  // wait limit. The destructor does the same unchecked.
  void teardown(Rule rule);

 private:
  struct Pending {
    void* request;
    std::string what;
    bool done;
    int size;
  };
  void testAll(Rule rule);

  Ctx& c_;
  const ncclCollNet_v12_t* calls_ = nullptr;
  int version_ = 0;
  void* ctx_ = nullptr;
  void* collComm_ = nullptr;
  ncclNetProperties_v12_t props_{};
  std::vector<void*> mhandles_;
  std::vector<Pending> pending_;
  uint64_t nulls_ = 0;
};

}  // namespace conformance
