// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk: the entry points NCCLNET_EXPORT_COLLNET_PLUGIN puts in each
// CollNet table, adapting every version to the one class of
// <ncclnet/collnet.hpp>. What each version differs in (NCCL's own adapters
// read: plugin/net/net_v6.cc ... net_v11.cc, getNcclCollNet_vN and
// ncclCollNet_init; net_v12.cc hands the v12 table over unchanged):
//   v6, v7   init(logger) once per process, listen(dev, ...) without a
//            context, regMr(int size), iallreduce(int count), no
//            iallgather/ireducescatter, no maxCollBytes (NCCL uses 512 MiB);
//   v8       regMr(size_t); iallgather/ireducescatter over parts with
//            32-bit sizes;
//   v9, v10  size_t counts and part sizes, makeVDevice, maxCollBytes;
//   v11      init(ctx, commId, logger) per communicator, listen(ctx, ...),
//            finalize(ctx);
//   v12      v11 with v12's properties.
#pragma once

#include <climits>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

#include "ncclnet/abi/collnet.h"
#include "ncclnet/collnet_contract.hpp"
#include "ncclnet/detail/plugin_state.hpp"
#include "ncclnet/detail/properties.hpp"
#include "ncclnet/log.hpp"
#include "ncclnet/object_model.hpp"  // fillNcclDefaults
#include "ncclnet/plugin_types.hpp"

#pragma GCC visibility push(hidden)

namespace ncclnet::detail {

// The most parts an iallgather or ireducescatter of tables v8 to v11 may
// carry: their parts are copied into v12 parts on the stack. NCCL passes
// one (transport/coll_net.cc, collNetIallgather; plugin/net/net_v8.cc
// ncclCollNet_iallgather refuses more).
inline constexpr int kMaxCollNetParts = 8;

template <class Impl>
struct CollNetExports {
  static PluginState<Impl>& state() { return PluginState<Impl>::get(); }

  // Runs `body` on the live object (PluginState::call).
  template <class Body>
  static ncclResult_t call(const char* fn, Body&& body) {
    return state().call(fn, std::forward<Body>(body));
  }

  static ncclResult_t refuse(const char* fn, const char* why) { return state().fail(fn, why); }

  // ---- init / finalize -------------------------------------------------
  // v6..v10: NCCL's adapters init the plugin once and never finalize it
  // (net_v6.cc ... net_v10.cc, ncclCollNet_init / ncclCollNet_finalize
  // only count), so the object lives until the library is unloaded.
  static ncclResult_t initV6(ncclDebugLogger_t logFn) {
    return state().initLegacy(logFn, nullptr, /*abiHasProfiler=*/false);
  }
  // v11+: one init per communicator (plugin/net.cc ncclNetPluginInit), one
  // finalize each (ncclNetPluginFinalize); the last destroys the object.
  static ncclResult_t initV11(void** ctx, uint64_t commId, ncclDebugLogger_t logFn) {
    return state().initComm(ctx, commId, nullptr, logFn, nullptr, /*abiHasProfiler=*/false);
  }
  static ncclResult_t finalize(void* ctx) { return state().finalizeComm(ctx); }

  static ncclResult_t devices(int* ndev) {
    if (ndev == nullptr) return refuse("devices", "ndev is NULL");
    return call("devices", [&](Impl& impl) { return impl.devices(ndev); });
  }

  // ---- properties --------------------------------------------------------
  static ncclResult_t propertiesV12(int dev, ncclNetProperties_v12_t* props) {
    if (props == nullptr) return refuse("getProperties", "props is NULL");
    fillNcclDefaults(dev, props);
    ncclResult_t res =
        call("getProperties", [&](Impl& impl) { return impl.getProperties(dev, props); });
    if (res != ncclSuccess) return res;
    if constexpr (!collnet::offersDmaBuf_v<Impl>) {
      clearDmaBufWithout("regMrDmaBuf", state().logger(), dev, props);
    }
    // GPU memory is flushed through iflush's int size: past 2 GiB it would
    // wrap. 1 GiB is NCCL's own largest network operation (NCCL_MAX_NET_SIZE).
    if ((props->ptrSupport & (NCCL_PTR_CUDA | NCCL_PTR_DMABUF)) != 0 &&
        props->maxCollBytes > static_cast<size_t>(INT_MAX)) {
      constexpr size_t kLargestFlush = NCCL_MAX_NET_SIZE;
      Logger log = state().logger();
      NCCLNET_INFO(log, NCCL_NET,
                   "getProperties(dev %d): maxCollBytes %zu lowered to %zu: iflush's size is an "
                   "int",
                   dev, props->maxCollBytes, kLargestFlush);
      props->maxCollBytes = kLargestFlush;
    }
    return ncclSuccess;
  }

