// SPDX-License-Identifier: Apache-2.0
// What an Rma scenario's rank works with: the library's ncclRmaPlugin_v14
// driven the way NCCL's host RMA proxy drives it (src/rma/rma_proxy.cc,
// 2.30.7): init, listen on device 0, an all-gather of the 128-byte handles,
// one collective connect (given the net plugin's context, as NCCL gives
// it), contexts, symmetric registrations in the same order on every rank.
// Every call is timed and named; what a session opened is released by
// teardown() or when it ends, in NCCL's order (contexts, registrations,
// collComm, finalize).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ncclnet/abi/rma.h"
#include "scenario/ctx.hpp"
#include "scenario/registry.hpp"

namespace conformance {

// Seeds that differ per (source, target, item) and per scenario family
// (`base`): a byte in the wrong place or from the wrong put never matches.
inline uint64_t rmaSeed(uint64_t base, int src, int dst, size_t item) {
  return base + static_cast<uint64_t>(src) * 65536 + static_cast<uint64_t>(dst) * 256 + item;
}

// Signal words a scenario registers (8 bytes each).
constexpr size_t kRmaSignalWords = 64;

// A scenario of the Rma area: it needs the library's RMA table.
inline Scenario rmaScenario(const char* name, Rule rule, int ranks, void (*run)(Ctx&),
                            const char* summary) {
  return {.area = "Rma",
          .name = name,
          .rule = rule,
          .ranks = ranks,
          .needs = {.rmaTable = true},
          .run = run,
          .summary = summary};
}

class RmaSession {
 public:
  // Connects every rank of the scenario; `nContexts` contexts are created
  // at once (context i is contexts()[i]... as NCCL, one rmaCtx holds them).
  RmaSession(Ctx& c, int nContexts, Rule rule);
  ~RmaSession();
  RmaSession(const RmaSession&) = delete;
  RmaSession& operator=(const RmaSession&) = delete;

  const ncclRma_v14_t& table() const { return *table_; }
  const ncclNetProperties_v12_t& props() const { return props_; }
  void* collComm() const { return collComm_; }
  void* rmaCtx() const { return rmaCtx_; }
  int rank() const { return c_.rank(); }
  int nranks() const { return c_.nranks(); }

  // Collective: every rank registers its own `data` (sizes may differ), of
  // `type` NCCL_PTR_HOST or NCCL_PTR_CUDA.
  void* reg(void* data, size_t size, Rule rule, int type = NCCL_PTR_HOST);
  void dereg(void* mhandle);

  // Posted; a NULL request on success breaks rule RmaRequestsReturned.
  void* put(int context, uint64_t srcOff, void* srcMh, size_t size, uint64_t dstOff, void* dstMh,
            int rank, const std::string& what, Rule rule);
  void* putSignal(int context, uint64_t srcOff, void* srcMh, size_t size, uint64_t dstOff,
                  void* dstMh, int rank, uint64_t signalOff, void* signalMh, uint64_t value,
                  uint32_t op, bool strong, const std::string& what, Rule rule);
  // A strong INC of the word at `signalOff` on `rank`, with no payload (size
  // 0, no source or destination handle, as NCCL's device signal() sends
  // it), waited for.
  void signal(int context, int rank, uint64_t signalOff, void* signalMh, const std::string& what,
              Rule rule);
  void* get(int context, uint64_t remoteOff, void* remoteMh, size_t size, uint64_t localOff,
            void* localMh, int rank, const std::string& what, Rule rule);
  // iflush, then waits for its request when there is one.
  void flush(int context, void* mhandle, int rank, const std::string& what, Rule rule);
  // Polls test() (and progress, as NCCL's proxy thread does) until done,
  // within the scenario's wait limit.
  void wait(void* request, const std::string& what, Rule rule);
  // Drives the plugin's progress once (NCCL calls it continuously).
  void progress(Rule rule);
  // Releases everything the session opened; the whole must end within the
  // wait limit, and each call must succeed unless the peer is gone
  // (`peerGone`: an error is then noted, not judged). The destructor does
  // the same unchecked.
  void teardown(Rule rule, bool peerGone = false);

  // Polls the 64-bit word at `word` until it is at least `expected`,
  // driving progress meanwhile; breaks `rule` after the wait limit.
  uint64_t awaitSignal(const volatile uint64_t* word, uint64_t expected, const std::string& what,
                       Rule rule);
  // The same for a word only `read` can see (GPU memory, through the driver).
  uint64_t awaitSignal(const std::function<uint64_t()>& read, uint64_t expected,
                       const std::string& what, Rule rule);

 private:
  Ctx& c_;
  const ncclRma_v14_t* table_ = nullptr;
  void* init_ = nullptr;
  void* collComm_ = nullptr;
  void* rmaCtx_ = nullptr;
  ncclNetProperties_v12_t props_{};
  std::vector<void*> mhandles_;
};

}  // namespace conformance
