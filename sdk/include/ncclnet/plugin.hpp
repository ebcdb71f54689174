// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the plugin author's interface.
//
// Write one class with ncclNet_v12 semantics and export it with
//
//   NCCLNET_EXPORT_PLUGIN(MyNet)
//
// which defines the const tables ncclNetPlugin_v6 ... ncclNetPlugin_v12 and
// nothing else. The SDK adapts every older version to the one class, the way
// NCCL's own compat layer adapts old plugins to its core (see docs/abi.md).
//
// The class, in full (the last five members are optional: leave one out and
// its slot is NULL in every table, which NCCL reads as "not supported"):
//
//   class MyNet {
//    public:
//     static constexpr const char* kName = "my-net";   // NCCL_NET matches this
//     // Called on the first init of the process (of any ABI version); the
//     // object lives until the last finalize (v11+), or until the library is
//     // unloaded when an older NCCL (which never finalizes) loaded it.
//     static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<MyNet>* out);
//     ncclResult_t devices(int* ndev);
//     ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props);
//     ncclResult_t listen(const ncclnet::CommContext& ctx, int dev, void* handle,
//                         void** listenComm);
//     ncclResult_t connect(const ncclnet::CommContext& ctx, int dev, void* handle, void** sendComm,
//                          ncclNetDeviceHandle_v12_t** sendDevComm);
//     ncclResult_t accept(void* listenComm, void** recvComm,
//                         ncclNetDeviceHandle_v12_t** recvDevComm);
//     ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle);
//     ncclResult_t deregMr(void* comm, void* mhandle);
//     ncclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle,
//                        void* phandle, void** request);
//     ncclResult_t irecv(void* recvComm, int n, void** data, size_t* sizes, int* tags,
//                        void** mhandles, void** phandles, void** request);
//     ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
//                         void** request);
//     ncclResult_t test(void* request, int* done, int* sizes);
//     ncclResult_t closeSend(void* sendComm);
//     ncclResult_t closeRecv(void* recvComm);
//     ncclResult_t closeListen(void* listenComm);
//     // optional:
//     ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
//                              int fd, void** mhandle);
//     ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr_mhandle);
//     ncclResult_t irecvConsumed(void* recvComm, int n, void* request);
//     ncclResult_t makeVDevice(int* d, ncclNetVDeviceProps_v12_t* props);
//     ncclResult_t setNetAttr(const ncclnet::CommContext& ctx, const ncclNetAttr_v12_t& attr);
//     // optional, for tools: every knob the plugin read (ncclnet-info --params)
//     const ncclnet::ParamTable& params() const;
//   };
//
// The export macro checks the class first (<ncclnet/plugin_contract.hpp>):
// each member missing, or declared with another signature than the one
// above, is one compile error that names it and spells its signature.
//
// Exceptions never cross the C boundary: one escaping a member becomes
// ncclInternalError and a WARN line.
#pragma once

#include <atomic>
#include <climits>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/detail/properties.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/object_model.hpp"
#include "ncclnet/params.hpp"
#include "ncclnet/plugin_contract.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet {

// What a plugin gets when it is created.
struct InitArgs {
  Logger logger;                              // prefix "NET/<kName>"
  ncclProfilerCallback_t profiler = nullptr;  // NULL before v10
  // NCCL called init through a table whose init carries the profiler
  // callback (v10+). NCCL then always passes one: a plugin may call it
  // without a NULL check.
  bool abiHasProfiler = false;
};

// One per communicator (v11+ init), or one per traffic class when an older
// NCCL drives the plugin. Owned by the SDK; valid until its finalize.
struct CommContext {
  uint64_t commId = 0;
  int trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF;
};

namespace detail {

// Which optional slots a class offers: those it names (a class on the
// object model is adapted, and offers what its model declares).
template <class T>
struct OffersOptional {
  static constexpr bool regMrDmaBuf = names_regMrDmaBuf_v<T>;
  static constexpr bool getDeviceMr = names_getDeviceMr_v<T>;
  static constexpr bool irecvConsumed = names_irecvConsumed_v<T>;
  static constexpr bool makeVDevice = names_makeVDevice_v<T>;
  static constexpr bool setNetAttr = names_setNetAttr_v<T>;
};

// The process-wide state the C ABI forces on a plugin: functions such as
// devices() carry no context, so the one implementation object lives here.
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