  template <class Props>
  static ncclResult_t properties(int dev, Props* props) {
    if constexpr (std::is_same_v<Props, ncclNetProperties_v12_t>) {
      return propertiesV12(dev, props);
    }
    if (props == nullptr) return refuse("getProperties", "props is NULL");
    ncclNetProperties_v12_t v12;
    ncclResult_t res = propertiesV12(dev, &v12);
    if (res != ncclSuccess) return res;
    if constexpr (!has_maxCollBytes_v<Props>) {
      // v6..v8: NCCL reads neither the device type nor maxCollBytes from
      // these tables; it takes a host device and 512 MiB
      // (NCCL_MAX_COLLNET_SIZE; net_v6.cc ... net_v8.cc,
      // ncclCollNet_getProperties). Saying host here keeps another type
      // from failing v6's conversion, whose struct has no type field.
      v12.netDeviceType = NCCL_NET_DEVICE_HOST;
      v12.netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
      if (v12.maxCollBytes < NCCL_MAX_COLLNET_SIZE) {
        Logger log = state().logger();
        NCCLNET_WARN(log,
                     "getProperties(dev %d): maxCollBytes %zu is not passed on by this table; "
                     "NCCL assumes %llu and may post operations the class refuses",
                     dev, v12.maxCollBytes, static_cast<unsigned long long>(NCCL_MAX_COLLNET_SIZE));
      }
    }
    const char* why = "";
    res = propertiesFromV12(v12, props, &why);
    if (res != ncclSuccess) {
      Logger log = state().logger();
      NCCLNET_WARN(log, "getProperties(dev %d): %s", dev, why);
    }
    return res;
  }

  template <class VProps>
  static ncclResult_t makeVDevice(int* d, VProps* props) {
    if (d == nullptr || props == nullptr) return refuse("makeVDevice", "d or props is NULL");
    ncclNetVDeviceProps_v12_t v12;
    if (vPropsToV12(*props, &v12) != ncclSuccess) {
      return refuse("makeVDevice", "props->ndevs is out of range");
    }
    if constexpr (collnet::offersMakeVDevice_v<Impl>) {  // else the slot is NULL
      return call("makeVDevice", [&](Impl& impl) { return impl.makeVDevice(d, &v12); });
    }
    return ncclInternalError;
  }

  // ---- connection setup --------------------------------------------------
  // v6..v10 carry no context: the process's one, as for the net table's
  // listen of those versions.
  static ncclResult_t listenV6(int dev, void* handle, void** listenComm) {
    if (handle == nullptr || listenComm == nullptr) {
      return refuse("listen", "handle or listenComm is NULL");
    }
    const CommContext* context = state().legacyContext(NCCL_NET_TRAFFIC_CLASS_UNDEF);
    return call("listen",
                [&](Impl& impl) { return impl.listen(*context, dev, handle, listenComm); });
  }
  // v11+: the context init returned (NCCL passes comm->collNetContext:
  // transport/coll_net.cc sharedListen).
  static ncclResult_t listenV11(void* ctx, int dev, void* handle, void** listenComm) {
    if (handle == nullptr || listenComm == nullptr) {
      return refuse("listen", "handle or listenComm is NULL");
    }
    const CommContext* context = state().lookup("listen", ctx);
    if (context == nullptr) return ncclInternalError;
    return call("listen",
                [&](Impl& impl) { return impl.listen(*context, dev, handle, listenComm); });
  }

  // Success with *collComm NULL is the class declining the group (coll_net.cc
  // sharedConnect counts only a non-NULL collComm). After an error NCCL
  // drops the listen comm without closeListen and still reads *collComm
  // (sharedConnect), so here an error leaves *collComm NULL and closes the
  // listen comm for the class, which must not close it itself.
  static ncclResult_t connect(void* handles[], int nranks, int rank, void* listenComm,
                              void** collComm) {
    if (collComm != nullptr) *collComm = nullptr;
    ncclResult_t res;
    if (handles == nullptr || collComm == nullptr) {
      res = refuse("connect", "handles or collComm is NULL");
    } else if (nranks < 1 || rank < 0 || rank >= nranks) {
      res = refuse("connect", "rank is not inside 0..nranks-1");
    } else {
      res = call("connect", [&](Impl& impl) {
        return impl.connect(handles, nranks, rank, listenComm, collComm);
      });
    }
    if (res == ncclSuccess) return res;
    if (collComm != nullptr) *collComm = nullptr;
    if (listenComm != nullptr) closeListen(listenComm);
    return res;
  }

