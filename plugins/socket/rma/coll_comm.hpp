// SPDX-License-Identifier: Apache-2.0
// sdk-socket RMA: one connection of NCCL's GIN/RMA proxy (a collComm) and
// its contexts: the data calls, checked, then carried out here for the
// rank itself or queued on the engine for a peer.
#pragma once

#include <memory>
#include <vector>

#include "device_link.hpp"
#include "engine.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/rma_types.hpp"
#include "ncclnet/sticky_error.hpp"
#include "regions.hpp"
#include "requests.hpp"

namespace ncclnet::socket::rma {

class CollComm {
 public:
  CollComm(int rank, int nranks, int closeTimeoutMs, const Logger& log)
      : rank_(rank), nranks_(nranks), closeTimeoutMs_(closeTimeoutMs), log_(log) {}
  ~CollComm();  // stops the engine within closeTimeoutMs, then frees every request

  // Takes the mesh (one socket per peer) and starts moving data; a peer's
  // frame for a region not registered here yet waits `registrationWaitMs`.
  ncclResult_t start(std::vector<Fd> peers, int registrationWaitMs);

  Regions& regions() { return regions_; }
  DeviceLink& deviceLink() { return link_; }
  const Logger& log() const { return log_; }
  bool failed() const { return !error_.ok(); }

  // `signal`: null for a plain put. Offsets and handles as NCCL passes them.
  ncclResult_t put(int context, uint64_t srcOff, void* srcMhandle, size_t size, uint64_t dstOff,
                   void* dstMhandle, uint32_t rank, const RmaSignal* signal, void** request);
  ncclResult_t get(int context, uint64_t remoteOff, void* remoteMhandle, size_t size,
                   uint64_t localOff, void* localMhandle, uint32_t rank, void** request);
  ncclResult_t flush(uint32_t rank, void** request);
  ncclResult_t test(void* request, int* done);

 private:
  // The local region behind `handle` holding [offset, offset + size), or
  // null after one WARN line.
  const Region* localRange(const char* fn, const char* what, void* handle, uint64_t offset,
                           size_t size);
  const Region* handleOf(const char* fn, const char* what, void* handle);
  bool validTarget(const char* fn, uint32_t rank);
  ncclResult_t putSelf(const Region* src, uint64_t srcOff, size_t size, const Region* dst,
                       uint64_t dstOff, const Region* signalRegion, const RmaSignal* signal);

  int rank_;
  int nranks_;
  int closeTimeoutMs_;
  Logger log_;
  StickyError error_;
  Regions regions_;
  DeviceLink link_;  // outlives the engine, which copies through it
  RequestSet requests_;
  std::unique_ptr<Engine> engine_;  // last: stopped before the rest goes
};

// What createContext returns: the contexts of one collComm.
struct Contexts {
  CollComm* comm;
  int count;
};

}  // namespace ncclnet::socket::rma