  // v11+: one init per communicator, each with its own context.
  ncclResult_t initComm(void** ctx, uint64_t commId, const ncclNetCommConfig_v12_t* config,
                        ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
    if (ctx == nullptr) return fail("init", "ctx is NULL");
    std::lock_guard<std::mutex> lock(mutex_);
    ncclResult_t res = acquire(logFn, profFn, /*abiHasProfiler=*/true);
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

// Every exported entry point runs through call(): it finds the plugin
// object, and turns an escaping exception into an error and a log line.
template <class Impl, class F>
ncclResult_t call(const char* fn, F&& body) noexcept {
  auto& state = PluginState<Impl>::get();
  Impl* impl = state.impl();
  if (impl == nullptr) return state.fail(fn, "called before init (or after the last finalize)");
  try {
    return body(*impl);
  } catch (const std::exception& e) {
    Logger log = state.logger();
    NCCLNET_WARN(log, "%s threw: %s", fn, e.what());
  } catch (...) {
    Logger log = state.logger();
    NCCLNET_WARN(log, "%s threw a non-standard exception", fn);
  }
  return ncclInternalError;
}

template <class Impl>
struct Exports {
  using State = PluginState<Impl>;

  // ---- init / finalize -------------------------------------------------
  static ncclResult_t initV6(ncclDebugLogger_t logFn) {
    return State::get().initLegacy(logFn, nullptr, /*abiHasProfiler=*/false);
  }
  static ncclResult_t initV10(ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
    return State::get().initLegacy(logFn, profFn, /*abiHasProfiler=*/true);
  }
  static ncclResult_t initV11(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config,
                              ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
    return State::get().initComm(ctx, commId, config, logFn, profFn);
  }
  static ncclResult_t finalize(void* ctx) { return State::get().finalizeComm(ctx); }

  // ---- devices ---------------------------------------------------------
  static ncclResult_t devices(int* ndev) {
    return call<Impl>("devices", [&](Impl& impl) {
      if (ndev == nullptr) return State::get().fail("devices", "ndev is NULL");
      return impl.devices(ndev);
    });
  }

  template <class Props>
  static ncclResult_t getProperties(int dev, Props* props) {
    return call<Impl>("getProperties", [&](Impl& impl) {
      if (props == nullptr) return State::get().fail("getProperties", "props is NULL");
      ncclNetProperties_v12_t v12;
      fillNcclDefaults(dev, &v12);
      ncclResult_t res = impl.getProperties(dev, &v12);
      if (res != ncclSuccess) return res;
      const char* why = "";
      res = propertiesFromV12(v12, props, &why);
      if (res != ncclSuccess) {
        Logger log = State::get().logger();
        NCCLNET_WARN(log, "getProperties(dev %d): %s", dev, why);
      }
      return res;
    });
  }

  template <class VProps>
  static ncclResult_t makeVDevice(int* d, VProps* props) {
    return call<Impl>("makeVDevice", [&](Impl& impl) {
      ncclNetVDeviceProps_v12_t v12;
      if (props == nullptr || vPropsToV12(*props, &v12) != ncclSuccess) {
        return State::get().fail("makeVDevice", "props is NULL or ndevs is out of range");
      }
      return impl.makeVDevice(d, &v12);
    });
  }

  // ---- connection setup --------------------------------------------------
  static ncclResult_t listenV6(int dev, void* handle, void** listenComm) {
    const CommContext* ctx = State::get().legacyContext(NCCL_NET_TRAFFIC_CLASS_UNDEF);
    return call<Impl>("listen",
                      [&](Impl& impl) { return impl.listen(*ctx, dev, handle, listenComm); });
  }
  static ncclResult_t listenV11(void* ctx, int dev, void* handle, void** listenComm) {
    const CommContext* context = State::get().lookup("listen", ctx);
    if (context == nullptr) return ncclInternalError;
    return call<Impl>("listen",
                      [&](Impl& impl) { return impl.listen(*context, dev, handle, listenComm); });
  }

  static ncclResult_t connectV6(int dev, void* handle, void** sendComm) {
    return connectV7(dev, handle, sendComm, nullptr);
  }
  static ncclResult_t connectV7(int dev, void* handle, void** sendComm,
                                ncclNetDeviceHandle_v12_t** sendDevComm) {
    const CommContext* ctx = State::get().legacyContext(NCCL_NET_TRAFFIC_CLASS_UNDEF);
    return call<Impl>("connect", [&](Impl& impl) {
      return impl.connect(*ctx, dev, handle, sendComm, sendDevComm);
    });
  }
  static ncclResult_t connectV10(int dev, ncclNetCommConfig_v10_t* config, void* handle,
                                 void** sendComm, ncclNetDeviceHandle_v12_t** sendDevComm) {
    int trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
    const CommContext* ctx = State::get().legacyContext(trafficClass);
    return call<Impl>("connect", [&](Impl& impl) {
      return impl.connect(*ctx, dev, handle, sendComm, sendDevComm);
    });
  }
  static ncclResult_t connectV11(void* ctx, int dev, void* handle, void** sendComm,
                                 ncclNetDeviceHandle_v12_t** sendDevComm) {
    const CommContext* context = State::get().lookup("connect", ctx);
    if (context == nullptr) return ncclInternalError;
    return call<Impl>("connect", [&](Impl& impl) {
      return impl.connect(*context, dev, handle, sendComm, sendDevComm);
    });
  }

  static ncclResult_t acceptV6(void* listenComm, void** recvComm) {
    return accept(listenComm, recvComm, nullptr);
  }
  static ncclResult_t accept(void* listenComm, void** recvComm,
                             ncclNetDeviceHandle_v12_t** recvDevComm) {
    return call<Impl>("accept",
                      [&](Impl& impl) { return impl.accept(listenComm, recvComm, recvDevComm); });
  }

  static ncclResult_t setNetAttr(void* ctx, ncclNetAttr_v12_t* attr) {
    const CommContext* context = State::get().lookup("setNetAttr", ctx);
    if (context == nullptr) return ncclInternalError;
    return call<Impl>("setNetAttr", [&](Impl& impl) {
      if (attr == nullptr) return State::get().fail("setNetAttr", "attr is NULL");
      return impl.setNetAttr(*context, *attr);
    });
  }

  // ---- memory registration -----------------------------------------------
  // The int sizes of tables v6..v8 are refused where NCCL's compat layer
  // would never produce them (abi_versions.hpp, the row of version V).
  template <int V>
  static ncclResult_t regMrInt(void* comm, void* data, int size, int type, void** mhandle) {
    if (const char* why = refuseIntSize(size, kAbi<V>.maxRegMrSize)) {
      return State::get().fail("regMr", why);
    }
    return regMr(comm, data, static_cast<size_t>(size), type, mhandle);
  }
  static ncclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
    return call<Impl>("regMr",
                      [&](Impl& impl) { return impl.regMr(comm, data, size, type, mhandle); });
  }
  static ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset,
                                  int fd, void** mhandle) {
    return call<Impl>("regMrDmaBuf", [&](Impl& impl) {
      return impl.regMrDmaBuf(comm, data, size, type, offset, fd, mhandle);
    });
  }
  static ncclResult_t deregMr(void* comm, void* mhandle) {
    return call<Impl>("deregMr", [&](Impl& impl) { return impl.deregMr(comm, mhandle); });
  }
  static ncclResult_t getDeviceMr(void* comm, void* mhandle, void** dptr) {
    return call<Impl>("getDeviceMr",
                      [&](Impl& impl) { return impl.getDeviceMr(comm, mhandle, dptr); });
  }