  static ncclResult_t reduceSupport(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported) {
    if (supported == nullptr) return refuse("reduceSupport", "supported is NULL");
    return call("reduceSupport",
                [&](Impl& impl) { return impl.reduceSupport(dataType, redOp, supported); });
  }

  // ---- memory registration -----------------------------------------------
  // v6/v7: NCCL never passes 2 GiB or more (net_v6.cc ncclCollNet_regMr),
  // so a negative size is a broken caller.
  static ncclResult_t regMrInt(void* collComm, void* data, int size, int type, void** mhandle) {
    if (size < 0) return refuse("regMr", "size is negative");
    return regMr(collComm, data, static_cast<size_t>(size), type, mhandle);
  }
  static ncclResult_t regMr(void* collComm, void* data, size_t size, int type, void** mhandle) {
    if (mhandle == nullptr) return refuse("regMr", "mhandle is NULL");
    return call("regMr",
                [&](Impl& impl) { return impl.regMr(collComm, data, size, type, mhandle); });
  }
  static ncclResult_t regMrDmaBuf(void* collComm, void* data, size_t size, int type,
                                  uint64_t offset, int fd, void** mhandle) {
    if (mhandle == nullptr) return refuse("regMrDmaBuf", "mhandle is NULL");
    if constexpr (collnet::offersDmaBuf_v<Impl>) {  // else the slot is NULL
      return call("regMrDmaBuf", [&](Impl& impl) {
        return impl.regMrDmaBuf(collComm, data, size, type, offset, fd, mhandle);
      });
    }
    return ncclInternalError;
  }
  static ncclResult_t deregMr(void* collComm, void* mhandle) {
    return call("deregMr", [&](Impl& impl) { return impl.deregMr(collComm, mhandle); });
  }

  // ---- collectives -------------------------------------------------------
  // Success with *request NULL means "not now": NCCL calls again
  // (coll_net.cc posts again while the request stays NULL).
  static ncclResult_t iallreduceInt(void* collComm, void* sendData, void* recvData, int count,
                                    ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
                                    void* recvMhandle, void** request) {
    // NCCL never passes more than 2^30 (net_v6.cc ncclCollNet_iallreduce).
    if (count < 0) return refuse("iallreduce", "count is negative");
    return iallreduce(collComm, sendData, recvData, static_cast<size_t>(count), dataType, redOp,
                      sendMhandle, recvMhandle, request);
  }
  static ncclResult_t iallreduce(void* collComm, void* sendData, void* recvData, size_t count,
                                 ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,
                                 void* recvMhandle, void** request) {
    if (request == nullptr) return refuse("iallreduce", "request is NULL");
    *request = nullptr;
    return call("iallreduce", [&](Impl& impl) {
      return impl.iallreduce(collComm, sendData, recvData, count, dataType, redOp, sendMhandle,
                             recvMhandle, request);
    });
  }

  // Checks a part list of any version; NULL `why` when it is usable.
  template <class Sge>
  static const char* refuseParts(int nParts, const Sge* parts) {
    if (parts == nullptr) return "the part list is NULL";
    if (nParts < 1) return "the part count is below 1";
    if (!std::is_same_v<Sge, ncclNetSGE_v12_t> && nParts > kMaxCollNetParts) {
      return "the part count is above kMaxCollNetParts";
    }
    return nullptr;
  }
  // Another version's parts as v12 parts, in `out` (kMaxCollNetParts long).
  // The class sees them for the call only, as with NCCL's v8 adapter,
  // which passes a copy on its stack.
  template <class Sge>
  static void widenParts(int nParts, const Sge* parts, ncclNetSGE_v12_t* out) {
    for (int i = 0; i < nParts; i++) {
      out[i].mhandle = parts[i].mhandle;
      out[i].address = parts[i].address;
      out[i].size = static_cast<size_t>(parts[i].size);
    }
  }

