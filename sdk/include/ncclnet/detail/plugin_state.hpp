// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the process-wide state the C ABI forces on a plugin. NCCL's
// calls such as devices() carry no context, so the one implementation
// object, its reference count and the CommContexts init hands out live
// here, once per plugin class.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ncclnet/abi/net.h"
#include "ncclnet/log.hpp"
#include "ncclnet/plugin_types.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet::detail {

template <class Impl>
class PluginState {
 public:
  static PluginState& get() {
    static PluginState state;
    return state;
  }

  Impl* impl() const { return impl_.load(std::memory_order_acquire); }
  Logger logger() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return logger_;
  }

  // v11+: one init per communicator, each with its own context. The RMA
  // and GIN tables' init carries no profiler (abiHasProfiler false).
  ncclResult_t initComm(void** ctx, uint64_t commId, const ncclNetCommConfig_v12_t* config,
                        ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn,
                        bool abiHasProfiler = true) {
    if (ctx == nullptr) return fail("init", "ctx is NULL");
    std::lock_guard<std::mutex> lock(mutex_);
    ncclResult_t res = acquire(logFn, profFn, abiHasProfiler);
    if (res != ncclSuccess) return res;
    auto context = std::make_unique<CommContext>();
    context->commId = commId;
    context->trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
    *ctx = context.get();
    contexts_.emplace(context.get(), std::move(context));
    return ncclSuccess;
  }

  // v11+: the matching finalize. NCCL 2.28 may finalize a ctx whose init
  // failed (it is then NULL): tolerated, since nothing was acquired.
  ncclResult_t finalizeComm(void* ctx) {
    std::unique_ptr<Impl> doomed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (ctx == nullptr) {
        NCCLNET_INFO(logger_, NCCL_INIT, "finalize(NULL): no context to release, ignored");
        return ncclSuccess;
      }
      auto it = contexts_.find(ctx);
      if (it == contexts_.end()) {
        NCCLNET_WARN(logger_, "finalize: %p is not a context returned by init", ctx);
        return ncclInternalError;
      }
      contexts_.erase(it);
      doomed = release();
    }
    return ncclSuccess;  // `doomed` is destroyed outside the lock
  }

  // v6..v10: init once per process. NCCL calls it once; a second call (a
  // second host in the same process) finds the plugin ready.
  ncclResult_t initLegacy(ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn,
                          bool abiHasProfiler) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (legacyPinned_) return ncclSuccess;
    ncclResult_t res = acquire(logFn, profFn, abiHasProfiler);
    if (res == ncclSuccess) legacyPinned_ = true;
    return res;
  }

  // v6..v10 listen/connect carry no context; they share one per traffic class.
  const CommContext* legacyContext(int trafficClass) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& context : legacyContexts_) {
      if (context->trafficClass == trafficClass) return context.get();
    }
    legacyContexts_.push_back(std::make_unique<CommContext>());
    legacyContexts_.back()->trafficClass = trafficClass;
    return legacyContexts_.back().get();
  }

  // The context init returned as `ctx`, or nullptr (silently) if none.
  const CommContext* find(void* ctx) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = contexts_.find(ctx);
    return it == contexts_.end() ? nullptr : it->second.get();
  }

  // v11+ listen/connect/setNetAttr: the ctx must be one that init returned.
  const CommContext* lookup(const char* fn, void* ctx) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = contexts_.find(ctx);
    if (it == contexts_.end()) {
      NCCLNET_WARN(logger_, "%s: ctx %p was not returned by init (or was finalized)", fn, ctx);
      return nullptr;
    }
    return it->second.get();
  }

  // Runs `body` on the live object for the table entry `fn`, as the RMA and
  // CollNet exports do: none before init or after the last finalize, and
  // an exception becomes ncclInternalError with a WARN line.
  template <class Body>
  ncclResult_t call(const char* fn, Body&& body) {
    Impl* live = impl();
    if (live == nullptr) return fail(fn, "called before init or after the last finalize");
    try {
      return body(*live);
    } catch (const std::exception& e) {
      Logger log = logger();
      NCCLNET_WARN(log, "%s: the plugin threw: %s", fn, e.what());
    } catch (...) {
      Logger log = logger();
      NCCLNET_WARN(log, "%s: the plugin threw", fn);
    }
    return ncclInternalError;
  }

  ncclResult_t fail(const char* fn, const char* why) const {
    Logger log = logger();
    NCCLNET_WARN(log, "%s: %s", fn, why);
    return ncclInternalError;
  }

  ~PluginState() {
    // Library unload: release what older NCCLs never finalize.
    delete impl_.exchange(nullptr);
  }

 private:
  PluginState() : logger_(nullptr, prefixFor(Impl::kName).c_str()) {}

  static std::string prefixFor(const char* name) { return std::string("NET/") + name; }

  ncclResult_t acquire(ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn,
                       bool abiHasProfiler) {
    if (refs_ == 0) {
      logger_ = Logger(logFn, prefixFor(Impl::kName).c_str());
      InitArgs args{logger_, profFn, abiHasProfiler};
      std::unique_ptr<Impl> created;
      ncclResult_t res;
      try {
        res = Impl::create(args, &created);
      } catch (const std::exception& e) {
        NCCLNET_WARN(logger_, "init: plugin creation threw: %s", e.what());
        return ncclInternalError;
      }
      if (res != ncclSuccess) return res;
      if (!created) {
        NCCLNET_WARN(logger_, "init: create() returned success but no object");
        return ncclInternalError;
      }
      impl_.store(created.release(), std::memory_order_release);
    }
    refs_++;
    return ncclSuccess;
  }

  std::unique_ptr<Impl> release() {
    if (--refs_ > 0) return nullptr;
    legacyContexts_.clear();
    return std::unique_ptr<Impl>(impl_.exchange(nullptr, std::memory_order_acq_rel));
  }

  mutable std::mutex mutex_;
  std::atomic<Impl*> impl_{nullptr};
  int refs_ = 0;
  bool legacyPinned_ = false;
  Logger logger_;
  std::unordered_map<const void*, std::unique_ptr<CommContext>> contexts_;
  std::vector<std::unique_ptr<CommContext>> legacyContexts_;
};

}  // namespace ncclnet::detail

#pragma GCC visibility pop
