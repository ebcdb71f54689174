// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the entry points NCCLNET_EXPORT_RMA_PLUGIN puts in each RMA
// and proxy-type GIN table, adapting every version to the one class of
// <ncclnet/rma.hpp>. What each version differs in (NCCL's own adapters
// read: plugin/gin/gin_v11.cc, gin_v12.cc, plugin/rma/rma_v13.cc):
//   GIN v11  no contexts: NCCL passes the collComm where a context goes
//            (createContext NULL: *ginCtx = collComm), props v11;
//   GIN v12  v11 plus connect(nConnections, queueDepth) and a connection
//            index on iput/iputSignal;
//   GIN v13  = RMA v13: contexts from createContext(config, devHandle),
//            iget/iflush, every signal strong, a ginHandle per mhandle;
//   RMA v14  the class's own shape, plus isStrongSignal.
#pragma once

#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

#include "ncclnet/abi/gin.h"
#include "ncclnet/abi/rma.h"
#include "ncclnet/detail/plugin_state.hpp"
#include "ncclnet/detail/properties.hpp"
#include "ncclnet/object_model.hpp"  // fillNcclDefaults
#include "ncclnet/rma_contract.hpp"
#include "ncclnet/rma_types.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet::detail {

// GIN v11/v12's collComm: the class's collComm and the context the SDK made
// for it at connect. NCCL hands this pointer back as collComm and as ginCtx.
struct GinProxyComm {
  void* collComm = nullptr;
  void* rmaCtx = nullptr;
  int nContexts = 1;
};

template <class Impl>
struct RmaExports {
  static PluginState<Impl>& state() { return PluginState<Impl>::get(); }

  // Runs `body` on the live object (PluginState::call).
  template <class Body>
  static ncclResult_t call(const char* fn, Body&& body) {
    return state().call(fn, std::forward<Body>(body));
  }

  static ncclResult_t refuse(const char* fn, const char* why, ncclResult_t code) {
    Logger log = state().logger();
    NCCLNET_WARN(log, "%s: %s", fn, why);
    return code;
  }

  // A data call that succeeds must return a request: NCCL's proxies test
  // it (rma_proxy_progress.cc: "returned success with NULL request").
  static ncclResult_t needRequest(const char* fn, ncclResult_t res, void** request) {
    if (res == ncclSuccess && *request == nullptr) {
      return refuse(fn, "the plugin returned success and no request", ncclInternalError);
    }
    return res;
  }

  // ---- shared by every version ---------------------------------------

  static ncclResult_t init(void** ctx, uint64_t commId, ncclDebugLogger_t logFn) {
    return state().initComm(ctx, commId, nullptr, logFn, nullptr, /*abiHasProfiler=*/false);
  }
  static ncclResult_t finalize(void* ctx) { return state().finalizeComm(ctx); }

  static ncclResult_t devices(int* ndev) {
    if (ndev == nullptr) return refuse("devices", "ndev is NULL", ncclInternalError);
    return call("devices", [&](Impl& impl) { return impl.devices(ndev); });
  }

  static ncclResult_t propertiesV12(int dev, ncclNetProperties_v12_t* props) {
    if (props == nullptr) return refuse("getProperties", "props is NULL", ncclInternalError);
    fillNcclDefaults(dev, props);
    ncclResult_t res =
        call("getProperties", [&](Impl& impl) { return impl.getProperties(dev, props); });
    // NCCL's RMA loader refuses any other type (rma_v13.cc ncclRma_init), and
    // its GIN loader picks the proxy backend by it (gin.cc).
    props->netDeviceType = NCCL_NET_DEVICE_GIN_PROXY;
    if (res != ncclSuccess) return res;
    Logger log = state().logger();
    if constexpr (!rma::offersDmaBuf_v<Impl>) {
      clearDmaBufWithout("regMrSymDmaBuf", log, dev, props);
    }
    // The GIN proxy indexes its ring of NCCL_NET_MAX_REQUESTS * maxRecvs
    // slots through a mask, falling back to that size unchecked
    // (gin_host_proxy.cc ncclGinProxyCreateContext): a power of two only.
    if (props->maxRecvs < 1 || (props->maxRecvs & (props->maxRecvs - 1)) != 0) {
      int fixed = 1;
      while (fixed * 2 <= props->maxRecvs) fixed *= 2;
      NCCLNET_WARN(log, "getProperties(dev %d): maxRecvs %d lowered to %d, a power of two", dev,
                   props->maxRecvs, fixed);
      props->maxRecvs = fixed;
    }
    return ncclSuccess;
  }
  static ncclResult_t propertiesV11(int dev, ncclNetProperties_v11_t* props) {
    if (props == nullptr) return refuse("getProperties", "props is NULL", ncclInternalError);
    ncclNetProperties_v12_t v12{};
    ncclResult_t res = propertiesV12(dev, &v12);
    if (res != ncclSuccess) return res;
    const char* why = nullptr;
    res = propertiesFromV12(v12, props, &why);
    if (res != ncclSuccess) return refuse("getProperties", why, res);
    return ncclSuccess;
  }