  template <class Sge>
  static ncclResult_t iallgather(void* collComm, void* sendData, int nRecvParts, Sge* recvParts,
                                 size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                 void* sendMhandle, void** request) {
    if (request == nullptr) return refuse("iallgather", "request is NULL");
    *request = nullptr;
    if (const char* why = refuseParts(nRecvParts, recvParts)) return refuse("iallgather", why);
    auto run = [&](ncclNetSGE_v12_t* parts) {
      return call("iallgather", [&](Impl& impl) {
        return impl.iallgather(collComm, sendData, nRecvParts, parts, bytesPerRank, windowOffset,
                               windowBytes, sendMhandle, request);
      });
    };
    if constexpr (std::is_same_v<Sge, ncclNetSGE_v12_t>) {
      return run(recvParts);
    } else {
      ncclNetSGE_v12_t wide[kMaxCollNetParts];
      widenParts(nRecvParts, recvParts, wide);
      return run(wide);
    }
  }

  template <class Sge>
  static ncclResult_t ireducescatter(void* collComm, int nSendParts, Sge* sendParts, void* recvData,
                                     size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                     ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle,
                                     void** request) {
    if (request == nullptr) return refuse("ireducescatter", "request is NULL");
    *request = nullptr;
    if (const char* why = refuseParts(nSendParts, sendParts)) {
      return refuse("ireducescatter", why);
    }
    auto run = [&](ncclNetSGE_v12_t* parts) {
      return call("ireducescatter", [&](Impl& impl) {
        return impl.ireducescatter(collComm, nSendParts, parts, recvData, bytesPerRank,
                                   windowOffset, windowBytes, dataType, redOp, recvMhandle,
                                   request);
      });
    };
    if constexpr (std::is_same_v<Sge, ncclNetSGE_v12_t>) {
      return run(sendParts);
    } else {
      ncclNetSGE_v12_t wide[kMaxCollNetParts];
      widenParts(nSendParts, sendParts, wide);
      return run(wide);
    }
  }

  // *request NULL on success: nothing to flush (coll_net.cc
  // collNetRecvFlush then skips the test).
  // NCCL passes min(bytes, maxCollBytes) through this int (coll_net.cc
  // collNetRecvFlush), hence the cap on maxCollBytes in propertiesV12.
  static ncclResult_t iflush(void* collComm, void* data, int size, void* mhandle, void** request) {
    if (request == nullptr) return refuse("iflush", "request is NULL");
    *request = nullptr;
    if (size < 0) return refuse("iflush", "size is negative");
    return call("iflush",
                [&](Impl& impl) { return impl.iflush(collComm, data, size, mhandle, request); });
  }

  static ncclResult_t test(void* request, int* done, int* size) {
    if (done == nullptr) return refuse("test", "done is NULL");
    return call("test", [&](Impl& impl) { return impl.test(request, done, size); });
  }

  // ---- teardown ----------------------------------------------------------
  static ncclResult_t closeColl(void* collComm) {
    return call("closeColl", [&](Impl& impl) { return impl.closeColl(collComm); });
  }
  static ncclResult_t closeListen(void* listenComm) {
    return call("closeListen", [&](Impl& impl) { return impl.closeListen(listenComm); });
  }