  // ---- data path ---------------------------------------------------------
  template <int V>
  static ncclResult_t isendInt(void* comm, void* data, int size, int tag, void* mhandle,
                               void** request) {
    if (const char* why = refuseIntSize(size, kAbi<V>.maxMessageSize)) {
      return State::get().fail("isend", why);
    }
    return isend(comm, data, static_cast<size_t>(size), tag, mhandle, nullptr, request);
  }
  static ncclResult_t isendV9(void* comm, void* data, size_t size, int tag, void* mhandle,
                              void** request) {
    return isend(comm, data, size, tag, mhandle, nullptr, request);
  }
  static ncclResult_t isend(void* comm, void* data, size_t size, int tag, void* mhandle,
                            void* phandle, void** request) {
    return call<Impl>("isend", [&](Impl& impl) {
      return impl.isend(comm, data, size, tag, mhandle, phandle, request);
    });
  }

  template <int V>
  static ncclResult_t irecvInt(void* comm, int n, void** data, int* sizes, int* tags,
                               void** mhandles, void** request) {
    size_t wide[kMaxGroupedRecvs];
    if (const char* why = widenRecvSizes(kAbi<V>, n, sizes, wide)) {
      return State::get().fail("irecv", why);
    }
    return irecv(comm, n, data, wide, tags, mhandles, nullptr, request);
  }
  static ncclResult_t irecvV9(void* comm, int n, void** data, size_t* sizes, int* tags,
                              void** mhandles, void** request) {
    return irecv(comm, n, data, sizes, tags, mhandles, nullptr, request);
  }
  static ncclResult_t irecv(void* comm, int n, void** data, size_t* sizes, int* tags,
                            void** mhandles, void** phandles, void** request) {
    return call<Impl>("irecv", [&](Impl& impl) {
      return impl.irecv(comm, n, data, sizes, tags, mhandles, phandles, request);
    });
  }

