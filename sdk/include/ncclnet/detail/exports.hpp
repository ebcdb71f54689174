// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the C entry points behind every export table. Exports<Impl>
// has one static function per slot shape of ncclNet_v6 ... ncclNet_v12;
// each adapts its version's arguments to the v12 member of the one class
// (export_tables.hpp picks, per version, which of them fills a slot).
#pragma once

#include <exception>

#include "ncclnet/abi/net.h"
#include "ncclnet/detail/abi_versions.hpp"
#include "ncclnet/detail/offers_optional.hpp"
#include "ncclnet/detail/plugin_state.hpp"
#include "ncclnet/detail/properties.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/object_model.hpp"  // fillNcclDefaults
#include "ncclnet/plugin_types.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet::detail {

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
  // NULL is what a failed regMr left in NCCL's slot, and NCCL's teardown
  // deregisters it (src/transport/net.cc sendProxyFree, recvProxyFree): an
  // error there would end NCCL's cleanup of every later connection
  // (src/proxy.cc ncclProxyFreeConnections stops at the first).
  static ncclResult_t deregMr(void* comm, void* mhandle) {
    if (mhandle == nullptr) return ncclSuccess;
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
  // A NULL comm is what a failed connect or accept left: NCCL marks the
  // connection connected all the same and closes it at teardown
  // (src/proxy.cc proxyProgressAsync, src/transport/net.cc sendProxyFree,
  // recvProxyFree); as NCCL's own transports do, that succeeds.
  static ncclResult_t closeSend(void* comm) {
    if (comm == nullptr) return ncclSuccess;
    return call<Impl>("closeSend", [&](Impl& impl) { return impl.closeSend(comm); });
  }
  static ncclResult_t closeRecv(void* comm) {
    if (comm == nullptr) return ncclSuccess;
    return call<Impl>("closeRecv", [&](Impl& impl) { return impl.closeRecv(comm); });
  }
  static ncclResult_t closeListen(void* comm) {
    if (comm == nullptr) return ncclSuccess;
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

}  // namespace ncclnet::detail

#pragma GCC visibility pop