  // The process's context stands in for a ctx this table cannot know:
  // NCCL 2.28 listens and connects with a NULL ctx for every communicator
  // after the first (plugin/net.cc inits GIN once), and 2.30.7's RMA proxy
  // connects with the *net* plugin's context (src/rma/rma_proxy.cc passes
  // comm->netContext), which this table's init never returned.
  static const CommContext& processContext() {
    static const CommContext context{};
    return context;
  }
  static const CommContext* contextOf(const char* fn, void* ctx) {
    if (ctx == nullptr) return &processContext();
    return state().lookup(fn, ctx);
  }
  static const CommContext* connectContextOf(void* ctx) {
    if (ctx == nullptr) return &processContext();
    const CommContext* known = state().find(ctx);
    return known != nullptr ? known : &processContext();
  }

  static ncclResult_t listen(void* ctx, int dev, void* handle, void** listenComm) {
    if (handle == nullptr || listenComm == nullptr) {
      return refuse("listen", "handle or listenComm is NULL", ncclInternalError);
    }
    const CommContext* context = contextOf("listen", ctx);
    if (context == nullptr) return ncclInternalError;
    return call("listen",
                [&](Impl& impl) { return impl.listen(*context, dev, handle, listenComm); });
  }

  // After an error NCCL drops the listen comm without closeListen (gin_host.cc
  // ncclGinConnectOnce, rma_proxy.cc ncclRmaProxyConnectOnce: closeListen
  // only follows a connect that succeeded), so here an error closes it for
  // the class and leaves *collComm NULL.
  static ncclResult_t connectCollective(void* ctx, void* handles[], int nranks, int rank,
                                        void* listenComm, void** collComm) {
    if (collComm != nullptr) *collComm = nullptr;
    ncclResult_t res;
    if (handles == nullptr || collComm == nullptr) {
      res = refuse("connect", "handles or collComm is NULL", ncclInternalError);
    } else if (nranks < 1 || rank < 0 || rank >= nranks) {
      res = refuse("connect", "rank is not inside 0..nranks-1", ncclInvalidArgument);
    } else {
      const CommContext* context = connectContextOf(ctx);
      res = call("connect", [&](Impl& impl) {
        return impl.connect(*context, handles, nranks, rank, listenComm, collComm);
      });
      if (res == ncclSuccess && *collComm == nullptr) {
        res = refuse("connect", "the plugin returned success and no collComm", ncclInternalError);
      }
    }
    if (res == ncclSuccess) return res;
    if (collComm != nullptr) *collComm = nullptr;
    if (listenComm != nullptr) closeListen(listenComm);
    return res;
  }

  static ncclResult_t createContext(void* collComm, const RmaConfig& config, void** rmaCtx) {
    if (rmaCtx == nullptr) return refuse("createContext", "rmaCtx is NULL", ncclInternalError);
    if (config.nContexts < 1) {
      return refuse("createContext", "nContexts is below 1", ncclInvalidArgument);
    }
    return call("createContext",
                [&](Impl& impl) { return impl.createContext(collComm, config, rmaCtx); });
  }