  static ncclResult_t iflush(void* comm, int n, void** data, int* sizes, void** mhandles,
                             void** request) {
    return call<Impl>(
        "iflush", [&](Impl& impl) { return impl.iflush(comm, n, data, sizes, mhandles, request); });
  }
  static ncclResult_t test(void* request, int* done, int* sizes) {
    return call<Impl>("test", [&](Impl& impl) { return impl.test(request, done, sizes); });
  }
  static ncclResult_t irecvConsumed(void* comm, int n, void* request) {
    return call<Impl>("irecvConsumed",
                      [&](Impl& impl) { return impl.irecvConsumed(comm, n, request); });
  }

  // ---- teardown ----------------------------------------------------------
  static ncclResult_t closeSend(void* comm) {
    return call<Impl>("closeSend", [&](Impl& impl) { return impl.closeSend(comm); });
  }
  static ncclResult_t closeRecv(void* comm) {
    return call<Impl>("closeRecv", [&](Impl& impl) { return impl.closeRecv(comm); });
  }
  static ncclResult_t closeListen(void* comm) {
    return call<Impl>("closeListen", [&](Impl& impl) { return impl.closeListen(comm); });
  }

  // ---- optional slots: NULL when the class does not name the member ----
  // (if constexpr keeps the adapter from being instantiated at all then.
  // Tables exist only for a class that meets the contract, where a named
  // optional member has its exact signature.)
  static constexpr decltype(ncclNet_v12_t::regMrDmaBuf) regMrDmaBufSlot() {
    if constexpr (OffersOptional<Impl>::regMrDmaBuf)
      return &Exports::regMrDmaBuf;
    else
      return nullptr;
  }
  static constexpr decltype(ncclNet_v12_t::getDeviceMr) getDeviceMrSlot() {
    if constexpr (OffersOptional<Impl>::getDeviceMr)
      return &Exports::getDeviceMr;
    else
      return nullptr;
  }
  static constexpr decltype(ncclNet_v12_t::irecvConsumed) irecvConsumedSlot() {
    if constexpr (OffersOptional<Impl>::irecvConsumed)
      return &Exports::irecvConsumed;
    else
      return nullptr;
  }
  template <class VProps>
  static constexpr ncclResult_t (*makeVDeviceSlot())(int*, VProps*) {
    if constexpr (OffersOptional<Impl>::makeVDevice)
      return &Exports::makeVDevice<VProps>;
    else
      return nullptr;
  }
  static constexpr decltype(ncclNet_v12_t::setNetAttr) setNetAttrSlot() {
    if constexpr (OffersOptional<Impl>::setNetAttr)
      return &Exports::setNetAttr;
    else
      return nullptr;
  }
};

}  // namespace detail
}  // namespace ncclnet

#pragma GCC visibility pop

#include "ncclnet/detail/export_tables.hpp"
#include "ncclnet/detail/object_adapter.hpp"

#define NCCLNET_DETAIL_EXPORT_TABLE(Impl, N)                                                    \
  extern "C" __attribute__((visibility("default"))) const ncclNet_v##N##_t ncclNetPlugin_v##N = \
      ::ncclnet::detail::Tables<                                                                \
          typename ::ncclnet::detail::ExportedClass<Impl>::type>::template table<N>();

// Checks `Impl` against the contract above, then defines ncclNetPlugin_v6
// ... ncclNetPlugin_v12 for it (one table per row of
// ncclnet/detail/abi_versions.hpp). Use once per plugin library, at
// namespace scope.
#define NCCLNET_EXPORT_PLUGIN(Impl)         \
  NCCLNET_CHECK_PLUGIN_CONTRACT(Impl)       \
  NCCLNET_CHECK_OBJECT_MODEL_CONTRACT(Impl) \
  NCCLNET_ABI_FOR_EACH_VERSION(NCCLNET_DETAIL_EXPORT_TABLE, Impl)