  // ---- optional slots: NULL when the class lacks the member --------------
  static constexpr decltype(ncclCollNet_v12_t::regMrDmaBuf) regMrDmaBufSlot() {
    if constexpr (collnet::offersDmaBuf_v<Impl>) {
      return &CollNetExports::regMrDmaBuf;
    } else {
      return nullptr;
    }
  }
  template <class VProps>
  static constexpr ncclResult_t (*makeVDeviceSlot())(int*, VProps*) {
    if constexpr (collnet::offersMakeVDevice_v<Impl>) {
      return &CollNetExports::makeVDevice<VProps>;
    } else {
      return nullptr;
    }
  }
};

// The table of each version.
template <class Impl, int V>
struct CollNetTable;

// v6 and v7 differ only in their properties struct.
template <class Impl, class Table, class Props>
constexpr Table collNetTableV6() {
  using E = CollNetExports<Impl>;
  return {Impl::kName,
          E::initV6,
          E::devices,
          E::template properties<Props>,
          E::listenV6,
          E::connect,
          E::reduceSupport,
          E::regMrInt,
          E::regMrDmaBufSlot(),
          E::deregMr,
          E::iallreduceInt,
          E::iflush,
          E::test,
          E::closeColl,
          E::closeListen};
}
template <class Impl>
struct CollNetTable<Impl, 6> {
  static constexpr ncclCollNet_v6_t make() {
    return collNetTableV6<Impl, ncclCollNet_v6_t, ncclNetProperties_v6_t>();
  }
};
template <class Impl>
struct CollNetTable<Impl, 7> {
  static constexpr ncclCollNet_v7_t make() {
    return collNetTableV6<Impl, ncclCollNet_v7_t, ncclNetProperties_v7_t>();
  }
};

template <class Impl>
struct CollNetTable<Impl, 8> {
  static constexpr ncclCollNet_v8_t make() {
    using E = CollNetExports<Impl>;
    return {Impl::kName,
            E::initV6,
            E::devices,
            E::template properties<ncclNetProperties_v8_t>,
            E::listenV6,
            E::connect,
            E::reduceSupport,
            E::regMr,
            E::regMrDmaBufSlot(),
            E::deregMr,
            E::iallreduceInt,
            E::template iallgather<ncclNetSGE_v8_t>,
            E::template ireducescatter<ncclNetSGE_v8_t>,
            E::iflush,
            E::test,
            E::closeColl,
            E::closeListen};
  }
};

// v9 and v10 differ only in their properties, part and virtual-device
// structs.
template <class Impl, class Table, class Props, class Sge, class VProps>
constexpr Table collNetTableV9() {
  using E = CollNetExports<Impl>;
  return {Impl::kName,
          E::initV6,
          E::devices,
          E::template properties<Props>,
          E::listenV6,
          E::connect,
          E::reduceSupport,
          E::regMr,
          E::regMrDmaBufSlot(),
          E::deregMr,
          E::iallreduce,
          E::template iallgather<Sge>,
          E::template ireducescatter<Sge>,
          E::iflush,
          E::test,
          E::closeColl,
          E::closeListen,
          E::template makeVDeviceSlot<VProps>()};
}
template <class Impl>
struct CollNetTable<Impl, 9> {
  static constexpr ncclCollNet_v9_t make() {
    return collNetTableV9<Impl, ncclCollNet_v9_t, ncclNetProperties_v9_t, ncclNetSGE_v9_t,
                          ncclNetVDeviceProps_v9_t>();
  }
};
template <class Impl>
struct CollNetTable<Impl, 10> {
  static constexpr ncclCollNet_v10_t make() {
    return collNetTableV9<Impl, ncclCollNet_v10_t, ncclNetProperties_v10_t, ncclNetSGE_v10_t,
                          ncclNetVDeviceProps_v10_t>();
  }
};

// v11 and v12 differ only in their properties, part and virtual-device
// structs.
template <class Impl, class Table, class Props, class Sge, class VProps>
constexpr Table collNetTableV11() {
  using E = CollNetExports<Impl>;
  return {Impl::kName,
          E::initV11,
          E::devices,
          E::template properties<Props>,
          E::listenV11,
          E::connect,
          E::reduceSupport,
          E::regMr,
          E::regMrDmaBufSlot(),
          E::deregMr,
          E::iallreduce,
          E::template iallgather<Sge>,
          E::template ireducescatter<Sge>,
          E::iflush,
          E::test,
          E::closeColl,
          E::closeListen,
          E::template makeVDeviceSlot<VProps>(),
          E::finalize};
}
template <class Impl>
struct CollNetTable<Impl, 11> {
  static constexpr ncclCollNet_v11_t make() {
    return collNetTableV11<Impl, ncclCollNet_v11_t, ncclNetProperties_v11_t, ncclNetSGE_v11_t,
                           ncclNetVDeviceProps_v11_t>();
  }
};
template <class Impl>
struct CollNetTable<Impl, 12> {
  static constexpr ncclCollNet_v12_t make() {
    return collNetTableV11<Impl, ncclCollNet_v12_t, ncclNetProperties_v12_t, ncclNetSGE_v12_t,
                           ncclNetVDeviceProps_v12_t>();
  }
};

// A class that fails the contract gets empty tables: the contract's
// messages are then the only errors.
template <class Impl, int V>
constexpr auto collNetTableOf() {
  if constexpr (collnet::meetsContract_v<Impl>) {
    return CollNetTable<Impl, V>::make();
  } else {
    return decltype(CollNetTable<Impl, V>::make()){};
  }
}

}  // namespace ncclnet::detail

#pragma GCC visibility pop

// One table, ncclCollNetPlugin_v<N>: C linkage and default visibility,
// since NCCL finds it with dlsym in the net plugin's library.
#define NCCLNET_DETAIL_EXPORT_COLLNET_TABLE(Impl, N)  \
  extern "C" __attribute__((visibility("default")))   \
  const ncclCollNet_v##N##_t ncclCollNetPlugin_v##N = \
      ::ncclnet::detail::collNetTableOf<Impl, N>();