  static ncclResult_t regMrSym(void* collComm, void* data, size_t size, int type, uint64_t mrFlags,
                               void** mhandle) {
    if (mhandle == nullptr) return refuse("regMrSym", "mhandle is NULL", ncclInternalError);
    return call("regMrSym", [&](Impl& impl) {
      return impl.regMrSym(collComm, data, size, type, mrFlags, mhandle);
    });
  }
  static ncclResult_t regMrSymDmaBuf(void* collComm, void* data, size_t size, int type,
                                     uint64_t offset, int fd, uint64_t mrFlags, void** mhandle) {
    if (mhandle == nullptr) return refuse("regMrSymDmaBuf", "mhandle is NULL", ncclInternalError);
    if constexpr (rma::offersDmaBuf_v<Impl>) {  // else the slot is NULL
      return call("regMrSymDmaBuf", [&](Impl& impl) {
        return impl.regMrSymDmaBuf(collComm, data, size, type, offset, fd, mrFlags, mhandle);
      });
    }
    return ncclInternalError;
  }
  static ncclResult_t deregMrSym(void* collComm, void* mhandle) {
    return call("deregMrSym", [&](Impl& impl) { return impl.deregMrSym(collComm, mhandle); });
  }
  static ncclResult_t destroyContext(void* rmaCtx) {
    return call("destroyContext", [&](Impl& impl) { return impl.destroyContext(rmaCtx); });
  }
  static ncclResult_t closeColl(void* collComm) {
    return call("closeColl", [&](Impl& impl) { return impl.closeColl(collComm); });
  }
  static ncclResult_t closeListen(void* listenComm) {
    return call("closeListen", [&](Impl& impl) { return impl.closeListen(listenComm); });
  }

  static ncclResult_t iput(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle,
                           size_t size, uint64_t dstOff, void* dstMhandle, uint32_t rank,
                           void** request) {
    if (request == nullptr) return refuse("iput", "request is NULL", ncclInternalError);
    *request = nullptr;
    ncclResult_t res = call("iput", [&](Impl& impl) {
      return impl.iput(rmaCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                       request);
    });
    return needRequest("iput", res, request);
  }

  static ncclResult_t iputSignal(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle,
                                 size_t size, uint64_t dstOff, void* dstMhandle, uint32_t rank,
                                 uint64_t signalOff, void* signalMhandle, uint64_t signalValue,
                                 uint32_t signalOp, bool strong, void** request) {
    if (request == nullptr) return refuse("iputSignal", "request is NULL", ncclInternalError);
    *request = nullptr;
    if (signalOp != NCCL_GIN_SIGNAL_OP_INC && signalOp != NCCL_GIN_SIGNAL_OP_ADD) {
      return refuse("iputSignal", "signalOp is neither INC (1) nor ADD (2)", ncclInvalidArgument);
    }
    RmaSignal signal;
    signal.offset = signalOff;
    signal.mhandle = signalMhandle;
    // NCCL's own backends add 1 for INC whatever the value says
    // (ncclRmaIbProxyIPutSignal).
    signal.value = signalOp == NCCL_GIN_SIGNAL_OP_INC ? 1 : signalValue;
    signal.op = signalOp;
    signal.strong = strong;
    ncclResult_t res = call("iputSignal", [&](Impl& impl) {
      return impl.iputSignal(rmaCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                             signal, request);
    });
    return needRequest("iputSignal", res, request);
  }

  static ncclResult_t iget(void* rmaCtx, int context, uint64_t remoteOff, void* remoteMhandle,
                           size_t size, uint64_t localOff, void* localMhandle, uint32_t rank,
                           void** request) {
    if (request == nullptr) return refuse("iget", "request is NULL", ncclInternalError);
    *request = nullptr;
    ncclResult_t res = call("iget", [&](Impl& impl) {
      return impl.iget(rmaCtx, context, remoteOff, remoteMhandle, size, localOff, localMhandle,
                       rank, request);
    });
    return needRequest("iget", res, request);
  }

  static ncclResult_t iflush(void* rmaCtx, int context, void* mhandle, uint32_t rank,
                             void** request) {
    if (request == nullptr) return refuse("iflush", "request is NULL", ncclInternalError);
    *request = nullptr;  // NULL on success: nothing to wait for
    return call("iflush",
                [&](Impl& impl) { return impl.iflush(rmaCtx, context, mhandle, rank, request); });
  }

  static ncclResult_t test(void* collComm, void* request, int* done) {
    if (done == nullptr) return refuse("test", "done is NULL", ncclInternalError);
    if (request == nullptr) return refuse("test", "request is NULL", ncclInternalError);
    return call("test", [&](Impl& impl) { return impl.test(collComm, request, done); });
  }

