// SPDX-License-Identifier: Apache-2.0
// ncclnet-check: the interposer. It holds the wrapped plugin (loaded when
// this library is loaded, since NCCL reads the table's name before it calls
// init), forwards every call to it through the SDK's v12 view, and checks
// each call on the way (ledger.hpp), times it, and traces it.
//
// One per process: the C ABI carries no context for devices() or
// getProperties(), and NCCL matches the name before anything else.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "config.hpp"
#include "ledger.hpp"
#include "ncclnet/abi/net.h"
#include "ncclnet/host/loader.hpp"
#include "report.hpp"
#include "trace.hpp"
#include "watchdog.hpp"

namespace ncclnet::check {

// The name the tables carry when no plugin could be loaded.
constexpr const char* kOwnName = "sdk-check";

class Checker {
 public:
  static Checker& instance();

  // At load time: reads NCCLNET_CHECK_PLUGIN and loads that plugin.
  void load();
  // The wrapped plugin's name (kOwnName when none), for the tables.
  const char* name() const { return name_; }
  // Whether the wrapped plugin provides `op` (false when none is loaded).
  bool provides(host::Optional op) const;
  // A table of the wrapped plugin's library other than its net tables
  // (forwarded_tables.cc), or nullptr where it has none or none is loaded.
  void* innerSymbol(const char* name) const;

  // ---- the v12 calls ----
  ncclResult_t init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                    ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn);
  // Tables v6..v10: NCCL calls init once per process and passes no context;
  // the one context made here serves every later call.
  ncclResult_t initOnce(ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn);
  void* processContext() const { return processCtx_.load(std::memory_order_acquire); }
  // Table v10: the context of a connect's traffic class. The process
  // context for an undefined class; for any other, one more context of the
  // wrapped plugin made with that class at its first connect, as the SDK's
  // own v10 table keeps one per class. NULL before initOnce, or when it
  // cannot be made (one WARN line).
  void* classContext(int trafficClass);
  ncclResult_t finalize(void* ctx);
  ncclResult_t devices(int* ndev);
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
  ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm);
  ncclResult_t connect(void* ctx, int dev, void* handle, void** sendComm,
                       ncclNetDeviceHandle_v12_t** sendDevComm);
  ncclResult_t accept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v12_t** recvDevComm);
  ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                           void** mhandle);
  ncclResult_t deregMr(void* comm, void* mhandle);
  ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                     void** request);
  ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                     void** phandles, void** request);
  ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                      void** request);
  ncclResult_t test(void* request, int* done, int* sizes);
  ncclResult_t closeSend(void* sendComm);
  ncclResult_t closeRecv(void* recvComm);
  ncclResult_t closeListen(void* listenComm);
  ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr);
  ncclResult_t irecvConsumed(void* recvComm, int n, void* request);
  ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
  ncclResult_t setNetAttr(void* ctx, ncclNetAttr_v12_t* attr);

  // A call refused at the edge of an older table, as the SDK's export tables
  // refuse it: one WARN line, ncclInternalError. Not a violation: the
  // wrapped plugin never sees the call.
  ncclResult_t refuse(const char* fn, const char* why);

  // Violations reported so far (tests, and the line at finalize).
  uint64_t violations() const { return reporter_.count(); }

  // ---- for the one-sided tables (one_sided.hpp) ----
  // Their init starts the checker as the net table's init does (knobs,
  // logger, trace, watchdog; once per process): NCCL may init them first.
  ncclResult_t startFor(ncclDebugLogger_t logFn) { return start(logFn); }
  Reporter& reporter() { return reporter_; }
  Trace& trace() { return trace_; }

 private:
  Checker() = default;
  ~Checker();
  // Once, at the first init: knobs, logger, ledger, trace, watchdog.
  ncclResult_t start(ncclDebugLogger_t logFn);
  host::NetView& net() { return inner_->net(); }
  // The clock calls are timed with: coarse unless the bound is short.
  Clock::time_point now() const { return preciseTiming_ ? Clock::now() : coarseNow(); }
  // Reports a call that took longer than NCCLNET_CHECK_BLOCK_US; returns
  // when it ended.
  Clock::time_point timed(const CheckRule& rule, const char* call, Clock::time_point start,
                          const CommState* comm);
  // The hash of a connect's handle as the first call of that connect saw
  // it: a plugin may keep its connect state in the handle (NCCL calls again
  // with the same buffer), so later calls may see other bytes.
  uint64_t connectHash(const void* handle);
  void connectEnded(const void* handle);
  // The trace's "m=<registrations> o=<offsets>" of n buffers.
  std::string placesText(const std::shared_ptr<CommState>& comm, int n, void* const* data,
                         void* const* mhandles) const;

  char name_[256] = "sdk-check";
  std::unique_ptr<host::LoadedPlugin> inner_;
  std::string loadProblem_;  // why inner_ is empty

  std::mutex startMutex_;
  bool started_ = false;
  ncclResult_t startResult_ = ncclSuccess;
  std::atomic<void*> processCtx_{nullptr};
  ncclDebugLogger_t legacyLogFn_ = nullptr;  // what initOnce was given, for classContext
  ncclProfilerCallback_t legacyProfFn_ = nullptr;
  std::mutex classMutex_;
  std::unordered_map<int, void*> classContexts_;  // traffic class -> context

  Config config_;
  Clock::duration blockLimit_{};
  bool preciseTiming_ = false;
  Reporter reporter_;
  std::unique_ptr<Ledger> ledger_;
  Trace trace_;
  std::mutex connectMutex_;                               // guards connecting_ (only while tracing)
  std::unordered_map<const void*, uint64_t> connecting_;  // handle -> hash at its first call
  std::unique_ptr<Watchdog> watchdog_;
};

}  // namespace ncclnet::check