  static ncclResult_t progress(void* rmaCtx) {
    if constexpr (rma::offersProgress_v<Impl>) {  // else the slot is NULL
      return call("progress", [&](Impl& impl) { return impl.progress(rmaCtx); });
    }
    return ncclInternalError;
  }

  static ncclResult_t queryLastError(void* rmaCtx, bool* hasError) {
    if (hasError == nullptr) return refuse("queryLastError", "hasError is NULL", ncclInternalError);
    return call("queryLastError",
                [&](Impl& impl) { return impl.queryLastError(rmaCtx, hasError); });
  }

  // ---- RMA v14: the class's shape -------------------------------------

  static ncclResult_t createContextV14(void* collComm, ncclRmaConfig_v14_t* config, void** rmaCtx) {
    if (config == nullptr) return refuse("createContext", "config is NULL", ncclInternalError);
    return createContext(collComm,
                         RmaConfig{config->nContexts, config->trafficClass,
                                   config->rankStride > 0 ? config->rankStride : 1},
                         rmaCtx);
  }

  // ---- RMA v15: v14 and a hint ------------------------------------------
  // optFlags' one bit (NCCL_RMA_OPT_FLAGS_AGGREGATE_REQUESTS) says more
  // operations follow on this (context, rank); every operation is still
  // started and completed on its own, so the hint changes nothing here.

  static ncclResult_t iputV15(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle,
                              size_t size, uint64_t dstOff, void* dstMhandle, uint32_t rank,
                              uint32_t /*optFlags*/, void** request) {
    return iput(rmaCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, request);
  }
  static ncclResult_t iputSignalV15(void* rmaCtx, int context, uint64_t srcOff, void* srcMhandle,
                                    size_t size, uint64_t dstOff, void* dstMhandle, uint32_t rank,
                                    uint64_t signalOff, void* signalMhandle, uint64_t signalValue,
                                    uint32_t signalOp, bool isStrongSignal, uint32_t /*optFlags*/,
                                    void** request) {
    return iputSignal(rmaCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                      signalOff, signalMhandle, signalValue, signalOp, isStrongSignal, request);
  }
  static ncclResult_t igetV15(void* rmaCtx, int context, uint64_t remoteOff, void* remoteMhandle,
                              size_t size, uint64_t localOff, void* localMhandle, uint32_t rank,
                              uint32_t /*optFlags*/, void** request) {
    return iget(rmaCtx, context, remoteOff, remoteMhandle, size, localOff, localMhandle, rank,
                request);
  }

  // ---- GIN v13 = RMA v13 ------------------------------------------------

  static ncclResult_t createContextV13(void* collComm, ncclGinConfig_v13_t* config, void** ginCtx,
                                       ncclNetDeviceHandle_v11_t** devHandle) {
    if (config == nullptr) return refuse("createContext", "config is NULL", ncclInternalError);
    // A proxy plugin has no device handle: 2.30.3 passes NULL, 2.30.7 (as
    // RMA v13) a pointer whose result it ignores.
    if (devHandle != nullptr) *devHandle = nullptr;
    return createContext(collComm, RmaConfig{config->nContexts, config->trafficClass, 1}, ginCtx);
  }
  static ncclResult_t regMrSymGin(void* collComm, void* data, size_t size, int type,
                                  uint64_t mrFlags, void** mhandle, void** ginHandle) {
    ncclResult_t res = regMrSym(collComm, data, size, type, mrFlags, mhandle);
    // NCCL passes the ginHandle to data calls, but the mhandle for inline
    // puts (gin_host_proxy.cc): one pointer serves as both.
    if (res == ncclSuccess && ginHandle != nullptr) *ginHandle = *mhandle;
    return res;
  }
  static ncclResult_t regMrSymDmaBufGin(void* collComm, void* data, size_t size, int type,
                                        uint64_t offset, int fd, uint64_t mrFlags, void** mhandle,
                                        void** ginHandle) {
    ncclResult_t res = regMrSymDmaBuf(collComm, data, size, type, offset, fd, mrFlags, mhandle);
    if (res == ncclSuccess && ginHandle != nullptr) *ginHandle = *mhandle;
    return res;
  }
  static ncclResult_t iputSignalStrong(void* ginCtx, int context, uint64_t srcOff, void* srcMhandle,
                                       size_t size, uint64_t dstOff, void* dstMhandle,
                                       uint32_t rank, uint64_t signalOff, void* signalMhandle,
                                       uint64_t signalValue, uint32_t signalOp, void** request) {
    return iputSignal(ginCtx, context, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                      signalOff, signalMhandle, signalValue, signalOp, /*strong=*/true, request);
  }

  // ---- GIN v11/v12: the SDK's comm carries the context ------------------

  static ncclResult_t connectProxy(void* ctx, void* handles[], int nranks, int rank,
                                   int nConnections, void* listenComm, void** collComm) {
    // nConnections is the contexts per collComm, which NCCL 2.29 sizes from
    // ginContextCount and NCCL_GIN_NCONTEXTS, past NCCL_GIN_MAX_CONNECTIONS
    // (that bounds the collComms: gin_host.cc ncclGinConnectOnce); the
    // class's createContext judges the count.
    if (collComm == nullptr || nConnections < 1) {
      if (listenComm != nullptr) closeListen(listenComm);  // as connectCollective's refusals
      return refuse("connect", "collComm is NULL or nConnections is below 1", ncclInvalidArgument);
    }
    *collComm = nullptr;
    auto proxy = std::make_unique<GinProxyComm>();
    proxy->nContexts = nConnections;
    ncclResult_t res = connectCollective(ctx, handles, nranks, rank, listenComm, &proxy->collComm);
    if (res != ncclSuccess) return res;
    res = createContext(proxy->collComm, RmaConfig{nConnections, NCCL_NET_TRAFFIC_CLASS_UNDEF, 1},
                        &proxy->rmaCtx);
    if (res != ncclSuccess) {
      closeColl(proxy->collComm);
      closeListen(listenComm);
      return res;
    }
    *collComm = proxy.release();
    return ncclSuccess;
  }
  static ncclResult_t connectV11(void* ctx, void* handles[], int nranks, int rank, void* listenComm,
                                 void** collComm) {
    return connectProxy(ctx, handles, nranks, rank, 1, listenComm, collComm);
  }
  static ncclResult_t connectV12(void* ctx, void* handles[], int nranks, int rank, int nConnections,
                                 int /*queueDepth: NCCL's own sizing*/, void* listenComm,
                                 void** collComm) {
    return connectProxy(ctx, handles, nranks, rank, nConnections, listenComm, collComm);
  }

  // NULL after one WARN line when NCCL passed no comm.
  static GinProxyComm* proxyOf(const char* fn, void* comm) {
    if (comm == nullptr) {
      refuse(fn, "collComm is NULL", ncclInternalError);
      return nullptr;
    }
    return static_cast<GinProxyComm*>(comm);
  }
  // A connection index outside what connect set up is NCCL's v11 adapter's
  // "does not support multiple connections".
  static ncclResult_t connectionOf(const char* fn, const GinProxyComm& proxy, int connection) {
    if (connection < 0 || connection >= proxy.nContexts) {
      return refuse(fn, "connectionId is outside the connections connect set up", ncclInvalidUsage);
    }
    return ncclSuccess;
  }

  static ncclResult_t regMrSymProxy(void* comm, void* data, size_t size, int type, uint64_t mrFlags,
                                    void** mhandle, void** ginHandle) {
    GinProxyComm* proxy = proxyOf("regMrSym", comm);
    if (proxy == nullptr) return ncclInternalError;
    return regMrSymGin(proxy->collComm, data, size, type, mrFlags, mhandle, ginHandle);
  }
  static ncclResult_t regMrSymDmaBufProxy(void* comm, void* data, size_t size, int type,
                                          uint64_t offset, int fd, uint64_t mrFlags, void** mhandle,
                                          void** ginHandle) {
    GinProxyComm* proxy = proxyOf("regMrSymDmaBuf", comm);
    if (proxy == nullptr) return ncclInternalError;
    return regMrSymDmaBufGin(proxy->collComm, data, size, type, offset, fd, mrFlags, mhandle,
                             ginHandle);
  }
  static ncclResult_t deregMrSymProxy(void* comm, void* mhandle) {
    GinProxyComm* proxy = proxyOf("deregMrSym", comm);
    if (proxy == nullptr) return ncclInternalError;
    return deregMrSym(proxy->collComm, mhandle);
  }
  static ncclResult_t closeCollProxy(void* comm) {
    std::unique_ptr<GinProxyComm> proxy(proxyOf("closeColl", comm));
    if (!proxy) return ncclInternalError;
    ncclResult_t destroyed = destroyContext(proxy->rmaCtx);
    ncclResult_t closed = closeColl(proxy->collComm);
    return destroyed != ncclSuccess ? destroyed : closed;
  }
  static ncclResult_t iputProxy(void* comm, uint64_t srcOff, void* srcMhandle, size_t size,
                                uint64_t dstOff, void* dstMhandle, uint32_t rank, int connection,
                                void** request) {
    GinProxyComm* proxy = proxyOf("iput", comm);
    if (proxy == nullptr) return ncclInternalError;
    if (ncclResult_t res = connectionOf("iput", *proxy, connection); res != ncclSuccess) return res;
    return iput(proxy->rmaCtx, connection, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                request);
  }
  static ncclResult_t iputV11(void* comm, uint64_t srcOff, void* srcMhandle, size_t size,
                              uint64_t dstOff, void* dstMhandle, uint32_t rank, void** request) {
    return iputProxy(comm, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, 0, request);
  }
  static ncclResult_t iputSignalProxy(void* comm, uint64_t srcOff, void* srcMhandle, size_t size,
                                      uint64_t dstOff, void* dstMhandle, uint32_t rank,
                                      uint64_t signalOff, void* signalMhandle, uint64_t signalValue,
                                      uint32_t signalOp, int connection, void** request) {
    GinProxyComm* proxy = proxyOf("iputSignal", comm);
    if (proxy == nullptr) return ncclInternalError;
    if (ncclResult_t res = connectionOf("iputSignal", *proxy, connection); res != ncclSuccess) {
      return res;
    }
    return iputSignal(proxy->rmaCtx, connection, srcOff, srcMhandle, size, dstOff, dstMhandle, rank,
                      signalOff, signalMhandle, signalValue, signalOp, /*strong=*/true, request);
  }
  static ncclResult_t iputSignalV11(void* comm, uint64_t srcOff, void* srcMhandle, size_t size,
                                    uint64_t dstOff, void* dstMhandle, uint32_t rank,
                                    uint64_t signalOff, void* signalMhandle, uint64_t signalValue,
                                    uint32_t signalOp, void** request) {
    return iputSignalProxy(comm, srcOff, srcMhandle, size, dstOff, dstMhandle, rank, signalOff,
                           signalMhandle, signalValue, signalOp, 0, request);
  }
  static ncclResult_t testProxy(void* comm, void* request, int* done) {
    GinProxyComm* proxy = proxyOf("test", comm);
    if (proxy == nullptr) return ncclInternalError;
    return test(proxy->collComm, request, done);
  }
  static ncclResult_t progressProxy(void* comm) {
    GinProxyComm* proxy = proxyOf("ginProgress", comm);
    if (proxy == nullptr) return ncclInternalError;
    return progress(proxy->rmaCtx);
  }
  // 2.30's v11/v12 adapters pass the collComm as ginCtx (createContext is
  // NULL); 2.28 and 2.29 never ask a proxy plugin.
  static ncclResult_t queryLastErrorProxy(void* comm, bool* hasError) {
    GinProxyComm* proxy = proxyOf("queryLastError", comm);
    if (proxy == nullptr) return ncclInternalError;
    return queryLastError(proxy->rmaCtx, hasError);
  }
};

// RMA v13, v14 and v15 share one layout; these are the members whose
// signatures differ between them.
template <class Impl, int V>
struct RmaVersion;

template <class Impl>
struct RmaVersion<Impl, 14> {
  using E = RmaExports<Impl>;
  static constexpr auto createContext = E::createContextV14;
  static constexpr auto regMrSym = E::regMrSym;
  static constexpr auto regMrSymDmaBuf = E::regMrSymDmaBuf;
  static constexpr auto iput = E::iput;
  static constexpr auto iputSignal = E::iputSignal;
  static constexpr auto iget = E::iget;
};

template <class Impl>
struct RmaVersion<Impl, 15> {
  using E = RmaExports<Impl>;
  static constexpr auto createContext = E::createContextV14;
  static constexpr auto regMrSym = E::regMrSym;
  static constexpr auto regMrSymDmaBuf = E::regMrSymDmaBuf;
  static constexpr auto iput = E::iputV15;
  static constexpr auto iputSignal = E::iputSignalV15;
  static constexpr auto iget = E::igetV15;
};

// RMA v13 is GIN v13's layout (rma/rma_v13.h: typedef ncclGin_v13_t).
template <class Impl>
struct RmaVersion<Impl, 13> {
  using E = RmaExports<Impl>;
  static constexpr auto createContext = E::createContextV13;
  static constexpr auto regMrSym = E::regMrSymGin;
  static constexpr auto regMrSymDmaBuf = E::regMrSymDmaBufGin;
  static constexpr auto iput = E::iput;
  static constexpr auto iputSignal = E::iputSignalStrong;
  static constexpr auto iget = E::iget;
};

template <class Table, class Impl, int V>
constexpr Table rmaTable() {
  using E = RmaExports<Impl>;
  using Own = RmaVersion<Impl, V>;
  return {Impl::kName,
          E::init,
          E::devices,
          E::propertiesV12,
          E::listen,
          E::connectCollective,
          Own::createContext,
          Own::regMrSym,
          rma::offersDmaBuf_v<Impl> ? Own::regMrSymDmaBuf : nullptr,
          E::deregMrSym,
          E::destroyContext,
          E::closeColl,
          E::closeListen,
          Own::iput,
          Own::iputSignal,
          Own::iget,
          E::iflush,
          E::test,
          rma::offersProgress_v<Impl> ? E::progress : nullptr,
          E::queryLastError,
          E::finalize};
}

// GIN v11 and v12 share one layout; these are the members whose signatures
// differ between them.
template <class Impl, int V>
struct GinProxyVersion;

template <class Impl>
struct GinProxyVersion<Impl, 12> {
  using E = RmaExports<Impl>;
  static constexpr auto connect = E::connectV12;
  static constexpr auto iput = E::iputProxy;
  static constexpr auto iputSignal = E::iputSignalProxy;
};

template <class Impl>
struct GinProxyVersion<Impl, 11> {
  using E = RmaExports<Impl>;
  static constexpr auto connect = E::connectV11;
  static constexpr auto iput = E::iputV11;
  static constexpr auto iputSignal = E::iputSignalV11;
};

// createContext and destroyContext stay NULL: NCCL then uses the collComm
// as the context (2.30's plugin/gin/gin_v11.cc); 2.28/2.29 never call them
// for a proxy plugin.
template <class Table, class Impl, int V>
constexpr Table ginProxyTable() {
  using E = RmaExports<Impl>;
  using Own = GinProxyVersion<Impl, V>;
  return {Impl::kName,
          E::init,
          E::devices,
          E::propertiesV11,
          E::listen,
          Own::connect,
          nullptr,
          E::regMrSymProxy,
          rma::offersDmaBuf_v<Impl> ? E::regMrSymDmaBufProxy : nullptr,
          E::deregMrSymProxy,
          nullptr,
          E::closeCollProxy,
          E::closeListen,
          Own::iput,
          Own::iputSignal,
          E::testProxy,
          rma::offersProgress_v<Impl> ? E::progressProxy : nullptr,
          E::queryLastErrorProxy,
          E::finalize};
}

// A class that fails the contract gets empty tables: the contract's
// messages are then the only errors.
template <class Table, class Impl, int V>
constexpr Table rmaTableOf() {
  if constexpr (rma::meetsContract_v<Impl>) {
    return rmaTable<Table, Impl, V>();
  } else {
    return Table{};
  }
}
template <class Table, class Impl, int V>
constexpr Table ginTableOf() {
  if constexpr (!rma::meetsContract_v<Impl>) {
    return Table{};
  } else if constexpr (V == 13) {
    return rmaTable<Table, Impl, V>();
  } else {
    return ginProxyTable<Table, Impl, V>();
  }
}

}  // namespace ncclnet::detail

#pragma GCC visibility pop

#define NCCLNET_DETAIL_EXPORT_RMA_TABLE(Impl, N)                                                \
  extern "C" __attribute__((visibility("default"))) const ncclRma_v##N##_t ncclRmaPlugin_v##N = \
      ::ncclnet::detail::rmaTableOf<ncclRma_v##N##_t, Impl, N>();
#define NCCLNET_DETAIL_EXPORT_GIN_TABLE(Impl, N)                                                \
  extern "C" __attribute__((visibility("default"))) const ncclGin_v##N##_t ncclGinPlugin_v##N = \
      ::ncclnet::detail::ginTableOf<ncclGin_v##N##_t, Impl, N>();
